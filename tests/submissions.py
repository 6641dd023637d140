"""Submissions that every checker must survive: code that raises, code that never returns."""
import time


def raises(*args, **kwargs):
    raise RuntimeError('boom')


def loops(*args, **kwargs):
    while True:
        time.sleep(0.01)
