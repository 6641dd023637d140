"""Checkers for chapter 10 (not written yet)."""
PUZZLES = []
