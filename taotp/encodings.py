"""(Not written yet.)"""
__all__ = []
