"""``python -m taotp run|info PROGRAM``: the command line of Chapter 8 (``taotp.interpreter.cli``)."""
import sys

from .interpreter.cli import main

if __name__ == '__main__':
    sys.exit(main())
