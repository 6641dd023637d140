"""Checkers for Chapter 11 (being written)."""

PUZZLES = []
