"""Entry point of ``python -m skcalib`` and of the ``skcalib`` console script.

The command line itself lives in :mod:`skcalib._cli` (``skcalib report``, ``skcalib demo``);
this module only forwards to it.
"""

import sys

from ._cli import main

__all__ = ["main"]

if __name__ == "__main__":  # pragma: no cover - exercised by a subprocess test
    sys.exit(main())
