"""The files that make a run's checkpoints self-describing: its `albert_config.json` and SentencePiece model.

Pretraining and fine-tuning write them beside their checkpoints, so that converting, loading
(`from_pretrained`) and exporting need no `--albert_config_file` or `--spm_model_file`.
"""

import glob
import os

import tensorflow as tf

from albert_tf.checkpoints.names import ALBERT_CONFIG_NAME
from albert_tf.io_utils import atomic_output

SPM_SUFFIX = ".model"


def write_model_files(directory, config, spm_model_file=None):
    """Writes `config` as `directory/albert_config.json` and copies `spm_model_file` (if given)
    beside it under its own name; each file appears only once complete."""
    tf.io.gfile.makedirs(directory)
    config.to_json_file(os.path.join(directory, ALBERT_CONFIG_NAME))
    if spm_model_file:
        with atomic_output(os.path.join(directory, os.path.basename(spm_model_file))) as path:
            tf.io.gfile.copy(spm_model_file, path, overwrite=True)


def spm_model_beside(config_file):
    """The one SentencePiece model (`*.model`) in the directory of `config_file`, or None."""
    found = glob.glob(os.path.join(glob.escape(os.path.dirname(config_file) or "."), "*" + SPM_SUFFIX))
    return found[0] if len(found) == 1 else None
