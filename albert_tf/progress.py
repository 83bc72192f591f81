"""A dependency-free progress line for long work: count, rate and ETA, on stderr.

Ours rather than tqdm's: in logs (CI, nohup, Kubernetes) it prints whole lines, where tqdm
writes carriage returns into the file, and it adds task-specific numbers after the ETA.
"""

import sys
import time


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
        self._last_print = 0.0
        self._printed_done = None
        self._tty = hasattr(self.stream, "isatty") and self.stream.isatty()

    def update(self, count=1, extra="", force=False):
        self.done += count
        now = time.monotonic()
        if force or now - self._last_print >= self.interval:
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
        elif self._tty:
            self.stream.write("\n")

    def _print(self, text, final):
        self._printed_done = self.done
        if self._tty:
            self.stream.write("\r" + text + ("\n" if final else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
