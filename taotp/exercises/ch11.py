"""Chapter 11 (Trained vs Constructed) has no puzzles, on purpose: its experiments are
re-run with ``python -m taotp.trained`` (see ``taotp.chapters``, which says why)."""

PUZZLES = []
