"""Converting ALBERT weights between formats: read any input into the model it holds, write it in another.

The input format is recognised (an HF directory, a keras-hub preset, or a TF1 checkpoint with its
`albert_config.json`); the model it holds (backbone, pretraining heads or a classifier) is loaded
strictly and written in the output format. The SentencePiece model travels along when the input
has one. The command is `albert-convert` (`albert_cli/convert.py`). This module builds models, so
it sits above `albert_tf.checkpoints`, which does not import them.
"""

import fnmatch
import os
import shutil

from albert_tf.checkpoints import formats, huggingface, keras_hub
from albert_tf.checkpoints.loading import load, load_huggingface, load_keras_hub, open_weights
from albert_tf.checkpoints.architecture import read_json
from albert_tf.checkpoints.model_files import LABEL_NAMES_FILE, read_label_names, spm_model_beside
from albert_tf.io_utils import write_json
from albert_tf.checkpoints.names import (ALBERT_CONFIG_NAME, HEAD_NAMES, POOLER_NAMES, POOLER_PATTERN, QA_HEAD,
                                         RELEASED_CHECKPOINT_NAME)
from albert_tf.checkpoints.stored_sizes import check_config_sizes
from albert_tf.checkpoints.tf1 import save_tf1_checkpoint
from albert_tf.choices import CONVERT_FORMATS
from albert_tf.config import AlbertConfig
from albert_tf.models import AlbertClassifier, AlbertModel, AlbertPretrainingModel

# An HF `AlbertForMaskedLM` checkpoint (most hub ALBERTs) may lack the sentence-order head and the
# pooler: they start from their initializers (the report lists them as missing).
NOT_IN_MASKED_LM = HEAD_NAMES["sentence_order_head"][:1] + (POOLER_PATTERN,)
POOLER_KERNEL, POOLER_BIAS = (row[0] for row in POOLER_NAMES)
EVERY_HEAD = tuple(pattern for patterns in HEAD_NAMES.values() for pattern in patterns)


class NoPlaceForHeads(ValueError):
    """The input holds heads the output (`place`) cannot hold: convert the backbone alone
    (`backbone_only=True`) or pick another format. Weights are never dropped silently."""

    def __init__(self, place, heads):
        super().__init__(f"{place} cannot hold the {', '.join(heads)}; convert the backbone alone with "
                         "backbone_only=True")
        self.place, self.heads = place, tuple(heads)


def _heads_in(shapes):
    """{head: its number of rows (None if unknown)} of the heads whose weights `shapes` ({name: shape}) holds."""
    found = {}
    for head, patterns in HEAD_NAMES.items():
        head_shapes = [shape for name, shape in shapes.items()
                       if any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)]
        if head_shapes:
            found[head] = next((shape[0] for shape in head_shapes if len(shape) >= 1), None)
    return found


def _model_for_heads(config, heads, backbone_only):
    """The model that holds the heads found (`_heads_in`), built from `config`; the backbone alone
    when `backbone_only`."""
    if backbone_only:
        return AlbertModel(config)
    if QA_HEAD in heads:
        raise NoPlaceForHeads("this converter (it writes backbones, pretraining models and classifiers)", [QA_HEAD])
    if "classification_head" in heads and heads["classification_head"] is not None:
        return AlbertClassifier(config, num_labels=int(heads["classification_head"]))
    if "classification_head" in heads:
        raise ValueError("the classification head's weights are 0-d tensors; expected [num_labels, H] and [num_labels].")
    if heads:
        return AlbertPretrainingModel(config)
    return AlbertModel(config)


def _tf1_shapes(table, shapes):
    tf1_shapes = {}
    for name, shape in shapes.items():
        translated = table.to_tf1(name)
        tf1_shapes[translated[0] if translated else name] = list(shape)
    return tf1_shapes


def _read_huggingface(path, erf_gelu_as_tanh, backbone_only):
    config = huggingface.albert_config_from_huggingface(path, erf_gelu_as_tanh)
    shapes = _tf1_shapes(huggingface.NAMES, huggingface.huggingface_weight_shapes(path))
    check_config_sizes(config, path, os.path.join(path, huggingface.CONFIG_NAME))
    pooler = [name for name in shapes if fnmatch.fnmatchcase(name, POOLER_PATTERN)]
    if len(pooler) == 1:  # a masked-LM checkpoint may lack the pooler, never half of it
        missing = huggingface.NAMES.to_foreign(POOLER_BIAS if pooler[0] != POOLER_BIAS else POOLER_KERNEL)[0]
        weights = [name for name in (huggingface.SAFETENSORS_NAME, huggingface.SAFETENSORS_INDEX_NAME,
                                     huggingface.PYTORCH_NAME) if os.path.isfile(os.path.join(path, name))]
        raise ValueError(f"{os.path.join(path, weights[0])}: the pooler has no {missing}.")
    model = _model_for_heads(config, _heads_in(shapes), backbone_only)
    report = load_huggingface(model, path, allow_missing=NOT_IN_MASKED_LM,
                              allow_unused=EVERY_HEAD if backbone_only else (), erf_gelu_as_tanh=erf_gelu_as_tanh)
    spm = os.path.join(path, huggingface.SPM_NAME)
    return model, report, spm if os.path.isfile(spm) else None


def _read_keras_hub(path):
    config = keras_hub.albert_config_from_keras_hub(path)
    check_config_sizes(config, path, os.path.join(path, keras_hub.CONFIG_NAME))
    model = AlbertModel(config)
    return model, load_keras_hub(model, path), keras_hub.keras_hub_spm_model_file(path)


def _read_checkpoint(path, albert_config_file, backbone_only):
    """An original TF1 checkpoint or one of ours (pretraining or fine-tuning output), with every
    head it holds."""
    config_file = albert_config_file or formats.albert_config_file(path)
    if config_file is None:
        raise FileNotFoundError(f"{path} has no {ALBERT_CONFIG_NAME} beside it; pass the checkpoint's config "
                                "(albert_config_file).")
    config = AlbertConfig.from_json_file(config_file)
    check_config_sizes(config, path, config_file)
    model = _model_for_heads(config, _heads_in(open_weights(path, AlbertModel(config)).shapes), backbone_only)
    report = load(model, path)  # a head the file lacks stays new (see checkpoints.load)
    return model, report, spm_model_beside(config_file)


def read_any(path, albert_config_file=None, erf_gelu_as_tanh=False, backbone_only=False):
    """(model, load report, SentencePiece model or None) from an HF, keras-hub, TF1 or our input.

    The model holds every head the input has (MLM and SOP: `AlbertPretrainingModel`; a
    classifier's: `AlbertClassifier`), unless `backbone_only`.

    Args:
        path: the input checkpoint (a directory or a checkpoint prefix).
        albert_config_file: a TF1 input's or our run's config (default: the `albert_config.json`
            beside it, or one level up as in a fine-tuning output's `best/model`).
        erf_gelu_as_tanh: an HF input's `hidden_act: "gelu"` is read as the original's tanh GELU.
        backbone_only: load the backbone alone; the input's heads are left out (and reported).

    Raises:
        NoPlaceForHeads: a SQuAD head, which no output format here holds, unless `backbone_only`.
    """
    found = formats.foreign_format(path)
    if found == formats.HUGGING_FACE:
        return _read_huggingface(path, erf_gelu_as_tanh, backbone_only)
    if found == formats.KERAS_HUB:
        return _read_keras_hub(path)
    return _read_checkpoint(path, albert_config_file, backbone_only)


def input_label_names(path, albert_config_file=None):
    """The label names of the classifier at `path`, or None: an HF checkpoint's `id2label` (unless
    HF's default LABEL_i), else the `label_names.json` our runs write beside their config."""
    if formats.foreign_format(path) == formats.HUGGING_FACE:
        id2label = read_json(os.path.join(path, huggingface.CONFIG_NAME)).get("id2label") or {}
        names = [id2label[key] for key in sorted(id2label, key=int)] if isinstance(id2label, dict) else []
        return None if names == [f"LABEL_{i}" for i in range(len(names))] or not names else tuple(names)
    config_file = albert_config_file or formats.albert_config_file(path)
    return read_label_names(os.path.dirname(config_file) or ".") if config_file else None


def write(model, directory, output_format, spm_model_file, do_lower_case=True, label_names=None):
    """Writes `model` with all its weights to `directory` in `output_format`.
    `do_lower_case`: HF output's tokenizer lowercases. `label_names`: a classifier's (HF's
    `id2label`; `label_names.json` beside a TF1 output).

    Raises:
        NoPlaceForHeads: keras-hub output of a model with heads (a preset holds the backbone;
            keras-hub's `AlbertMaskedLM` task has no sentence-order head).
        ValueError: an `output_format` not in `CONVERT_FORMATS`.
    """
    if output_format not in CONVERT_FORMATS:
        raise ValueError(f"format: expected one of {list(CONVERT_FORMATS)}, got {output_format!r}")
    if output_format == "hf":
        huggingface.save_huggingface_checkpoint(model, directory, spm_model_file, do_lower_case=do_lower_case,
                                                label_names=label_names)
    elif output_format == "keras_hub":
        if not isinstance(model, AlbertModel):
            heads = [head for head in HEAD_NAMES if hasattr(model, head)]
            raise NoPlaceForHeads("a keras-hub preset (the backbone only)", heads)
        keras_hub.save_keras_hub_preset(model, directory, spm_model_file)
    else:
        save_tf1_checkpoint(model, os.path.join(directory, RELEASED_CHECKPOINT_NAME))
        model.config.to_json_file(os.path.join(directory, ALBERT_CONFIG_NAME))
        if label_names is not None:
            write_json(os.path.join(directory, LABEL_NAMES_FILE), list(label_names))
        if spm_model_file:
            shutil.copyfile(spm_model_file, os.path.join(directory, os.path.basename(spm_model_file)))
