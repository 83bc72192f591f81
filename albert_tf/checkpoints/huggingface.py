"""Hugging Face ALBERT checkpoints (`config.json` + `model.safetensors` / `pytorch_model.bin`), in and out.

Reading needs only NumPy and `safetensors` (torch only for a `pytorch_model.bin`, loaded with
`weights_only=True`); the output loads with `transformers`' `from_pretrained` as `AlbertModel`,
`AlbertForPreTraining` or `AlbertForSequenceClassification`, with no unused or new weights.
"""

import json
import os
import shutil

from albert_tf.checkpoints import architecture
from albert_tf.checkpoints.foreign_arrays import export_arrays, stored_from_arrays
from albert_tf.checkpoints.huggingface_tokenizer import TOKENIZER_JSON, tokenizer_json
from albert_tf.checkpoints.model_classes import BACKBONE, CLASSIFIER, PRETRAINING, kind_of, model_class
from albert_tf.checkpoints.name_table import HUGGING_FACE_COLUMN, NameTable
from albert_tf.io_utils import atomic_open, atomic_output

CONFIG_NAME = "config.json"
SAFETENSORS_NAME = "model.safetensors"
SAFETENSORS_INDEX_NAME = "model.safetensors.index.json"
PYTORCH_NAME = "pytorch_model.bin"
SPM_NAME = "spiece.model"

# Task models keep the backbone under `albert.`; a bare `AlbertModel` has no prefix.
BACKBONE_PREFIX = "albert."
HEAD_PREFIXES = ("predictions.", "sop_classifier.", "classifier.")
# The tied MLM decoder (word embeddings and `predictions.bias` again) and an old position buffer.
IGNORED_NAMES = ("predictions.decoder.weight", "predictions.decoder.bias", "embeddings.position_ids")
# AlbertConfig field: (HF config key, HF's AlbertConfig default: xxlarge's sizes); hidden_act is mapped apart.
CONFIG_KEYS = {
    "vocab_size": ("vocab_size", 30000), "embedding_size": ("embedding_size", 128),
    "hidden_size": ("hidden_size", 4096), "num_hidden_layers": ("num_hidden_layers", 12),
    "num_hidden_groups": ("num_hidden_groups", 1), "num_attention_heads": ("num_attention_heads", 64),
    "intermediate_size": ("intermediate_size", 16384), "inner_group_num": ("inner_group_num", 1),
    "hidden_dropout_prob": ("hidden_dropout_prob", 0.0),
    "attention_probs_dropout_prob": ("attention_probs_dropout_prob", 0.0),
    "max_position_embeddings": ("max_position_embeddings", 512), "type_vocab_size": ("type_vocab_size", 2),
    "initializer_range": ("initializer_range", 0.02),
}

# HF's names (the `huggingface` column of `names`' table) under the block scope below.
NAMES = NameTable.from_column(HUGGING_FACE_COLUMN, "encoder.albert_layer_groups.{owner}.albert_layers.{inner}.")

# HF's `hidden_act` -> ours. The original's "gelu" is the tanh approximation: HF's "gelu_new"
# (or "gelu_pytorch_tanh"). HF's "gelu" is the exact erf GELU, which albert-tf does not have.
ACTIVATIONS_FROM_HF = {"gelu_new": "gelu", "gelu_pytorch_tanh": "gelu", "relu": "relu", "tanh": "tanh",
                       "linear": "linear"}
ACTIVATIONS_TO_HF = {"gelu": "gelu_new", "relu": "relu", "tanh": "tanh", "linear": "linear"}
ERF_GELU = "gelu"

# HF's class for each kind of our models.
ARCHITECTURES = {
    BACKBONE: "AlbertModel",
    PRETRAINING: "AlbertForPreTraining",
    CLASSIFIER: "AlbertForSequenceClassification",
}


def is_huggingface_dir(path):
    """Whether `path` is a directory with a `config.json` and HF weights (ALBERT or not)."""
    path = os.fspath(path)
    return os.path.isfile(os.path.join(path, CONFIG_NAME)) and any(
        os.path.isfile(os.path.join(path, name)) for name in (SAFETENSORS_NAME, SAFETENSORS_INDEX_NAME, PYTORCH_NAME)
    )


def albert_config_from_huggingface(directory, erf_gelu_as_tanh=False):
    """The `AlbertConfig` of an HF ALBERT directory's `config.json`.

    Args:
        directory: the checkpoint directory.
        erf_gelu_as_tanh: read `hidden_act: "gelu"` (HF's exact erf GELU) as the original's tanh
            GELU: some HF ALBERT configs say "gelu" for weights the original trained with the tanh
            GELU. Otherwise "gelu" is refused, since albert-tf has no erf GELU.
    """
    path = os.path.join(os.fspath(directory), CONFIG_NAME)
    values = architecture.read_json(path)
    if values.get("model_type") != "albert":
        raise ValueError(f"{path}: `model_type` is {values.get('model_type')!r}, expected 'albert'.")
    hidden_act = values.get("hidden_act", "gelu_new")
    if hidden_act == ERF_GELU and erf_gelu_as_tanh:
        hidden_act = "gelu_new"
    if hidden_act not in ACTIVATIONS_FROM_HF:
        hint = (" (the exact erf GELU; albert-tf has the original's tanh GELU: pass "
                "erf_gelu_as_tanh=True / --erf_gelu_as_tanh to read it as that)") if hidden_act == ERF_GELU else ""
        raise ValueError(
            f"{path}: `hidden_act` {hidden_act!r}{hint} is not supported; expected one of "
            f"{sorted(ACTIVATIONS_FROM_HF)}."
        )
    if values.get("position_embedding_type", "absolute") != "absolute":
        raise ValueError(f"{path}: `position_embedding_type` must be 'absolute' (the original's), "
                         f"got {values['position_embedding_type']!r}.")
    architecture.check_layer_norm_epsilon(values.get("layer_norm_eps", 1e-12), path, "layer_norm_eps")
    return architecture.albert_config_from(values, CONFIG_KEYS, path, hidden_act=ACTIVATIONS_FROM_HF[hidden_act])


def read_huggingface_weights(directory):
    """({name without `albert.`: NumPy array}, the file read) of an HF checkpoint directory."""
    directory = os.fspath(directory)
    safetensors_path = os.path.join(directory, SAFETENSORS_NAME)
    index_path = os.path.join(directory, SAFETENSORS_INDEX_NAME)
    pytorch_path = os.path.join(directory, PYTORCH_NAME)
    if os.path.isfile(safetensors_path):
        arrays, source = _read_safetensors(safetensors_path), safetensors_path
    elif os.path.isfile(index_path):
        weight_map = architecture.read_json(index_path).get("weight_map", {})
        if not isinstance(weight_map, dict) or not all(isinstance(name, str) for name in weight_map.values()):
            raise ValueError(f"{index_path}: `weight_map` must be an object of {{weight name: file name}}, "
                             f"got {type(weight_map).__name__}.")
        arrays, source = {}, index_path
        for name in sorted(set(weight_map.values())):
            arrays.update(_read_safetensors(os.path.join(directory, name)))
    elif os.path.isfile(pytorch_path):
        arrays, source = _read_pytorch(pytorch_path), pytorch_path
    else:
        raise FileNotFoundError(
            f"{directory} holds none of {SAFETENSORS_NAME}, {SAFETENSORS_INDEX_NAME}, {PYTORCH_NAME}: "
            "not a Hugging Face checkpoint directory."
        )
    return {name.removeprefix(BACKBONE_PREFIX): array for name, array in arrays.items()}, source


def huggingface_weight_shapes(directory):
    """{name without `albert.`: shape} of an HF checkpoint, from safetensors headers where possible."""
    path = os.path.join(os.fspath(directory), SAFETENSORS_NAME)
    if not os.path.isfile(path):
        return {name: array.shape for name, array in read_huggingface_weights(directory)[0].items()}
    from safetensors import safe_open  # pylint: disable=g-import-not-at-top

    try:
        with safe_open(path, framework="np") as handle:
            shapes = {name: tuple(handle.get_slice(name).get_shape()) for name in handle.keys()}
    except Exception as error:  # safetensors raises its own error types for bad headers.
        raise ValueError(f"{path} is not a readable safetensors file ({error}).") from None
    return {name.removeprefix(BACKBONE_PREFIX): shape for name, shape in shapes.items()}


def _read_safetensors(path):
    from safetensors.numpy import load_file  # pylint: disable=g-import-not-at-top

    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path} does not exist (named by {SAFETENSORS_INDEX_NAME}).")
    try:
        try:
            return load_file(path)
        except TypeError:  # NumPy has no bfloat16; TensorFlow reads it as ml_dtypes.bfloat16 arrays.
            from safetensors.tensorflow import load_file as load_tensorflow  # pylint: disable=g-import-not-at-top

            return {name: tensor.numpy() for name, tensor in load_tensorflow(path).items()}
    except Exception as error:  # safetensors raises its own error types for bad headers.
        raise ValueError(f"{path} is not a readable safetensors file ({error}).") from None


def _read_pytorch(path):
    try:
        import torch  # pylint: disable=g-import-not-at-top
    except ImportError:
        raise ValueError(
            f"{path}: reading pytorch_model.bin needs PyTorch (pip install torch); or save the "
            "checkpoint as model.safetensors, which needs only the safetensors package."
        ) from None
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # weights_only refuses anything but tensors: never unpickle code.
        raise ValueError(f"{path} is not a readable PyTorch state dict ({error}).") from None
    if not isinstance(state, dict) or not all(isinstance(value, torch.Tensor) for value in state.values()):
        raise ValueError(f"{path} is not a state dict of tensors ({{name: tensor}}).")
    return {name: (tensor.float() if tensor.is_floating_point() else tensor).numpy() for name, tensor in state.items()}


def read_huggingface(model, directory, erf_gelu_as_tanh=False, init_from_group0=False, longer_positions=False):
    """The weights of an HF ALBERT checkpoint directory as a `StoredWeights` for `model`.

    The directory's config must describe `model`'s architecture (its group count too, unless
    `init_from_group0`; a longer position table if `longer_positions`). Names are the original's TF1 names (`foreign_names` gives HF's); the tied
    decoder copies are skipped.
    """
    config = albert_config_from_huggingface(directory, erf_gelu_as_tanh)
    architecture.check_same(config, model.config, os.path.join(os.fspath(directory), CONFIG_NAME), "Hugging Face",
                            compare_groups=not init_from_group0, longer_positions=longer_positions)
    arrays, source = read_huggingface_weights(directory)
    return stored_from_arrays(model, arrays, NAMES, source, "Hugging Face checkpoint", ignored=IGNORED_NAMES)


def huggingface_config(model, label_names=None):
    """The HF `config.json` values of `model` (an AlbertModel, AlbertPretrainingModel or AlbertClassifier);
    a classifier's `id2label` / `label2id` from `label_names` (default: HF's own LABEL_0, LABEL_1, ...)."""
    config = model.config
    kind = kind_of(model)
    values = {
        "architectures": [ARCHITECTURES[kind]],
        "model_type": "albert",
        "vocab_size": config.vocab_size,
        "embedding_size": config.embedding_size,
        "hidden_size": config.hidden_size,
        "num_hidden_layers": config.num_hidden_layers,
        "num_hidden_groups": architecture.stored_groups(config, "Hugging Face"),
        "num_attention_heads": config.num_attention_heads,
        "intermediate_size": config.intermediate_size,
        "inner_group_num": config.inner_group_num,
        "hidden_act": ACTIVATIONS_TO_HF[config.hidden_act],
        "hidden_dropout_prob": config.hidden_dropout_prob,
        "attention_probs_dropout_prob": config.attention_probs_dropout_prob,
        "max_position_embeddings": config.max_position_embeddings,
        "type_vocab_size": config.type_vocab_size,
        "initializer_range": config.initializer_range,
        "layer_norm_eps": architecture.LAYER_NORM_EPSILON,
        "position_embedding_type": "absolute",
        "tie_word_embeddings": True,
    }
    if kind == CLASSIFIER:
        values["classifier_dropout_prob"] = model.dropout_rate
        names = list(label_names) if label_names is not None else [f"LABEL_{i}" for i in range(model.num_labels)]
        if len(names) != model.num_labels:
            raise ValueError(f"{len(names)} label names for a classifier of {model.num_labels} labels")
        values["id2label"] = {str(index): name for index, name in enumerate(names)}
        values["label2id"] = {name: index for index, name in enumerate(names)}
    return values


def save_huggingface_checkpoint(model, directory, spm_model_file=None, do_lower_case=True, label_names=None):
    """Writes `model` as an HF ALBERT checkpoint directory (config.json + model.safetensors).

    `AlbertModel` is written as HF's `AlbertModel`, `AlbertPretrainingModel` as
    `AlbertForPreTraining`, `AlbertClassifier` as `AlbertForSequenceClassification`. With
    `spm_model_file`, the SentencePiece model is copied as `spiece.model` with a
    `tokenizer_config.json` and a `tokenizer.json` (`huggingface_tokenizer`), so
    `transformers.AlbertTokenizer.from_pretrained(directory)` works in transformers 4 and 5.
    A classifier's `label_names` become `id2label` and `label2id`. Each file appears only once complete.

    Returns:
        The directory written.
    """
    from safetensors.numpy import save  # pylint: disable=g-import-not-at-top

    if kind_of(model) not in ARCHITECTURES:
        raise TypeError(f"save_huggingface_checkpoint: expected one of "
                        f"{[model_class(kind).__name__ for kind in ARCHITECTURES]}, got {type(model).__name__}.")
    directory = os.fspath(directory)
    config = huggingface_config(model, label_names)
    prefix = "" if kind_of(model) == BACKBONE else BACKBONE_PREFIX
    arrays = {
        (name if name.startswith(HEAD_PREFIXES) else prefix + name): array
        for name, array in export_arrays(model, NAMES, "save_huggingface_checkpoint").items()
    }
    if spm_model_file is not None and not os.path.isfile(spm_model_file):
        raise FileNotFoundError(f"save_huggingface_checkpoint: spm_model_file {spm_model_file} does not exist.")
    tokenizer = None if spm_model_file is None else tokenizer_json(spm_model_file, do_lower_case)
    os.makedirs(directory, exist_ok=True)
    with atomic_open(os.path.join(directory, SAFETENSORS_NAME), "wb") as handle:  # the mode config.json gets
        handle.write(save(arrays, metadata={"format": "pt"}))  # transformers requires the format key.
    if spm_model_file is not None:
        with atomic_output(os.path.join(directory, SPM_NAME)) as path:
            shutil.copyfile(spm_model_file, path)
        _write_json(os.path.join(directory, "tokenizer_config.json"),
                    {"tokenizer_class": "AlbertTokenizer", "do_lower_case": do_lower_case,
                     "remove_space": True, "keep_accents": False})
        with atomic_open(os.path.join(directory, TOKENIZER_JSON), "wb") as handle:
            handle.write(tokenizer.encode("utf-8"))
    _write_json(os.path.join(directory, CONFIG_NAME), config)  # Last: it marks the directory complete.
    return directory


def _write_json(path, values):
    with atomic_open(path, "w") as handle:
        handle.write(json.dumps(values, indent=2, sort_keys=True) + "\n")
