"""Atomic file output: nothing half-written ever carries a final name.

Local paths use the standard library; remote paths (gs://, hdfs://) go through `tf.io.gfile`,
imported only then, so light processes (the data builder's workers) never pay for TensorFlow.
"""

import contextlib
import errno
import json
import os
import shutil
import stat
import uuid

from albert_tf.sigterm import sigterm_deferred


def temporary_name(path):
    """A hidden sibling name for `path` (`.<name>.tmp-<hex>`) that globs of final names never match."""
    directory, base = os.path.split(path)
    return os.path.join(directory, f".{base}.tmp-{uuid.uuid4().hex[:8]}")


def special_file_kind(path):
    """"a FIFO", "a socket" or "a device" when the local `path` is one, else None (a regular file, a
    directory, nothing, a remote path). Readers refuse them: a read of a FIFO waits for a writer for
    ever, and a device's may never end."""
    if is_remote(path):
        return None
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return None


def refuse_overwriting_inputs(outputs, inputs):
    """Raises ValueError if an output path is an input (the same file by any name, link or hard
    link): no tool replaces what it reads. `outputs`, `inputs`: (flag, path) pairs."""
    for output_flag, output in outputs:
        for input_flag, source in inputs:
            if same_file(output, source):
                raise ValueError(f"{output_flag}: {output!r} is also an input ({input_flag} {source!r}); "
                                 "refusing to overwrite it")


def same_file(first, second):
    """Whether two paths name one file (by any name, link or hard link)."""
    if is_remote(first) or is_remote(second):
        return first == second
    if os.path.realpath(first) == os.path.realpath(second):
        return True
    try:
        return os.path.samefile(first, second)
    except OSError:  # one of them does not exist (yet)
        return False


def _gfile():
    import tensorflow as tf  # pylint: disable=g-import-not-at-top

    return tf.io.gfile


def is_remote(path):
    """Whether `path` is on a filesystem only `tf.io.gfile` reaches (gs://, hdfs://)."""
    return "://" in path


def exists(path):
    return _gfile().exists(path) if is_remote(path) else os.path.exists(path)


def isdir(path):
    return _gfile().isdir(path) if is_remote(path) else os.path.isdir(path)


def read_text(path):
    """The text of the file at `path`, local or remote."""
    if is_remote(path):
        with _gfile().GFile(path, "r") as handle:
            return handle.read()
    with open(path, encoding="utf-8") as handle:
        return handle.read()


@contextlib.contextmanager
def atomic_output(path):
    """Yields a temporary path to write to (a file or a directory); renames it to `path` only if
    the block succeeds, and removes it otherwise, so the error that stopped the block is the
    one that propagates (a full disk stays "No space left on device")."""
    with atomic_outputs([path]) as (tmp,):
        yield tmp


@contextlib.contextmanager
def atomic_outputs(paths, replace=True):
    """`atomic_output` for outputs that belong together (an encoder and its preprocessing): once
    the block succeeds all are renamed into place, SIGTERM held back meanwhile; a rename that
    fails (the name was taken meanwhile) undoes the others, so all appear or none. With
    `replace=False` a file never replaces one of its name, even one made while the block ran
    (FileExistsError); a directory never replaces a non-empty one either way."""
    temporaries = [temporary_name(path) for path in paths]
    try:
        yield temporaries
        with sigterm_deferred():
            _rename_all(temporaries, paths, replace)
    finally:
        for tmp in temporaries:
            remove_quietly(tmp, is_remote(tmp))


def _rename_all(sources, destinations, replace):
    placed = []
    try:
        for source, destination in zip(sources, destinations):
            if is_remote(destination):
                _gfile().rename(source, destination, overwrite=replace)
            elif replace or os.path.isdir(source):
                os.replace(source, destination)  # a directory onto a non-empty one fails: never merged
            else:
                _place_new(source, destination)
            placed.append(destination)
    except BaseException:
        for destination in placed:
            remove_quietly(destination, is_remote(destination))
        raise


@contextlib.contextmanager
def removed_on_failure(paths):
    """Removes `paths` (what a command has already written) if the block fails or is stopped, so
    that a command's outputs stay all or none (LiteRT files and the SavedModel after them)."""
    try:
        yield
    except BaseException:
        with sigterm_deferred():  # a second SIGTERM does not stop the removal halfway
            for path in paths:
                remove_quietly(path, is_remote(path))
        raise


# What os.link raises on a filesystem without hard links (vfat, exFAT, some FUSE mounts).
_NO_HARD_LINKS = (errno.EPERM, errno.EOPNOTSUPP, errno.ENOSYS, errno.EMLINK)


def _place_new(source, destination):
    """Moves the file `source` to `destination`, which must not exist (FileExistsError, even for a
    file made a moment ago): a hard link fails where a rename would replace; without hard links the
    name is reserved with O_EXCL first, then renamed onto."""
    try:
        os.link(source, destination)
    except OSError as error:
        if error.errno not in _NO_HARD_LINKS:
            raise
        os.close(os.open(destination, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
        os.replace(source, destination)
    else:
        os.remove(source)


def remove_quietly(path, remote):
    """Removes a leftover file or directory; a failure to clean up never hides the real error."""
    with contextlib.suppress(Exception):
        if remote:
            if _gfile().isdir(path):
                _gfile().rmtree(path)
            elif _gfile().exists(path):
                _gfile().remove(path)
        elif os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.remove(path)


@contextlib.contextmanager
def atomic_open(path, mode="w"):
    """Like `open(path, mode)`, but the file appears under `path` only once fully written."""
    with atomic_output(path) as tmp:
        opener = _gfile().GFile if is_remote(path) else open
        with opener(tmp, mode) as handle:
            yield handle


def write_json(path, value):
    """`value` as indented JSON at `path`, atomically."""
    with atomic_open(path, "w") as handle:
        json.dump(value, handle, indent=2, sort_keys=True)
        handle.write("\n")


@contextlib.contextmanager
def atomic_directory(path):
    """Yields an empty sibling directory to fill; it becomes `path` only if the block succeeds.

    `path` must not exist or be an empty directory. Local paths only.
    """
    path = os.path.abspath(path)
    if os.path.exists(path) and (not os.path.isdir(path) or os.listdir(path)):
        raise ValueError(f"{path} exists and is not an empty directory.")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    staging = temporary_name(path)
    os.mkdir(staging)
    try:
        yield staging
        os.replace(staging, path)
    finally:
        if os.path.exists(staging):
            shutil.rmtree(staging)
