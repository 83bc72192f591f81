"""The weight files `checkpoints.load` reads, each seen as {name: stored weight}.

Formats: an original TF1 checkpoint (name-based, with or without TF-Hub's `module/`), a TF1 Hub
module directory (`variables/variables`), a checkpoint of ours (object-based `tf.train.Checkpoint`
holding the model under `model`, as pretraining and fine-tuning write them) and a Keras
`.weights.h5` / `.keras` file. Weights a model can take are named by their TF1 name
(`checkpoint_names`), whatever the format, so that one loader compares and assigns them all.
"""

import collections
import dataclasses
import os

import tensorflow as tf
from tensorflow.core.protobuf import trackable_object_graph_pb2

from albert_tf.checkpoint_names import HUB_MODULE_PREFIX, is_training_state, tf1_variables
from albert_tf.error_text import error_line

# The prefix inside the released tarballs (albert_base/model.ckpt-best.index, ...).
RELEASED_CHECKPOINT_NAME = "model.ckpt-best"
# Where a TF1 Hub module directory keeps its weights.
HUB_VARIABLES_PREFIX = os.path.join("variables", "variables")
# Where fine-tuning (glue/training.py) keeps its best weights and its training checkpoints.
BEST_CHECKPOINT_PREFIX = os.path.join("best", "model")
TRAINING_CHECKPOINT_DIR = "checkpoints"
# The object our checkpoints keep the model under: tf.train.Checkpoint(model=..., optimizer=...).
MODEL_KEY = "model"
# The task models' heads (their attribute names; every task model keeps its backbone under
# `albert`) and the names of their weights in a file: TF1 names, then our checkpoints' keys.
HEAD_NAMES = {
    "masked_lm_head": ("cls/predictions/*", "model/masked_lm_head/*"),
    "sentence_order_head": ("cls/seq_relationship/*", "model/sentence_order_head/*"),
    "classification_head": ("output_weights", "output_bias", "model/classification_head/*"),
    # SQuAD: the original's v1 (`cls/squad`) and v2 (XLNet-style) heads, and ours.
    "qa_head": ("cls/squad/*", "start_logits/*", "end_logits/*", "answer_class/*", "model/qa_head/*"),
}

_OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
_VARIABLE_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"


@dataclasses.dataclass(frozen=True)
class StoredWeights:
    """What one file holds: `shapes` {name: shape} and `read(name)` for the model's weights,
    `skipped` for training state (optimizer slots, steps) that is never loaded."""

    path: str
    format: str
    shapes: dict
    read: object
    skipped: tuple = ()
    hub_prefix: bool = False


def open_weights(path, model):
    """The weights stored at `path`, named for `model` (see the module docstring for formats)."""
    path = os.fspath(path)
    if path.endswith((".keras", ".weights.h5")):
        if not tf.io.gfile.exists(path):
            raise FileNotFoundError(f"{path} does not exist; expected a Keras .keras or .weights.h5 file.")
        return _keras_weights(path, model)
    prefix = resolve_checkpoint_prefix(path)
    reader = _open_checkpoint(prefix)
    if not reader.has_tensor(_OBJECT_GRAPH_KEY):
        return _tf1_weights(prefix, reader)
    try:
        return _object_checkpoint_weights(prefix, reader, model)
    except (tf.errors.OpError, IndexError) as error:
        raise ValueError(f"{prefix}: cannot read the checkpoint's object graph ({error_line(error)}); its data "
                         "file is truncated or damaged.") from None


def resolve_checkpoint_prefix(path):
    """A checkpoint prefix from a prefix, its `.index` file, or a directory: a checkpoint
    directory, a released tarball, a Hub module, or a pretraining or fine-tuning output."""
    path = os.fspath(path)
    if path.endswith(".index") and tf.io.gfile.exists(path):
        return path[: -len(".index")]
    if tf.io.gfile.isdir(path):
        return _prefix_in_directory(path)
    if not tf.io.gfile.exists(path + ".index"):
        raise FileNotFoundError(
            f"{path} is not a checkpoint: {path}.index does not exist; pass a prefix such as "
            f".../{RELEASED_CHECKPOINT_NAME} or .../ckpt-1000, a directory holding one, or a "
            ".keras / .weights.h5 file."
        )
    return path


def _prefix_in_directory(directory):
    latest = tf.train.latest_checkpoint(directory)
    if latest and tf.io.gfile.exists(latest + ".index"):
        return latest
    for name in (RELEASED_CHECKPOINT_NAME, HUB_VARIABLES_PREFIX, BEST_CHECKPOINT_PREFIX):
        prefix = os.path.join(directory, name)
        if tf.io.gfile.exists(prefix + ".index"):
            return prefix
    latest = tf.train.latest_checkpoint(os.path.join(directory, TRAINING_CHECKPOINT_DIR))
    if latest and tf.io.gfile.exists(latest + ".index"):
        return latest
    indexes = sorted(tf.io.gfile.glob(os.path.join(directory, "*.index")))
    if len(indexes) == 1:
        return indexes[0][: -len(".index")]
    found = f"several: {[os.path.basename(index) for index in indexes]}" if indexes else "none"
    raise FileNotFoundError(
        f"checkpoint directory {directory} holds no single checkpoint (*.index files: "
        f"{found}) and no `checkpoint` file naming one; pass the checkpoint prefix instead."
    )


def _open_checkpoint(prefix):
    try:
        return tf.train.load_checkpoint(prefix)
    except (tf.errors.OpError, ValueError) as error:
        raise ValueError(f"{prefix} is not a readable checkpoint ({error_line(error)}).") from None


def _tf1_weights(prefix, reader):
    """Original names; TF-Hub's `module/` is stripped, optimizer slots and global_step skipped."""
    stored = reader.get_variable_to_shape_map()
    names = {name.removeprefix(HUB_MODULE_PREFIX): name for name in stored}
    skipped = tuple(sorted(name for name in names if is_training_state(name)))
    return StoredWeights(
        path=prefix,
        format="TF1 checkpoint",
        shapes={name: list(stored[key]) for name, key in names.items() if name not in skipped},
        read=lambda name: reader.get_tensor(names[name]),
        skipped=skipped,
        hub_prefix=any(name.startswith(HUB_MODULE_PREFIX) for name in stored),
    )


class _ModelParts(tf.Module):
    """The backbone and heads of `model` under the attribute names every task model uses, so
    that a checkpoint of any of our models matches the parts this one has."""

    def __init__(self, model):
        super().__init__()
        self.albert = getattr(model, "albert", model)
        for head in HEAD_NAMES:
            if hasattr(model, head):
                setattr(self, head, getattr(model, head))


def _object_checkpoint_weights(prefix, reader, model):
    """Ours: the model under `model/`, a task model (`model/albert/...`) or a backbone alone.

    `tf.train.CheckpointView.match` pairs the checkpoint's objects with the model's parts the way
    restoring would; a matched variable is named by its TF1 name, an unmatched one by its key.
    """
    view = tf.train.CheckpointView(prefix)
    model_node = view.children(0).get(MODEL_KEY)
    if model_node is None:
        raise ValueError(
            f"{prefix} is an object-based checkpoint without a `{MODEL_KEY}` object (it holds "
            f"{sorted(view.children(0))}); expected a checkpoint written by this package's "
            "pretraining or fine-tuning, or an original TF1 checkpoint."
        )
    parts = _ModelParts(model)
    holds_backbone_alone = "albert" not in view.children(model_node)
    root = tf.train.Checkpoint(**{MODEL_KEY: parts.albert if holds_backbone_alone else parts})
    matched = {node: id(obj) for node, obj in view.match(root).items()}
    names = {id(variable): name for name, variable in tf1_variables(model).items()}

    model_paths = _paths_from(view, model_node)
    keys, skipped = {}, []
    for node_id, key in _variable_keys(reader).items():
        if node_id in model_paths:
            keys[names.get(matched.get(node_id), model_paths[node_id])] = key
        else:
            skipped.append(key.removesuffix(_VARIABLE_SUFFIX))
    stored_shapes = reader.get_variable_to_shape_map()
    return StoredWeights(
        path=prefix,
        format="TF2 checkpoint",
        shapes={name: list(stored_shapes[key]) for name, key in keys.items()},
        read=lambda name: reader.get_tensor(keys[name]),
        skipped=tuple(sorted(skipped)),
    )


def model_weight_keys(prefix):
    """{path under `model/`: checkpoint key} of every model weight in one of our checkpoints.

    A variable's key is its first path from the root, which may run through the optimizer
    (`optimizer/_trainable_variables/0`): what belongs to the model is what `model` reaches.
    """
    view = tf.train.CheckpointView(prefix)
    paths = _paths_from(view, view.children(0)[MODEL_KEY])
    keys = _variable_keys(tf.train.load_checkpoint(prefix))
    return {paths[node]: key for node, key in keys.items() if node in paths}


def _paths_from(view, start):
    """{node id: `model/...` path} of every object reachable from `start`, breadth first."""
    paths = {start: MODEL_KEY}
    queue = collections.deque([start])
    while queue:
        node = queue.popleft()
        for child_name, child in view.children(node).items():
            if child not in paths:
                paths[child] = f"{paths[node]}/{child_name}"
                queue.append(child)
    return paths


def _variable_keys(reader):
    """{node id: checkpoint key} of every saved variable of an object-based checkpoint."""
    graph = trackable_object_graph_pb2.TrackableObjectGraph.FromString(reader.get_tensor(_OBJECT_GRAPH_KEY))
    return {node_id: attribute.checkpoint_key
            for node_id, node in enumerate(graph.nodes) for attribute in node.attributes}


def _keras_weights(path, model):
    """A `.keras` file is loaded as the model it holds; a `.weights.h5` file into the model its
    layers name (pretraining, classifier or backbone), built from `model`'s config."""
    import keras  # pylint: disable=g-import-not-at-top

    if path.endswith(".keras"):
        try:
            source = keras.saving.load_model(path, compile=False)
        except (ValueError, TypeError, OSError) as error:
            raise ValueError(f"{path} is not a loadable .keras file of an ALBERT model ({error}).") from None
    else:
        source = _model_for_weights_file(path, model.config)
        try:
            source.load_weights(path)
        except (ValueError, OSError) as error:
            raise ValueError(f"{path} does not fit {type(source).__name__} of this config: {error}") from None
    try:
        variables = tf1_variables(source)
    except TypeError as error:
        raise ValueError(f"{path}: {error}") from None
    return StoredWeights(
        path=path,
        format="Keras file",
        shapes={name: list(variable.shape) for name, variable in variables.items()},
        read=lambda name: variables[name].numpy(),
    )


def _model_for_weights_file(path, config):
    import h5py  # pylint: disable=g-import-not-at-top

    from albert_tf.models import AlbertClassifier, AlbertModel, AlbertPretrainingModel  # pylint: disable=g-import-not-at-top

    try:
        with h5py.File(path, "r") as handle:
            layers = handle.get("layers")
            names = set(layers.keys()) if layers is not None else set()
            num_labels = handle["layers/classification_head/vars/0"].shape[0] if "classification_head" in names else None
    except OSError as error:
        raise ValueError(f"{path} is not a readable .weights.h5 file ({error}).") from None
    if "masked_lm_head" in names:
        return AlbertPretrainingModel(config)
    if num_labels is not None:
        return AlbertClassifier(config, num_labels)
    return AlbertModel(config)
