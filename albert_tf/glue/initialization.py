"""`--init_checkpoint`: start a classifier's encoder from an original TF1 checkpoint or one of ours.

TF1 checkpoints (released tarballs, TF-Hub `module/` names, the original's run_pretraining or
run_classifier output) are recognised by their `bert/` variable names and loaded strictly, except
for the new classification head and the unused pretraining heads. Anything else is read as a
TF2 object-based checkpoint holding the backbone under `model/albert` (as `run_pretraining.py`
and this package's fine-tuning write them).
"""

import tensorflow as tf
from absl import logging

from albert_tf.checkpoint_names import HUB_MODULE_PREFIX
from albert_tf.checkpoints import (
    CLASSIFIER_HEAD_NAMES,
    PRETRAINING_HEAD_NAMES,
    load_tf1_checkpoint,
    resolve_checkpoint_prefix,
)
from albert_tf.cli import UsageError


class _BackboneHolder(tf.Module):
    """Mirrors the `model/albert` path under which our checkpoints keep the encoder."""

    def __init__(self, albert):
        super().__init__()
        self.albert = albert


def is_tf1_checkpoint(prefix):
    names = [name for name, _ in tf.train.list_variables(prefix)]
    return any(name.removeprefix(HUB_MODULE_PREFIX).startswith("bert/") for name in names)


def initialize_from_checkpoint(classifier, path):
    """Loads the encoder weights (and a TF1 classifier head of the same shape, if present)."""
    try:
        prefix = resolve_checkpoint_prefix(path)
        if is_tf1_checkpoint(prefix):
            report = load_tf1_checkpoint(
                classifier, prefix, strict=True,
                allow_missing=CLASSIFIER_HEAD_NAMES, allow_unused=PRETRAINING_HEAD_NAMES,
            )
            logging.info("init_checkpoint: %s", report.summary())
            return prefix
        status = tf.train.Checkpoint(model=_BackboneHolder(classifier.albert)).read(prefix)
        status.expect_partial().assert_existing_objects_matched()
    except (ValueError, AssertionError, tf.errors.OpError) as error:
        raise UsageError(f"--init_checkpoint: cannot initialise from {path}: {error}") from None
    logging.info("init_checkpoint: restored the encoder from TF2 checkpoint %s", prefix)
    return prefix
