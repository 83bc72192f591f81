"""Command-line plumbing shared by the scripts: one-line errors with exit code 2.

Bad input is the user's problem to fix, not a crash: scripts raise `UsageError`, the library
ValueError or FileNotFoundError, with a message that names the flag (the library: its setting,
`albert_tf.error_text.NamesSettings`, worded here as the flag), file or field and what was
expected, and `run_main` turns it into one line on stderr and exit status 2 (no traceback).
SIGTERM unwinds the same way (`Terminated`: partial outputs removed on the way out), one line and
exit status 143; so does Ctrl-C (KeyboardInterrupt), exit status 130. Library modules never import this one.
"""

import _thread
import contextlib
import errno
import functools
import math
import os
import signal
import sys
import time

from absl import app

from albert_cli.bundled import resolve_command_line
from albert_cli.plain_output import plain_output
from albert_tf.error_text import NamesSettings, error_line
from albert_tf.sigterm import on_sigterm
from albert_tf.tasks import output_dirs, run_setup
from albert_tf.tasks.config_error import ConfigError

# Exit status after a SIGTERM (128 + 15, what the signal itself gives): stopped, nothing half-written.
TERMINATED_EXIT_CODE = 143
INTERRUPTED_EXIT_CODE = 130  # 128 + SIGINT


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


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that the `finally` blocks on the way out remove partial
    outputs (a BaseException, as KeyboardInterrupt: `except Exception` does not swallow it)."""


# Set once a SIGTERM arrived: raised inside TensorFlow's C++ callbacks (a graph being traced),
# `Terminated` can come out as another error (SystemError, ValueError); it is still the stop.
_SIGTERM_RECEIVED = []


def _raise_terminated(signum, frame):
    del frame
    _SIGTERM_RECEIVED.append(signum)
    raise Terminated()


def _sigterm_soon():
    time.sleep(0.05)
    os.kill(os.getpid(), signal.SIGTERM)


@contextlib.contextmanager
def _stops_not_swallowed():
    """A `Terminated` raised where Python ignores errors (a garbage-collector callback, such as
    JAX's, or a `__del__`) would be lost and the command would run to its end: the SIGTERM is
    sent again from another thread a moment later (sent from the hook, it would be raised inside
    the hook and ignored again; ignored again, it is sent again), and stops the command at its
    next step."""
    previous = sys.unraisablehook

    def hook(unraisable):
        if isinstance(unraisable.exc_value, Terminated):
            # The low-level start: `threading.Thread.start` waits, and the stop would land there.
            _thread.start_new_thread(_sigterm_soon, ())
        else:
            previous(unraisable)

    sys.unraisablehook = hook
    try:
        yield
    finally:
        sys.unraisablehook = previous


def flag_text(error):
    """`error`'s message, the library settings it names (`NamesSettings`) worded as flags (`--name`)."""
    return error.worded(lambda name: f"--{name}") if isinstance(error, NamesSettings) else str(error)


def exit_with_usage_error(error):
    """Prints `error` as one line on stderr (settings worded as flags) and exits with status 2."""
    message = " ".join(flag_text(error).split())
    sys.stderr.write(f"error: {message}\n")
    sys.stderr.flush()
    sys.exit(2)


@plain_output()
def run_main(main, argv=None, help_module=None):
    """Runs an absl `main(argv)`; a `UsageError` or a bad flag becomes one line and exit code 2.

    `help_module`: the module that defines the command's flags, when it is not `__main__` (an
    installed console script or a thin wrapper): `--help` then shows its docstring and flags.
    """
    if help_module is not None:
        _show_in_help(sys.modules[help_module])

    def guarded(args):
        try:
            require_trainable_backend()
            return main(args)
        except Terminated:
            exit_terminated()
        except KeyboardInterrupt:
            exit_interrupted()
        except (UsageError, ValueError, FileNotFoundError) as error:
            if _SIGTERM_RECEIVED:
                exit_terminated()
            # The library's bad-input errors name the setting (by its flag) and what was expected.
            exit_with_usage_error(error)
        except Exception as error:  # pylint: disable=broad-except
            if _SIGTERM_RECEIVED:
                exit_terminated()
            if not is_disk_full(error):
                raise
            exit_with_usage_error(disk_full_message(error))

    # SIGTERM (a stop, a preemption) unwinds like an error: partial outputs are removed, one line.
    # absl would print its whole usage text for a bad flag; one line names the flag instead.
    try:
        with on_sigterm(_raise_terminated), _stops_not_swallowed():
            app.run(guarded, argv=argv, flags_parser=_parse_flags_or_usage_error)
    except UsageError as error:
        exit_with_usage_error(error)
    except Terminated:
        exit_terminated()
    except KeyboardInterrupt:
        exit_interrupted()


# The Keras backends the commands train and evaluate on (Keras' others, numpy and openvino, infer only).
KERAS_BACKENDS = ("tensorflow", "jax", "torch")


def require_trainable_backend():
    """`KERAS_BACKEND`, when set, names a backend the commands run on: a UsageError before Keras
    loads, rather than Keras' traceback."""
    name = os.environ.get("KERAS_BACKEND")
    require(name in (None, *KERAS_BACKENDS),
            f"KERAS_BACKEND={name}: expected one of {', '.join(KERAS_BACKENDS)} (docs/backends.md)")


def exit_terminated():
    """One line for a SIGTERM stop, exit status 143."""
    _exit_stopped("SIGTERM", TERMINATED_EXIT_CODE)


def exit_interrupted():
    """One line for Ctrl-C (SIGINT, which Python raises as KeyboardInterrupt), exit status 130."""
    _exit_stopped("Ctrl-C (SIGINT)", INTERRUPTED_EXIT_CODE)


def _exit_stopped(cause, code):
    sys.stderr.write(f"stopped by {cause}; no partial output was kept; run the same command again\n")
    sys.stderr.flush()
    sys.exit(code)


_DISK_FULL_ERRNOS = (errno.ENOSPC, errno.EDQUOT)


def is_disk_full(error):
    """An OSError (or a TensorFlow error, which carries only text) for a full disk or quota."""
    if isinstance(error, OSError) and error.errno in _DISK_FULL_ERRNOS:
        return True
    return any(os.strerror(code) in str(error) for code in _DISK_FULL_ERRNOS)


def disk_full_message(error):
    """"no space left on device writing X": the file when the error names it."""
    target = getattr(error, "filename", None)
    detail = f"writing {target}" if target else f"({error_line(error)})"
    return f"no space left on device {detail}; free some space and run the same command again"


def _show_in_help(module):
    from absl import flags  # pylint: disable=g-import-not-at-top

    sys.modules["__main__"].__doc__ = module.__doc__
    for flag in flags.FLAGS.get_key_flags_for_module(module.__name__):
        flags.FLAGS.register_key_flag_for_module(sys.argv[0], flag)


def _parse_flags_or_usage_error(argv):
    from absl import flags  # pylint: disable=g-import-not-at-top

    try:
        return flags.FLAGS([argv[0], *resolve_command_line(argv[1:])])
    except (flags.Error, ValueError) as error:
        raise UsageError(str(error)) from None
    except SystemExit as stop:
        # absl's --help, --helpfull and --helpshort print the usage, then exit with status 1:
        # asking for help is no error.
        if stop.code == 1:
            sys.exit(0)
        raise


def require(condition, message):
    """Raises `UsageError(message)` unless `condition` holds."""
    if not condition:
        raise UsageError(message)


@contextlib.contextmanager
def flag_checked(flag, advice=""):
    """A library check of `--flag`'s value in the block: its ValueError becomes the UsageError
    `--flag: <error><advice>`."""
    try:
        yield
    except ValueError as error:
        raise UsageError(f"--{flag}: {error}{advice}") from None


def require_positive_finite(flag, value):
    """`--flag` must be a finite number > 0 (`--learning_rate=inf` or `nan` would train nothing)."""
    require(math.isfinite(value) and value > 0, f"--{flag} must be a finite number > 0, got {value}")


def usage_errors(check):
    """The library's `check` for a command: its ConfigError raised as the UsageError naming the flag."""

    @functools.wraps(check)
    def checked(*args, **kwargs):
        try:
            return check(*args, **kwargs)
        except ConfigError as error:
            raise UsageError(flag_text(error)) from None

    return checked


# The library's run checks (`albert_tf.tasks`), each on a command's flags.
require_output_dir = usage_errors(output_dirs.require_output_dir)
settle_kernels = usage_errors(run_setup.settle_kernels)
require_recompute_trainable = usage_errors(run_setup.require_recompute_trainable)


def load_init_checkpoint(model, path, extend_positions=None):
    """`albert_tf.tasks.model_inputs.load_init_checkpoint` for a command (TensorFlow: only when used)."""
    from albert_tf.tasks.model_inputs import load_init_checkpoint as load  # pylint: disable=g-import-not-at-top

    return usage_errors(load)(model, path, extend_positions)
