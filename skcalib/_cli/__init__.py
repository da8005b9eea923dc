"""The command line: ``skcalib`` (console script) and ``python -m skcalib``.

Subcommands:

* ``skcalib report FILE --target COL (--proba-cols ... | --mean-col M --std-col S)`` -- the
  calibration report (:func:`skcalib.calibration_report`) of predictions stored in a CSV or
  Parquet file, printed, and optionally saved as HTML (``--html``) and as a figure (``--plot``);
  see :mod:`skcalib._cli._report`.
* ``skcalib demo`` -- trains classifiers and probabilistic regressors on data sets that ship
  with scikit-learn, tests and recalibrates them, prints a short summary and writes the full
  reports, figures and predictions into a folder; see :mod:`skcalib._cli._demo`.

``skcalib`` without a subcommand prints the help (the demo takes a minute and writes files, so
it runs only when asked for). Exit status: 0 on success, 2 on a usage or data error, with the
message on standard error.
"""

import argparse
import os
import sys
import time

from ._io import CLIError

__all__ = ["main", "build_parser", "CLIError"]

DESCRIPTION = """\
Measure, test and repair the calibration of probabilistic models.

  skcalib demo                      a tour on bundled data sets (10-60 s; writes figures)
  skcalib report FILE --target ...  the calibration report of your own predictions

Run 'skcalib COMMAND --help' for the options of a command."""


def _parser_class():
    """``argparse.ArgumentParser`` that suggests the closest option or choice of a mistyped one
    ("Did you mean '--n-bins'?", by :func:`skcalib._validation.did_you_mean`, as the Python
    functions do for their options). Python 3.14's ``suggest_on_error`` does this for choices
    only, and skcalib supports 3.10."""
    from .._validation import did_you_mean

    class Parser(argparse.ArgumentParser):
        def _check_value(self, action, value):  # invalid choices (the subcommand's name)
            if action.choices is not None and isinstance(value, str) \
                    and value not in action.choices:
                hint = did_you_mean(value, list(action.choices))
                if hint:
                    choices = ", ".join(repr(c) for c in action.choices)
                    raise argparse.ArgumentError(
                        action, f"invalid choice: {value!r} (choose from {choices}).{hint}")
            return super()._check_value(action, value)

        def parse_args(self, args=None, namespace=None):  # unknown options
            namespace, extras = self.parse_known_args(args, namespace)
            if extras:
                parser = self
                command = getattr(namespace, "command", None)
                for action in self._actions:  # the subcommand's parser, whose options apply
                    if isinstance(action.choices, dict) and command in action.choices:
                        parser = action.choices[command]
                options = [o for a in parser._actions for o in a.option_strings]
                hints = "".join(did_you_mean(arg.split("=")[0], options)
                                for arg in extras if arg.startswith("-"))
                parser.error(f"unrecognized arguments: {' '.join(extras)}.{hints}")
            return namespace

    return Parser


class Progress:
    """Progress messages on standard error, with the time since the start.

    Parameters
    ----------
    command : str
        The subcommand, prefixed to messages.
    verbose : bool
        Print the messages of long steps; without it only those passed with ``always=True``.

    Examples
    --------
    >>> Progress("demo", verbose=False)("fitting")  # prints nothing
    """

    def __init__(self, command, verbose):
        self.command = command
        self.verbose = verbose
        self.start = time.perf_counter()

    def __call__(self, message, *, always=False):
        if always and not self.verbose:
            print(message, file=sys.stderr)
        elif self.verbose:
            print(f"[{time.perf_counter() - self.start:6.1f} s] {message}", file=sys.stderr)
        sys.stderr.flush()


def build_parser():
    """The argument parser of ``skcalib``, with its ``report`` and ``demo`` subcommands.

    Returns
    -------
    parser : argparse.ArgumentParser

    Examples
    --------
    >>> build_parser().prog
    'skcalib'
    """
    from .. import __version__
    from . import _demo, _report

    parser = _parser_class()(
        prog="skcalib", description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"skcalib {__version__}")
    common = _parser_class()(add_help=False)
    common.add_argument("--verbose", "-v", action="store_true",
                        help="show the progress of long steps on standard error")
    common.add_argument("--version", action="version", version=f"skcalib {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _report.add_parser(sub, parents=[common])
    _demo.add_parser(sub, parents=[common])
    return parser


def main(argv=None):
    """Run the command line with the arguments ``argv`` and return the exit status.

    Parameters
    ----------
    argv : list of str, default=None
        The arguments after the program name; None reads ``sys.argv[1:]``.

    Returns
    -------
    status : int
        0 on success (and for ``--help`` and ``--version``), 2 on a usage or data error (the
        message is printed on standard error), 1 when standard output was closed early (a
        pipe into ``head``).

    Examples
    --------
    >>> main(["--version"])  # doctest: +ELLIPSIS
    skcalib ...
    0
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a usage error (argparse prints it)
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    if args.command is None:
        parser.print_help()
        return 0
    if args.command == "demo" or any(getattr(args, o, None) is not None
                                     for o in ("plot", "html")):
        _use_agg_backend()
    progress = Progress(args.command, args.verbose)
    try:
        return args.run(args, progress)
    except CLIError as exc:
        print(f"skcalib {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the output was piped into a command that stopped reading (head)
        _silence_stdout()
        return 1


def _silence_stdout():
    """Point standard output at /dev/null, so that Python's final flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # not a real file (e.g. captured in tests)
        pass


def _use_agg_backend():
    """Draw off screen (figures are only saved), unless pyplot was already set up."""
    if "matplotlib.pyplot" in sys.modules:
        return
    try:
        import matplotlib
    except ImportError:
        return
    matplotlib.use("Agg")
