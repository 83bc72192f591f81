"""One run per output directory: a second run on the same `output_dir` is refused, naming the first.

Two runs in one directory would log every step twice in metrics.jsonl and overwrite each other's
checkpoints. The lock is `fcntl.flock` on `<output_dir>/.run.lock`, held for the life of the
process: the kernel drops it when the holder exits or dies (kill -9 included), so a lock file
left by a dead run is simply taken over. The file names the holder (pid, host, start time) for the
refusal. Local disks only: on NFS, Linux maps flock to NFS locks (which need the lock service, or
the lock is refused as unsupported and the run goes on with a warning); gs:// and other object
stores have no locks, and their output directories are not checked (docs/pretraining.md).
"""

import datetime
import errno
import fcntl
import json
import os
import socket
import stat
import sys

from absl import logging

from albert_tf.error_text import SettingError
from albert_tf.tasks.config_error import ConfigError
from albert_tf.json_text import parse_json

LOCK_FILE = ".run.lock"
_held = {}  # real path of the directory -> its open, locked file, for the life of the process


def lock_output_dir(field, path, warn=lambda warning: logging.warning("%s", warning)):
    """Locks the existing directory `path` (the setting `field`) for this process, or raises a
    ConfigError naming the holder; where the filesystem has no locks, `warn(SettingError)` says so."""
    if "://" in path or os.path.realpath(path) in _held:
        return
    lock_path = os.path.join(path, LOCK_FILE)
    handle = _open_lock_file(field, lock_path)
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        if error.errno not in (errno.EAGAIN, errno.EACCES):  # ENOLCK, EOPNOTSUPP: no locks on this filesystem
            warn(SettingError("{%s} {path} cannot be locked ({reason}); make sure no other run writes there" % field,
                              path=path, reason=error.strerror))
            handle.close()
            return
        handle.seek(0)
        holder = describe_holder(handle.read())
        handle.close()
        raise ConfigError(field, None, "{%s} {path} is in use by another run ({holder}); wait for it to end or give "
                          "another {%s}" % (field, field), path=path, holder=holder) from None
    handle.seek(0)
    handle.truncate()
    handle.write(json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                             "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
                             "command": " ".join(sys.argv)}) + "\n")
    handle.flush()
    _held[os.path.realpath(path)] = handle


def unlock_output_dir(path):
    """Releases the lock of `path` this process holds (before the directory is removed)."""
    handle = _held.pop(os.path.realpath(path), None)
    if handle is not None:
        handle.close()


def _open_lock_file(field, lock_path):
    """The lock file, opened for update; never through a link: the lock is rewritten, and a link
    would carry that write to the file it names."""
    try:
        descriptor = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise ConfigError(field, f"{lock_path} is a symbolic link; expected the run lock file or nothing "
                              "(remove the link)") from None
        raise ConfigError(field, f"cannot write {lock_path} ({error.strerror or error})") from None
    status = os.fstat(descriptor)
    if not stat.S_ISREG(status.st_mode) or status.st_nlink > 1:
        os.close(descriptor)
        kind = "a hard link to another file" if stat.S_ISREG(status.st_mode) else "not a regular file"
        raise ConfigError(field, f"{lock_path} is {kind}; expected the run lock file or nothing (remove it)")
    return os.fdopen(descriptor, "a+", encoding="utf-8")


def describe_holder(text):
    """"pid 123 on host h since 2026-01-01T10:00:00+00:00" from a lock file's content."""
    try:
        holder = parse_json(text)
        return f"pid {holder['pid']} on host {holder['host']} since {holder['started']}"
    except (ValueError, TypeError, KeyError):
        return "a process that has not yet written its name"
