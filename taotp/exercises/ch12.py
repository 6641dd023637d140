"""Checkers for Chapter 12 (being written)."""

PUZZLES = []
