"""A dependency-free progress line for long work: count, rate and ETA, on stderr.

Ours rather than tqdm's: in logs (CI, nohup, Kubernetes) it prints whole lines, where tqdm
writes carriage returns into the file, and it adds task-specific numbers after the ETA.
On a terminal the line is rewritten in place; a log record (absl, logging) or another progress
line first ends it, so nothing is glued onto it.
"""

import contextlib
import logging
import sys
import threading
import time

_open_line = []  # the Progress whose line is open on a terminal (at most one)

# For work that goes on for minutes or hours, one step quickly after another (training, evaluation):
# a line after the first update (past the tracing) and then one every 30 s, not hundreds in a log.
LONG_WORK_INTERVAL = 30.0


def end_open_line():
    """Ends the progress line left open on a terminal, if any (before other output)."""
    if _open_line:
        _open_line[0].end_line()


class _EndOpenLine(logging.Filter):
    """A handler filter that ends an open progress line before the record is written."""

    def filter(self, record):
        end_open_line()
        return True


_END_OPEN_LINE = _EndOpenLine()


def _end_open_line_before_logs():
    for handler in logging.getLogger().handlers:
        if _END_OPEN_LINE not in handler.filters:
            handler.addFilter(_END_OPEN_LINE)


def format_duration(seconds):
    seconds = int(max(0, seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes:02d}:{seconds:02d}"


class Progress:
    """Prints `label: done/total unit (rate unit/s, ETA)` at most every `interval` seconds.

    On a terminal the line is rewritten in place; in logs (CI, nohup) a new line is printed.
    `extra` carries task-specific numbers (for example `instances=...`).
    """

    def __init__(self, label, total=None, unit="it", interval=1.0, stream=None):
        self.label = label
        self.total = total
        self.unit = unit
        self.interval = interval
        self.stream = stream or sys.stderr
        self.done = 0
        self.start = time.monotonic()
        self._last_print = None  # the first update prints (monotonic's zero is arbitrary)
        self._printed_done = None
        self._line_open = False
        self._tty = hasattr(self.stream, "isatty") and self.stream.isatty()

    def update(self, count=1, extra="", force=False):
        self.done += count
        now = time.monotonic()
        if force or self._last_print is None or now - self._last_print >= self.interval:
            self._last_print = now
            self._print(self.line(extra), final=False)

    def line(self, extra=""):
        elapsed = max(time.monotonic() - self.start, 1e-9)
        rate = self.done / elapsed
        parts = [f"{self.label}: {self.done}" + (f"/{self.total}" if self.total else "") + f" {self.unit}"]
        parts.append(f"{rate:.1f} {self.unit}/s")
        if self.total and rate > 0:
            parts.append(f"ETA {format_duration((self.total - self.done) / rate)}")
        parts.append(f"elapsed {format_duration(elapsed)}")
        if extra:
            parts.append(extra)
        return ", ".join(parts)

    def close(self, extra=""):
        """Prints the final line, unless the last line printed already had the final count."""
        if self._printed_done != self.done:
            self._print(self.line(extra), final=True)
        else:
            self.end_line()

    def end_line(self):
        """Ends this progress line if it is open on a terminal (the next update starts a new one)."""
        if self._line_open:
            self.stream.write("\n")
            self.stream.flush()
            self._line_open = False
            _open_line.clear()

    def _print(self, text, final):
        self._printed_done = self.done
        if self._tty:
            if not (_open_line and _open_line[0] is self):
                end_open_line()
            self.stream.write("\r" + text + ("\n" if final else ""))
            self._line_open = not final
            _open_line[:] = [self] if self._line_open else []
            _end_open_line_before_logs()
        else:
            end_open_line()
            self.stream.write(text + "\n")
        self.stream.flush()


@contextlib.contextmanager
def working(label, interval=10.0, stream=None):
    """For work that cannot be counted (one long library call, e.g. writing a SavedModel): a line
    when it starts, one every `interval` seconds with the time so far, and one when it ends."""
    stream = stream or sys.stderr
    start = time.monotonic()
    stopped = threading.Event()

    def say(text):
        end_open_line()
        stream.write(f"{label}: {text}, elapsed {format_duration(time.monotonic() - start)}\n")
        stream.flush()

    def beat():
        while not stopped.wait(interval):
            say("working")

    say("started")
    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stopped.set()
        thread.join()
    say("done")
