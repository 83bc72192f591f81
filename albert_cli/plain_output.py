"""How every command prints: INFO log lines plain, and a closed pipe ends it quietly.

absl starts each log line with severity, date, time, thread and file:line
(`I1127 06:30:07.828600 139739166374784 __init__.py:56] --kernels=auto: ...`), which reads as
trouble among the plain progress lines; INFO lines print as plain lines (absl's own
`--showprefixforinfo` shows the prefix again), warnings and errors keep it. When the reader of
stdout stops early (`run_classifier.py --help | head -3`), the command ends without a
BrokenPipeError traceback, with the status a SIGPIPE would give it. (SIGPIPE itself stays
ignored: left at its default it would also kill a run on a closed network socket.)
"""

import contextlib
import os
import signal
import sys

import absl.logging  # noqa: F401  (defines --showprefixforinfo)
from absl import flags

CLOSED_PIPE_EXIT_CODE = 128 + signal.SIGPIPE


@contextlib.contextmanager
def plain_output():
    """Around a command's whole run (also a decorator)."""
    flags.FLAGS.set_default("showprefixforinfo", False)
    try:
        try:
            yield
        finally:
            sys.stdout.flush()  # here, where a closed pipe can be caught, not at interpreter exit
    except BrokenPipeError:
        # Python flushes stdout again as it exits: into /dev/null, not the closed pipe.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(CLOSED_PIPE_EXIT_CODE)
