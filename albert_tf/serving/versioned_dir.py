"""TF Serving's model layout: `<export_dir>/<version>/`, the highest number being served."""

import contextlib
import errno
import os
import re
import time

import tensorflow as tf

from albert_tf.io_utils import atomic_outputs
from albert_tf.progress import working
from albert_tf.serving.export_journal import clean_dead_exports, journal


# `<export_dir>/.version-N.reserved`: version N is taken by an export still being written.
_RESERVED = re.compile(r"\.version-(\d+)\.reserved")


def next_version(export_dir):
    """A version number above every existing or reserved one (the current Unix time, usually)."""
    names = [name.rstrip("/") for name in tf.io.gfile.listdir(export_dir)] if tf.io.gfile.isdir(export_dir) else []
    taken = [int(name) for name in names if name.isdigit()]
    taken += [int(match.group(1)) for match in map(_RESERVED.fullmatch, names) if match]
    return max([int(time.time())] + [version + 1 for version in taken])


@contextlib.contextmanager
def _free_version(export_dirs):
    """Yields a version that no export in `export_dirs` has or is writing, reserved there (a
    `.version-N.reserved` file, created only if absent) until the block ends: two exports started
    in the same second take two versions. A reservation left by a killed export only skips its
    number. Object stores have no exclusive create: there the version is only chosen."""
    version = max(next_version(export_dir) for export_dir in export_dirs)
    if any("://" in export_dir for export_dir in export_dirs):
        yield version
        return
    while True:
        reservations = []
        try:
            for export_dir in export_dirs:
                reservation = os.path.join(export_dir, f".version-{version}.reserved")
                os.close(os.open(reservation, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
                reservations.append(reservation)
            if not any(os.path.exists(os.path.join(export_dir, str(version))) for export_dir in export_dirs):
                break  # finished meanwhile by an export that chose it before this one looked
        except FileExistsError:
            pass
        for reservation in reservations:
            os.remove(reservation)
        version = max([version + 1] + [next_version(export_dir) for export_dir in export_dirs])
    try:
        yield version
    finally:
        for reservation in reservations:
            os.remove(reservation)


def save_versioned(module, export_dir, signatures=None, version=None, extra_files=None):
    """Saves `module` as `<export_dir>/<version>`, with `extra_files` ({file name: bytes}) beside
    `saved_model.pb`; the folder appears only once complete.

    The temporary name starts with a dot, so a model server watching `export_dir` never loads a
    half-written version.
    """
    return save_versioned_together([(module, export_dir, signatures)], version, [extra_files or {}])[0]


def save_versioned_together(models, version=None, extra_files=None):
    """Saves each (module, export_dir, signatures) of `models` as `<export_dir>/<version>`, one
    version for all (by default above every existing one), each with its `extra_files` entry
    ({file name: bytes}, written beside `saved_model.pb`); returns the paths. The folders appear
    together once all are written, or none does (a failure or SIGTERM removes what was written), so
    an export is never left half made for a rerun to trip on. The default version is reserved while
    it is written (`_free_version`), so concurrent exports never pick the same one; a given version
    taken meanwhile by another export is a ValueError, and this one is dropped, never merged into it."""
    for _, export_dir, _ in models:
        tf.io.gfile.makedirs(export_dir)
        clean_dead_exports(export_dir)
    if version is None:
        with _free_version([export_dir for _, export_dir, _ in models]) as free:
            return save_versioned_together(models, free, extra_files)
    paths = [os.path.join(export_dir, str(version)) for _, export_dir, _ in models]
    if not any(tf.io.gfile.exists(path) for path in paths):
        try:
            with contextlib.ExitStack() as journals, atomic_outputs(paths) as temporaries:
                for path, tmp in zip(paths, temporaries):  # a killed export's folders, removed by the next
                    record = journals.enter_context(journal(os.path.dirname(path)))
                    record([tmp], [], [])
                for (module, _, signatures), files, path, tmp in zip(
                        models, extra_files or [{}] * len(models), paths, temporaries):
                    with working(f"writing the SavedModel {path}"):
                        tf.saved_model.save(module, tmp, signatures=signatures)
                        for name, content in files.items():
                            with tf.io.gfile.GFile(os.path.join(tmp, name), "wb") as handle:
                                handle.write(content)
            return paths
        except OSError as error:  # renaming onto a version written meanwhile
            if error.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                raise
    taken = next((path for path in paths if tf.io.gfile.exists(path)), paths[0])
    raise ValueError(f"export version {version}: {taken} exists (another export of that version?); "
                     "nothing of this one was kept; give another version")
