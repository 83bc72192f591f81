"""ALBERT's weights in every format: one loader, one table of names, a reader and a writer per format.

    from albert_tf.checkpoints import load
    report = load(model, "albert_base")  # TF1, ours, Keras, Hugging Face or keras-hub

Where things are:
- `names`: the one table of weight names: the original's TF1 names, our variables, HF's and
  keras-hub's names. Everything else goes through the TF1 names.
- readers, each yielding a `stored.StoredWeights` under TF1 names: `tf1` (the original's
  checkpoints and Hub modules), `ours` (our runs' object-based checkpoints), `keras_file`
  (`.keras`, `.weights.h5`), `huggingface`, `keras_hub` (through `foreign_arrays` and
  `name_table`).
- `loading`: `load` (match, strict checks, all-or-nothing assignment, report).
- writers: `tf1.save_tf1_checkpoint`, `huggingface.save_huggingface_checkpoint`,
  `keras_hub.save_keras_hub_preset`.
- `formats`: which format a path holds and the config that comes with it.
- TF1 checkpoints and ours are TensorFlow's formats and need TensorFlow; the others need none.
- `model_classes`: the model classes it builds or names, found in Keras' registry by the names they
  are registered with; `albert_tf.models` imports this package (`from_pretrained`), and this package
  imports no model.
"""

import importlib

from albert_tf.checkpoints.formats import (HUGGING_FACE, KERAS_HUB, InspectedPath, albert_config_file,
                                           foreign_config, foreign_format, inspect, read_config)
from albert_tf.checkpoints.huggingface import (albert_config_from_huggingface, huggingface_config,
                                               save_huggingface_checkpoint)
from albert_tf.checkpoints.keras_hub import (albert_config_from_keras_hub, keras_hub_spm_model_file,
                                             save_keras_hub_preset)
from albert_tf.checkpoints.loading import (CheckpointLoadReport, CheckpointMismatchError, load, load_foreign,
                                           load_huggingface, load_keras_hub, open_weights)
from albert_tf.checkpoints.names import (ALBERT_CONFIG_NAME, BEST_CHECKPOINT_PREFIX, HEAD_NAMES,
                                         RELEASED_CHECKPOINT_NAME, TRAINING_CHECKPOINT_DIR, backbone_variables,
                                         tf1_variables)

__all__ = [
    "ALBERT_CONFIG_NAME", "BEST_CHECKPOINT_PREFIX", "CheckpointLoadReport", "CheckpointMismatchError", "HEAD_NAMES",
    "HUGGING_FACE", "InspectedPath", "KERAS_HUB", "RELEASED_CHECKPOINT_NAME", "TRAINING_CHECKPOINT_DIR", "albert_config_file",
    "albert_config_from_huggingface", "albert_config_from_keras_hub", "backbone_variables", "foreign_config",
    "foreign_format", "huggingface_config", "inspect", "keras_hub_spm_model_file", "load", "load_foreign", "load_huggingface",
    "load_keras_hub", "model_weight_keys", "open_weights", "read_config", "resolve_checkpoint_prefix",
    "save_huggingface_checkpoint", "save_keras_hub_preset", "save_tf1_checkpoint", "tf1_variables",
]

# TensorFlow's formats (TF1 checkpoints, ours): imported when first named, so that the rest of the
# package, and the models, need no TensorFlow on the JAX and PyTorch backends.
_TENSORFLOW_NAMES = {"model_weight_keys": "albert_tf.checkpoints.ours",
                     "resolve_checkpoint_prefix": "albert_tf.checkpoints.tf1",
                     "save_tf1_checkpoint": "albert_tf.checkpoints.tf1"}


def __getattr__(name):
    if name not in _TENSORFLOW_NAMES:
        raise AttributeError(f"module 'albert_tf.checkpoints' has no attribute {name!r}")
    return getattr(importlib.import_module(_TENSORFLOW_NAMES[name]), name)
