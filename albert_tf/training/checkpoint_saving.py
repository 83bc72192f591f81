"""TensorFlow checkpoints on disk: the latest one, and saves that leave no partial files behind.

TensorFlow is imported only where a checkpoint is read, so that the commands can clean a directory
before it loads.
"""

import glob
import os
import re
import shutil

from albert_tf.io_utils import is_remote, remove_quietly


def latest_checkpoint(directory):
    """`tf.train.latest_checkpoint`, with a `checkpoint` state file that is not UTF-8 unreadable
    (None), as TensorFlow reads one that does not parse, rather than a UnicodeDecodeError."""
    import tensorflow as tf  # pylint: disable=g-import-not-at-top

    try:
        return tf.train.latest_checkpoint(directory)
    except UnicodeDecodeError:
        return None


def remove_checkpoint_partials(directory):
    """Removes the `<prefix>_temp/` directories a killed or failed TensorFlow checkpoint save
    leaves (TF never cleans them); call before training starts, never during a save. Local only."""
    if is_remote(directory) or not os.path.isdir(directory):
        return []
    partials = sorted(os.path.join(directory, name) for name in os.listdir(directory)
                      if name.endswith("_temp") and os.path.isdir(os.path.join(directory, name)))
    for path in partials:
        shutil.rmtree(path, ignore_errors=True)
    return partials


def save_checkpoint(manager, step):
    """`manager.save(checkpoint_number=step)` (a `tf.train.CheckpointManager`); a save that fails (a
    full disk) or is stopped leaves nothing: TensorFlow would leave `<prefix>-<step>_temp/` and
    partial `<prefix>-<step>.*` files, which keep the disk full. Local directories only are cleaned."""
    try:
        return manager.save(checkpoint_number=step)
    except BaseException:
        kept = set(manager.checkpoints)
        if not is_remote(manager.directory):
            for path in glob.glob(os.path.join(glob.escape(manager.directory), f"*-{step}[._]*")):
                # <prefix>-<step>_temp or <prefix>-<step>.<suffix>, read in the file name only (the
                # directory's own name may hold "-<step>" too).
                parts = re.fullmatch(rf"(.+-{step})(_temp|\..+)", os.path.basename(path))
                if parts and os.path.join(os.path.dirname(path), parts.group(1)) not in kept:
                    remove_quietly(path, remote=False)
        raise
