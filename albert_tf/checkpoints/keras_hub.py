"""keras-hub `AlbertBackbone` presets (`config.json` + `model.weights.h5` + SentencePiece asset), in and out.

keras-hub itself reads and writes the preset (its `.h5` layout follows Keras' object tracking,
not stable names), so both directions need `keras-hub` installed; weights then move by keras-hub's
variable paths through the TF1 names. A preset holds the backbone only: no MLM, SOP or GLUE head.
keras-hub's `AlbertTokenizer` runs SentencePiece alone on raw text (no lowercasing, no accent
stripping), so the preset's tokenizer asset is the model with ALBERT's normalization folded into
its own (`folded_sentencepiece`, as the MediaPipe export): its ids are the ones the model was trained on.
"""

import os

import numpy as np

from albert_tf.checkpoints import architecture
from albert_tf.checkpoints.foreign_arrays import export_arrays, stored_from_arrays
from albert_tf.checkpoints.name_table import KERAS_HUB_COLUMN, NameTable
from albert_tf.checkpoints.names import is_backbone
from albert_tf.io_utils import atomic_directory
from albert_tf.text.folded_sentencepiece import folded_model

CONFIG_NAME = "config.json"
WEIGHTS_NAME = "model.weights.h5"
METADATA_NAME = "metadata.json"  # keras-hub writes it into every preset
BACKBONE_CLASS = "AlbertBackbone"
SPM_ASSET = os.path.join("assets", "tokenizer", "vocabulary.spm")
KERAS_HUB_REQUIREMENT = "keras-hub==0.32.0"

# keras-hub's variable paths (the `keras_hub` column of `names`' table) under the block scope below.
NAMES = NameTable.from_column(KERAS_HUB_COLUMN, "group_{owner}_inner_layer_{inner}/")

# AlbertConfig field: (keras-hub AlbertBackbone config key, its default; None: required).
CONFIG_KEYS = {
    "vocab_size": ("vocabulary_size", None), "embedding_size": ("embedding_dim", None),
    "hidden_size": ("hidden_dim", None), "num_hidden_layers": ("num_layers", None),
    "num_hidden_groups": ("num_groups", 1), "num_attention_heads": ("num_heads", None),
    "intermediate_size": ("intermediate_dim", None), "inner_group_num": ("num_inner_repetitions", 1),
    "hidden_dropout_prob": ("dropout", 0.0), "attention_probs_dropout_prob": ("dropout", 0.0),
    "max_position_embeddings": ("max_sequence_length", 512), "type_vocab_size": ("num_segments", 2),
}

def _keras_hub(purpose):
    try:
        import keras_hub  # pylint: disable=g-import-not-at-top
    except ImportError:
        raise ValueError(f"{purpose} needs keras-hub: pip install {KERAS_HUB_REQUIREMENT}.") from None
    return keras_hub


def is_keras_hub_preset(path):
    """Whether `path` is a directory with a keras-hub `config.json` and `model.weights.h5`."""
    path = os.fspath(path)
    return all(os.path.isfile(os.path.join(path, name)) for name in (CONFIG_NAME, WEIGHTS_NAME))


def missing_preset_files(path):
    """The files of a keras-hub preset (config.json, model.weights.h5) that the directory `path`
    lacks when it holds part of one (the weights, the metadata, or a config naming the backbone
    class), else []: such a directory is named as a preset missing them, not as any checkpoint."""
    path = os.fspath(path)
    present = {name for name in (CONFIG_NAME, WEIGHTS_NAME, METADATA_NAME) if os.path.isfile(os.path.join(path, name))}
    if present <= {CONFIG_NAME}:
        try:
            if not present or architecture.read_json(os.path.join(path, CONFIG_NAME)).get("class_name") != BACKBONE_CLASS:
                return []
        except ValueError:  # not JSON: not recognisably a preset's
            return []
    return [name for name in (CONFIG_NAME, WEIGHTS_NAME) if name not in present]


def _backbone_config(directory):
    path = os.path.join(os.fspath(directory), CONFIG_NAME)
    values = architecture.read_json(path)
    if values.get("class_name") != BACKBONE_CLASS or not isinstance(values.get("config"), dict):
        raise ValueError(f"{path}: `class_name` is {values.get('class_name')!r}, expected "
                         f"{BACKBONE_CLASS!r} with its `config` (a keras-hub ALBERT backbone preset).")
    return values["config"], path


def albert_config_from_keras_hub(directory):
    """The `AlbertConfig` of a keras-hub `AlbertBackbone` preset (tanh GELU, LayerNorm epsilon 1e-12 in both)."""
    values, path = _backbone_config(directory)
    return architecture.albert_config_from(values, CONFIG_KEYS, path)


def keras_hub_spm_model_file(directory):
    """The preset's SentencePiece model, or None if it has no tokenizer asset."""
    path = os.path.join(os.fspath(directory), SPM_ASSET)
    return path if os.path.isfile(path) else None


def read_keras_hub(model, directory, init_from_group0=False, longer_positions=False):
    """The weights of a keras-hub `AlbertBackbone` preset as a `StoredWeights` for `model` (TF1 names).

    The preset's config must describe `model`'s architecture (its group count too, unless
    `init_from_group0`; a longer position table if `longer_positions`). Only the backbone is in a preset.
    """
    directory = os.fspath(directory)
    config = albert_config_from_keras_hub(directory)
    architecture.check_same(config, model.config, os.path.join(directory, CONFIG_NAME), "keras-hub",
                            compare_groups=not init_from_group0, longer_positions=longer_positions)
    weights = os.path.join(directory, WEIGHTS_NAME)
    if not os.path.isfile(weights):
        raise FileNotFoundError(f"{weights} does not exist: not a keras-hub preset directory.")
    keras_hub = _keras_hub("load_keras_hub")
    try:
        backbone = keras_hub.models.AlbertBackbone.from_preset(directory)
    except Exception as error:  # keras raises ValueError/OSError/KeyError for unreadable files.
        raise ValueError(f"{weights} is not a readable keras-hub AlbertBackbone preset ({error}).") from None
    arrays = {variable.path: np.asarray(variable.numpy()) for variable in backbone.weights}
    return stored_from_arrays(model, arrays, NAMES, weights, "keras-hub preset")


def save_keras_hub_preset(model, directory, spm_model_file=None, backbone_only=False):
    """Writes the backbone of `model` as a preset `keras_hub.models.AlbertBackbone.from_preset` loads.

    A preset is a backbone: a model with task heads is refused unless `backbone_only` says to
    leave them out (as `albert-convert --backbone_only`); weights are never dropped silently. With `spm_model_file`, an
    `AlbertTokenizer` is saved too, on the model with ALBERT's normalization folded in (keras-hub
    neither lowercases nor strips accents), so it gives our tokenizer's ids on raw text. `directory` must not exist or be empty; the preset is built
    in a sibling and appears complete.

    Returns:
        The directory written.
    """
    keras_hub = _keras_hub("save_keras_hub_preset")
    albert = getattr(model, "albert", model)
    if not is_backbone(albert):
        raise TypeError(f"save_keras_hub_preset: expected an ALBERT model, got {type(model).__name__}.")
    if albert is not model and not backbone_only:
        raise ValueError(f"save_keras_hub_preset: a keras-hub preset holds the backbone only; the heads of "
                         f"{type(model).__name__} would be left out: pass backbone_only=True (or model.albert)")
    directory = os.fspath(directory)
    if spm_model_file is not None and not os.path.isfile(spm_model_file):
        raise FileNotFoundError(f"save_keras_hub_preset: spm_model_file {spm_model_file} does not exist.")
    config = albert.config
    backbone = keras_hub.models.AlbertBackbone(
        vocabulary_size=config.vocab_size,
        num_layers=config.num_hidden_layers,
        num_heads=config.num_attention_heads,
        embedding_dim=config.embedding_size,
        hidden_dim=config.hidden_size,
        intermediate_dim=config.intermediate_size,
        num_groups=architecture.stored_groups(config, "keras-hub"),
        num_inner_repetitions=config.inner_group_num,
        dropout=config.hidden_dropout_prob,
        max_sequence_length=config.max_position_embeddings,
        num_segments=config.type_vocab_size,
    )
    variables = {variable.path: variable for variable in backbone.weights}
    shapes = {path: tuple(variable.shape) for path, variable in variables.items()}
    for path, array in export_arrays(albert, NAMES, "save_keras_hub_preset", shapes).items():
        variables[path].assign(array)
    with atomic_directory(directory) as staging:
        backbone.save_to_preset(staging)
        if spm_model_file is not None:
            with open(spm_model_file, "rb") as handle:
                proto = folded_model(handle.read())
            keras_hub.models.AlbertTokenizer(proto=proto).save_to_preset(staging)
    return directory
