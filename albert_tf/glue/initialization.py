"""`--init_checkpoint`: start a classifier's encoder from an original TF1 checkpoint or one of ours.

TF1 checkpoints (released tarballs, TF-Hub `module/` names, the original's run_pretraining or
run_classifier output) are recognised by their `bert/` variable names and loaded strictly, except
for the new classification head and the unused pretraining heads. `run_pretraining.py` output keeps
every weight by variable path under `model_weights/`: the encoder's are loaded strictly from there,
the pretraining heads ignored. Anything else is read as a TF2 object-based checkpoint holding the
backbone under `model/albert` (as this package's fine-tuning writes them).
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
from albert_tf.pretraining.init_checkpoint import initialize_model
from albert_tf.pretraining.model_variables import CHECKPOINT_KEY


class _BackboneHolder(tf.Module):
    """Mirrors the `model/albert` path under which our checkpoints keep the encoder."""

    def __init__(self, albert):
        super().__init__()
        self.albert = albert


def is_tf1_checkpoint(prefix):
    names = [name for name, _ in tf.train.list_variables(prefix)]
    return any(name.removeprefix(HUB_MODULE_PREFIX).startswith("bert/") for name in names)


def is_pretraining_checkpoint(prefix):
    """Whether `prefix` is `run_pretraining.py` output (weights keyed by variable path)."""
    return any(name.startswith(f"{CHECKPOINT_KEY}/") for name, _ in tf.train.list_variables(prefix))


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
        if is_pretraining_checkpoint(prefix):
            # Only the encoder: the MLM and sentence-order heads have no use in a classifier.
            logging.info("init_checkpoint: %s", initialize_model(classifier.albert, prefix, strict=True))
            return prefix
        status = tf.train.Checkpoint(model=_BackboneHolder(classifier.albert)).read(prefix)
        try:
            status.expect_partial().assert_existing_objects_matched()
        except AssertionError as error:
            # TF's message goes on to print every unmatched variable with its value: keep its gist.
            raise ValueError(
                f"{str(error).split(',')[0]} (no ALBERT encoder under `model/albert`); expected an "
                "original TF1 checkpoint, run_pretraining.py output or run_classifier.py output"
            ) from None
    except (ValueError, AssertionError, tf.errors.OpError) as error:
        raise UsageError(f"--init_checkpoint: cannot initialise from {path}: {error}") from None
    logging.info("init_checkpoint: restored the encoder's %d variables from TF2 checkpoint %s",
                 len(classifier.albert.variables), prefix)
    return prefix
