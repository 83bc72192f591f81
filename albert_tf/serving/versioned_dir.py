"""TF Serving's model layout: `<export_dir>/<version>/`, the highest number being served."""

import os
import time

import tensorflow as tf

from albert_tf.io_utils import atomic_output
from albert_tf.progress import working


def next_version(export_dir):
    """A version number above every existing one (the current Unix time, usually)."""
    existing = [int(name.rstrip("/")) for name in tf.io.gfile.listdir(export_dir)
                if name.rstrip("/").isdigit()] if tf.io.gfile.isdir(export_dir) else []
    return max([int(time.time())] + [version + 1 for version in existing])


def save_versioned(module, export_dir, signatures=None, version=None):
    """Saves `module` as `<export_dir>/<version>`; the folder appears only once complete.

    The temporary name starts with a dot, so a model server watching `export_dir` never loads a
    half-written version.
    """
    tf.io.gfile.makedirs(export_dir)
    version = next_version(export_dir) if version is None else version
    path = os.path.join(export_dir, str(version))
    with atomic_output(path) as tmp, working(f"writing the SavedModel {path}"):
        tf.saved_model.save(module, tmp, signatures=signatures)
    return path
