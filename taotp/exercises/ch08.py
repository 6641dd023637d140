"""Checkers for chapter 8 (not written yet)."""
PUZZLES = []
