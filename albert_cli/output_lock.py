"""The library's run lock (`albert_tf.tasks.output_lock`) for a command: a refusal is the UsageError
naming the flag, a filesystem without locks a warning line on stderr."""

import sys

from albert_cli.cli import flag_text, usage_errors
from albert_tf.tasks import output_lock


def warn_on_stderr(warning):
    """A library warning (a `NamesSettings`) as the command's one line on stderr, its settings as flags."""
    sys.stderr.write(f"warning: {flag_text(warning)}\n")


def lock_output_dir(flag, path):
    """Locks `--flag`'s directory `path` for this process (`output_lock.lock_output_dir`)."""
    usage_errors(output_lock.lock_output_dir)(flag, path, warn_on_stderr)
