"""Checkers for chapter 3 (not written yet)."""
PUZZLES = []
