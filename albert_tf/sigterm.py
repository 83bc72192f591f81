"""SIGTERM's handler is set, and given back, here and nowhere else.

What a SIGTERM does depends on what the process is doing, so each place says it through
`on_sigterm`: a command unwinds (`albert_cli.cli.run_main`: partial outputs removed, exit 143),
pretraining saves and stops at the next loop boundary (`pretraining.preemption.StopRequest`),
an evaluation between checkpoints ends at once (`albert_cli.pretrain`), and outputs that belong
together are renamed into place as one (`sigterm_deferred`, used by `io_utils.atomic_outputs`).
"""

import contextlib
import signal
import threading


@contextlib.contextmanager
def on_sigterm(handler):
    """`handler(signum, frame)` runs for a SIGTERM during the block; the previous handler is back
    after it. Python runs signal handlers in the main thread only: elsewhere the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def sigterm_deferred():
    """A SIGTERM that arrives during the block takes effect when it ends (main thread only)."""
    received = []
    try:
        with on_sigterm(lambda signum, frame: received.append(signum)):
            yield
    finally:
        if received:
            signal.raise_signal(signal.SIGTERM)
