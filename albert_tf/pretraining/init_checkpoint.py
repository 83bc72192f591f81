"""`--init_checkpoint`: start from an original TF1 checkpoint or from one of ours."""

import tensorflow as tf

from albert_tf.checkpoints import load_tf1_checkpoint, resolve_checkpoint_prefix
from albert_tf.pretraining.model_variables import CHECKPOINT_KEY, variables_by_path

OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"


def initialize_model(model, path, strict=True, init_from_group0=False):
    """Loads weights (never optimizer state) into `model`; returns a report to print.

    A TF2 object-based checkpoint (ours: `run_pretraining` output, a `ckpt-N` prefix or its
    directory) is read by variable path (see `model_variables`); anything else is taken for an
    original name-based checkpoint and goes through `load_tf1_checkpoint`. Raises ValueError
    when the checkpoint does not fit the model (strict: any model variable left unset).
    """
    prefix = resolve_checkpoint_prefix(path)
    stored = dict(tf.train.list_variables(prefix))
    if OBJECT_GRAPH_KEY not in stored:
        return str(load_tf1_checkpoint(model, prefix, strict=strict, init_from_group0=init_from_group0))
    if init_from_group0:
        raise ValueError("init_from_group0 applies to original TF1 checkpoints only")
    variables = variables_by_path(model)
    problems = []
    for path, variable in variables.items():
        shape = stored.get(checkpoint_key(path))
        if shape is None:
            problems.append(f"{path} missing")
        elif list(shape) != list(variable.shape):
            problems.append(f"{path} has shape {list(shape)} there, {list(variable.shape)} in the model")
    if problems and (strict or any("shape" in problem for problem in problems)):
        raise ValueError(f"{prefix} does not match the model: {'; '.join(problems[:10])}")
    status = tf.train.Checkpoint(**{CHECKPOINT_KEY: variables}).read(prefix)
    status.expect_partial()
    loaded = len(variables) - len(problems)
    return f"Loaded {loaded} of {len(variables)} model variables from {prefix} (TF2 checkpoint; optimizer state not loaded)."


def checkpoint_key(path):
    """The name under which `tf.train.Checkpoint` stores the variable at `path` in our layout."""
    escaped = path.replace(".", "..").replace("/", ".S")
    return f"{CHECKPOINT_KEY}/{escaped}/.ATTRIBUTES/VARIABLE_VALUE"
