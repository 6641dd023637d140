"""Checkers for chapter 5 (not written yet)."""
PUZZLES = []
