"""What a killed export leaves, recognised and removed by the next export into the same directory.

An export writes a journal before its outputs: a hidden `.export-<pid>-<hex>.journal` beside
them, naming its process, its hidden temporaries (files, or a SavedModel's folder) and the final
files it publishes with their sizes; it removes the journal once all are published. A journal
still there whose process (on this host) is gone is a dead export's: its temporaries are removed,
and so are its published files unless all of them are there whole (a kill after the last
publish), since a set that is half there is no model anyone asked for. Journals of live
processes, or of other hosts, are left alone.
"""

import contextlib
import json
import os
import shutil
import socket
import uuid

from absl import logging

_PREFIX, _SUFFIX = ".export-", ".journal"


@contextlib.contextmanager
def journal(directory):
    """Yields `record(temporaries, finals, sizes)`, which journals the export of `temporaries` to
    `finals` (paths in `directory`, each of `sizes` bytes); the journal is removed when the block
    ends, whatever the outcome (a failure or SIGTERM cleans up after itself: only a kill leaves it).
    Enter it before the block that publishes, so that it covers the renames."""
    path = os.path.join(directory, f"{_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}{_SUFFIX}")
    written = []

    def record(temporaries, finals, sizes):
        if "://" in directory:  # object stores publish each file in one step: nothing to leave
            return
        with open(path, "x", encoding="utf-8") as handle:
            json.dump({"host": socket.gethostname(), "pid": os.getpid(), "temporaries": list(temporaries),
                       "finals": list(finals), "sizes": list(sizes)}, handle)
        written.append(path)

    try:
        yield record
    finally:
        for journal_path in written:
            with contextlib.suppress(OSError):
                os.remove(journal_path)


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def clean_dead_exports(directory):
    """Removes what exports killed while writing into `directory` (local) left; returns the paths
    removed (logged as a warning)."""
    if "://" in directory or not os.path.isdir(directory):
        return []
    removed = []
    for name in sorted(os.listdir(directory)):
        if not (name.startswith(_PREFIX) and name.endswith(_SUFFIX)):
            continue
        journal_file = os.path.join(directory, name)
        try:
            with open(journal_file, encoding="utf-8") as handle:
                record = json.load(handle)
            host, pid = record["host"], int(record["pid"])
            temporaries, finals, sizes = record["temporaries"], record["finals"], record["sizes"]
        except (OSError, ValueError, KeyError, TypeError):
            continue  # not a journal this code wrote: left alone
        if host != socket.gethostname() or _alive(pid):
            continue
        whole = all(os.path.isfile(path) and os.path.getsize(path) == size for path, size in zip(finals, sizes))
        for path in temporaries + ([] if whole else finals):
            inside = os.path.dirname(os.path.abspath(path)) == os.path.abspath(directory)  # never elsewhere
            if not inside or not os.path.lexists(path):
                continue
            if path in temporaries and os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path)
            elif not os.path.isdir(path):
                os.remove(path)
            else:
                continue
            removed.append(path)
        os.remove(journal_file)
    if removed:
        logging.warning("removed what a killed export left in %s: %s", directory, ", ".join(removed))
    return removed
