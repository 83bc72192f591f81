"""Atomic file output: nothing half-written ever carries a final name.

Works for local paths and for the remote filesystems `tf.io.gfile` knows (gs://, hdfs://).
"""

import contextlib
import os
import uuid

import tensorflow as tf


def temporary_name(path):
    """A sibling name for `path` that readers and globs of the final name never match."""
    directory, base = os.path.split(path)
    return os.path.join(directory, f".{base}.tmp-{uuid.uuid4().hex[:8]}")


@contextlib.contextmanager
def atomic_output(path):
    """Yields a temporary path to write to; renames it to `path` only if the block succeeds."""
    tmp = temporary_name(path)
    try:
        yield tmp
        tf.io.gfile.rename(tmp, path, overwrite=True)
    finally:
        if tf.io.gfile.exists(tmp):
            tf.io.gfile.remove(tmp)


@contextlib.contextmanager
def atomic_open(path, mode="w"):
    """Like `open(path, mode)`, but the file appears under `path` only once fully written."""
    with atomic_output(path) as tmp:
        with tf.io.gfile.GFile(tmp, mode) as handle:
            yield handle
