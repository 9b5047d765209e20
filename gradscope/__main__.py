"""``python -m gradscope ...`` is the ``gradscope`` command (see :mod:`gradscope.cli`)."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
