"""The files that make a run's checkpoints self-describing: its `albert_config.json`, SentencePiece
model and, for a classifier, its label names (`label_names.json`, a list in logit order).

Pretraining and fine-tuning write them beside their checkpoints, so that converting, loading
(`from_pretrained`) and exporting need no `--albert_config_file` or `--spm_model_file`, and a
converted classifier says what its outputs mean (Hugging Face's `id2label`).
"""

import glob
import json
import os

import tensorflow as tf

from albert_tf.checkpoints.names import ALBERT_CONFIG_NAME
from albert_tf.io_utils import atomic_output, write_json

SPM_SUFFIX = ".model"
LABEL_NAMES_FILE = "label_names.json"


def write_model_files(directory, config, spm_model_file=None, label_names=None):
    """Writes `config` as `directory/albert_config.json`, copies `spm_model_file` (if given)
    beside it under its own name and writes `label_names` (if given) as LABEL_NAMES_FILE; each
    file appears only once complete."""
    tf.io.gfile.makedirs(directory)
    config.to_json_file(os.path.join(directory, ALBERT_CONFIG_NAME))
    if spm_model_file:
        with atomic_output(os.path.join(directory, os.path.basename(spm_model_file))) as path:
            tf.io.gfile.copy(spm_model_file, path, overwrite=True)
    if label_names is not None:
        write_json(os.path.join(directory, LABEL_NAMES_FILE), list(label_names))


def read_label_names(directory):
    """The label names recorded in `directory` (`write_model_files`), or None; a ValueError naming
    the file unless it is a list of distinct non-empty names."""
    path = os.path.join(directory, LABEL_NAMES_FILE)
    if not tf.io.gfile.exists(path):
        return None
    try:
        with tf.io.gfile.GFile(path, "r") as handle:
            names = json.load(handle)
    except (ValueError, UnicodeDecodeError) as error:
        raise ValueError(f"{path}: not JSON ({error})") from None
    if (not isinstance(names, list) or not all(isinstance(name, str) and name for name in names)
            or len(set(names)) != len(names)):
        raise ValueError(f"{path}: expected a list of distinct label names, got {names!r}")
    return tuple(names)


def spm_model_beside(config_file):
    """The one SentencePiece model (`*.model`) in the directory of `config_file`, or None."""
    found = glob.glob(os.path.join(glob.escape(os.path.dirname(config_file) or "."), "*" + SPM_SUFFIX))
    return found[0] if len(found) == 1 else None
