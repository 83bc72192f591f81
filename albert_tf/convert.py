"""Converting ALBERT weights between formats: read any input into the model it holds, write it in another.

The input format is recognised (an HF directory, a keras-hub preset, or a TF1 checkpoint with its
`albert_config.json`); the model it holds (backbone, pretraining heads or a classifier) is loaded
strictly and written in the output format. The SentencePiece model travels along when the input
has one. The command is `albert-convert` (`albert_cli/convert.py`). This module builds models, so
it sits above `albert_tf.checkpoints`, which does not import them.
"""

import glob
import os
import shutil

import tensorflow as tf

from albert_tf.checkpoints import formats, huggingface, keras_hub
from albert_tf.checkpoints.loading import load, load_huggingface, load_keras_hub
from albert_tf.checkpoints.names import (ALBERT_CONFIG_NAME, HEAD_NAMES, HUB_MODULE_PREFIX, POOLER_PATTERN,
                                         RELEASED_CHECKPOINT_NAME)
from albert_tf.checkpoints.tf1 import resolve_checkpoint_prefix, save_tf1_checkpoint
from albert_tf.config import AlbertConfig
from albert_tf.models import AlbertClassifier, AlbertModel, AlbertPretrainingModel

FORMATS = ("hf", "keras_hub", "tf1")
# An HF `AlbertForMaskedLM` checkpoint (most hub ALBERTs) may lack the sentence-order head and the
# pooler: they start from their initializers (the report lists them as missing).
NOT_IN_MASKED_LM = HEAD_NAMES["sentence_order_head"][:1] + (POOLER_PATTERN,)


def _model_for_heads(config, names, classifier_rows):
    """The model class that holds the weights named `names` (TF1 names), built from `config`."""
    if classifier_rows is not None:
        return AlbertClassifier(config, num_labels=classifier_rows)
    if any(name.startswith("cls/") for name in names):
        return AlbertPretrainingModel(config)
    return AlbertModel(config)


def _tf1_names(table, foreign_names):
    return [translated[0] for translated in map(table.to_tf1, foreign_names) if translated]


def _read_huggingface(path, erf_gelu_as_tanh):
    config = huggingface.albert_config_from_huggingface(path, erf_gelu_as_tanh)
    shapes = huggingface.huggingface_weight_shapes(path)
    rows = shapes["classifier.weight"][0] if "classifier.weight" in shapes else None
    model = _model_for_heads(config, _tf1_names(huggingface.NAMES, shapes), rows)
    report = load_huggingface(model, path, allow_missing=NOT_IN_MASKED_LM, erf_gelu_as_tanh=erf_gelu_as_tanh)
    spm = os.path.join(path, huggingface.SPM_NAME)
    return model, report, spm if os.path.isfile(spm) else None


def _read_keras_hub(path):
    model = AlbertModel(keras_hub.albert_config_from_keras_hub(path))
    return model, load_keras_hub(model, path), keras_hub.keras_hub_spm_model_file(path)


def _read_tf1(path, albert_config_file):
    prefix = resolve_checkpoint_prefix(path)
    directory = path if os.path.isdir(path) else os.path.dirname(prefix)
    config_file = albert_config_file or os.path.join(directory, ALBERT_CONFIG_NAME)
    if not os.path.isfile(config_file):
        raise FileNotFoundError(f"{config_file} does not exist; pass the checkpoint's config as albert_config_file.")
    config = AlbertConfig.from_json_file(config_file)
    shapes = {name.removeprefix(HUB_MODULE_PREFIX): shape for name, shape in tf.train.list_variables(prefix)}
    rows = shapes["output_weights"][0] if "output_weights" in shapes else None
    model = _model_for_heads(config, shapes, rows)
    report = load(model, prefix)  # a head the file lacks stays new (see checkpoints.load)
    spm_files = glob.glob(os.path.join(directory, "*.model"))
    return model, report, spm_files[0] if len(spm_files) == 1 else None


def read_any(path, albert_config_file=None, erf_gelu_as_tanh=False):
    """(model, load report, SentencePiece model or None) from an HF, keras-hub or TF1 input.

    Args:
        path: the input checkpoint (a directory or a checkpoint prefix).
        albert_config_file: a TF1 input's config (default: `albert_config.json` beside it).
        erf_gelu_as_tanh: an HF input's `hidden_act: "gelu"` is read as the original's tanh GELU.
    """
    found = formats.foreign_format(path)
    if found == formats.HUGGING_FACE:
        return _read_huggingface(path, erf_gelu_as_tanh)
    if found == formats.KERAS_HUB:
        return _read_keras_hub(path)
    return _read_tf1(path, albert_config_file)


def write(model, directory, output_format, spm_model_file, do_lower_case=True):
    """Writes `model` to `directory` in `output_format` (one of FORMATS); returns what was left
    out, if anything. `do_lower_case`: HF output's tokenizer lowercases."""
    if output_format == "hf":
        huggingface.save_huggingface_checkpoint(model, directory, spm_model_file, do_lower_case=do_lower_case)
    elif output_format == "keras_hub":
        keras_hub.save_keras_hub_preset(model, directory, spm_model_file)
        if not isinstance(model, AlbertModel):
            return f"the {type(model).__name__} heads (a keras-hub preset holds the backbone only)"
    else:
        save_tf1_checkpoint(model, os.path.join(directory, RELEASED_CHECKPOINT_NAME))
        model.config.to_json_file(os.path.join(directory, ALBERT_CONFIG_NAME))
        if spm_model_file:
            shutil.copyfile(spm_model_file, os.path.join(directory, os.path.basename(spm_model_file)))
    return None
