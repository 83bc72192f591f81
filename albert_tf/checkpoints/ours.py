"""Our checkpoints: `tf.train.Checkpoint(model=..., optimizer=...)`, as pretraining and fine-tuning write them.

The reader pairs the checkpoint's objects with the model's parts the way restoring would and
names each matched weight by its TF1 name; whatever is not reached from `model` (the optimizer's
slots, steps) is skipped.
"""

import collections

import tensorflow as tf
from tensorflow.core.protobuf import trackable_object_graph_pb2

from albert_tf.checkpoints.names import HEAD_NAMES, MODEL_KEY, tf1_variables
from albert_tf.checkpoints.stored import StoredWeights

OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"
_VARIABLE_SUFFIX = "/.ATTRIBUTES/VARIABLE_VALUE"
# Where a compiled Keras model keeps its optimizer.
OPTIMIZER_ATTRIBUTES = ("optimizer", "_optimizer")


class _ModelParts(tf.Module):
    """The backbone and heads of `model` under the attribute names every task model uses, so
    that a checkpoint of any of our models matches the parts this one has."""

    def __init__(self, model):
        super().__init__()
        self.albert = getattr(model, "albert", model)
        for head in HEAD_NAMES:
            if hasattr(model, head):
                setattr(self, head, getattr(model, head))


def read_ours(prefix, reader, model):
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
    """{node id: `model/...` path} of every object reachable from `start`, breadth first, not
    through an optimizer: a compiled Keras model tracks its optimizer (SQuAD and RACE outputs'
    `best/model` hold its slots), whose state is not the model's weights."""
    paths = {start: MODEL_KEY}
    queue = collections.deque([start])
    while queue:
        node = queue.popleft()
        for child_name, child in view.children(node).items():
            if child not in paths and child_name not in OPTIMIZER_ATTRIBUTES:
                paths[child] = f"{paths[node]}/{child_name}"
                queue.append(child)
    return paths


def _variable_keys(reader):
    """{node id: checkpoint key} of every saved variable of an object-based checkpoint."""
    graph = trackable_object_graph_pb2.TrackableObjectGraph.FromString(reader.get_tensor(OBJECT_GRAPH_KEY))
    return {node_id: attribute.checkpoint_key
            for node_id, node in enumerate(graph.nodes) for attribute in node.attributes}
