"""`--init_checkpoint` for task models (SQuAD, RACE): the encoder `model.albert` only; heads start fresh.

The one place the SQuAD and RACE runners load a checkpoint, so a new loader is a one-line change.
An original TF1 checkpoint (a release, or the original's pretraining or GLUE output) goes into
the encoder strictly, its pretraining and GLUE heads left unused; run_pretraining.py output and
this package's fine-tuning checkpoints go through the GLUE loader, which reads only `.albert`.
"""

import tensorflow as tf
from absl import logging

from albert_tf.checkpoints import (
    CLASSIFIER_HEAD_NAMES,
    PRETRAINING_HEAD_NAMES,
    load_tf1_checkpoint,
    resolve_checkpoint_prefix,
)
from albert_tf.cli import UsageError
from albert_tf.glue.initialization import initialize_from_checkpoint, is_tf1_checkpoint


def initialize_encoder(model, path):
    """Loads the encoder weights of checkpoint `path` into `model.albert` (UsageError when it cannot)."""
    try:
        prefix = resolve_checkpoint_prefix(path)
        tf1 = is_tf1_checkpoint(prefix)
    except (ValueError, tf.errors.OpError) as error:
        raise UsageError(f"--init_checkpoint: cannot initialise from {path}: {error}") from None
    if not tf1:
        return initialize_from_checkpoint(model, path)
    try:
        report = load_tf1_checkpoint(model.albert, prefix, strict=True,
                                     allow_unused=PRETRAINING_HEAD_NAMES + CLASSIFIER_HEAD_NAMES)
    except (ValueError, tf.errors.OpError) as error:
        raise UsageError(f"--init_checkpoint: cannot initialise from {path}: {error}") from None
    logging.info("init_checkpoint: %s", report.summary())
    return prefix
