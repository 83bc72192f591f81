"""TF Serving's model layout: `<export_dir>/<version>/`, the highest number being served."""

import errno
import os
import time

import tensorflow as tf

from albert_tf.io_utils import atomic_outputs
from albert_tf.progress import working


def next_version(export_dir):
    """A version number above every existing one (the current Unix time, usually)."""
    existing = [int(name.rstrip("/")) for name in tf.io.gfile.listdir(export_dir)
                if name.rstrip("/").isdigit()] if tf.io.gfile.isdir(export_dir) else []
    return max([int(time.time())] + [version + 1 for version in existing])


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
    an export is never left half made for a rerun to trip on. A version taken meanwhile by another
    export is a ValueError, and this one is dropped, never merged into it."""
    for _, export_dir, _ in models:
        tf.io.gfile.makedirs(export_dir)
    if version is None:
        version = max(next_version(export_dir) for _, export_dir, _ in models)
    paths = [os.path.join(export_dir, str(version)) for _, export_dir, _ in models]
    if not any(tf.io.gfile.exists(path) for path in paths):
        try:
            with atomic_outputs(paths) as temporaries:
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
