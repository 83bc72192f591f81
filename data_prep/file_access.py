"""The few file operations the builder needs, for the local filesystem; Beam supplies its own.

Temporary files follow `albert_tf.io_utils.temporary_name` (`.<name>.tmp-<hex>` beside the final
name), so globs of final names never match a file that is still being written.
"""

import contextlib
import glob
import os

from albert_tf.io_utils import temporary_name


def stale_temporaries(files, path):
    """Temporary files a crashed run left for `path` (never read, only deleted)."""
    directory, base = os.path.split(path)
    return files.glob(os.path.join(directory, f".{glob.escape(base)}.tmp-*"))


def sidecar_name(path, suffix):
    """A hidden file beside `path` (globs such as `prefix-*` do not match it)."""
    directory, base = os.path.split(path)
    return os.path.join(directory, f".{base}{suffix}")


class LocalFiles:
    """Local paths, with plain `open` (binary) and atomic renames."""

    def glob(self, pattern):
        return sorted(path for path in glob.glob(pattern) if os.path.isfile(path))

    def size(self, path):
        return os.path.getsize(path)

    def open_read(self, path):
        return open(path, "rb")

    def open_write(self, path):
        return open(path, "wb")

    def exists(self, path):
        return os.path.exists(path)

    def is_dir(self, path):
        return os.path.isdir(path)

    def rename(self, source, destination):
        os.replace(source, destination)

    def delete(self, path):
        with contextlib.suppress(FileNotFoundError):
            os.remove(path)

    def makedirs(self, directory):
        os.makedirs(directory, exist_ok=True)


@contextlib.contextmanager
def atomic_write(files, path):
    """Yields a binary handle on a temporary file that is renamed to `path` if the block succeeds."""
    temporary = temporary_name(path)
    try:
        with files.open_write(temporary) as handle:
            yield handle
        files.rename(temporary, path)
    finally:
        if files.exists(temporary):
            files.delete(temporary)
