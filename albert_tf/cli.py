"""Command-line plumbing shared by the scripts: one-line errors with exit code 2.

Bad input is the user's problem to fix, not a crash: scripts raise `UsageError` with a message
that names the flag, file or field and what was expected, and `run_main` turns it into one line
on stderr and exit status 2 (no traceback).
"""

import os
import sys

from absl import app


def prefer_onednn():
    """Asks TensorFlow for its oneDNN CPU kernels unless the user chose (TF_ENABLE_ONEDNN_OPTS).

    TF turns them on by default only on CPUs with AVX-512 VNNI/BF16 or AMX; on AVX2-only CPUs they
    still make this model's matmuls 1.3-1.6x faster and its training step 1.16x
    (docs/benchmarks.md). TF reads the variable once, when it is first imported: the scripts
    call this before they import TensorFlow. The library itself never sets it.
    """
    os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "1")


class UsageError(Exception):
    """Bad input from the user (flag, file or field): reported as one line, exit status 2."""


def exit_with_usage_error(error):
    """Prints `error` as one line on stderr and exits with status 2."""
    message = " ".join(str(error).split())
    sys.stderr.write(f"error: {message}\n")
    sys.stderr.flush()
    sys.exit(2)


def run_main(main, argv=None):
    """Runs an absl `main(argv)`; a `UsageError` or a bad flag becomes one line and exit code 2."""

    def guarded(args):
        try:
            return main(args)
        except UsageError as error:
            exit_with_usage_error(error)

    # absl would print its whole usage text for a bad flag; one line names the flag instead.
    try:
        app.run(guarded, argv=argv, flags_parser=_parse_flags_or_usage_error)
    except UsageError as error:
        exit_with_usage_error(error)


def _parse_flags_or_usage_error(argv):
    from absl import flags  # pylint: disable=g-import-not-at-top

    try:
        return flags.FLAGS(argv)
    except flags.Error as error:
        raise UsageError(str(error)) from None


def require(condition, message):
    """Raises `UsageError(message)` unless `condition` holds."""
    if not condition:
        raise UsageError(message)
