"""Checkers for chapter 4 (not written yet)."""
PUZZLES = []
