"""Checkers for chapter 9 (not written yet)."""
PUZZLES = []
