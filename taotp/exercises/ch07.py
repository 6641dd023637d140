"""Checkers for chapter 7 (not written yet)."""
PUZZLES = []
