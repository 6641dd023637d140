"""Checkers for chapter 6 (not written yet)."""
PUZZLES = []
