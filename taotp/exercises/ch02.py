"""Checkers for chapter 2 (not written yet)."""
PUZZLES = []
