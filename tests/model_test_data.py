"""Tiny configs and batches shared by the model tests."""

import numpy as np

from albert_tf import AlbertConfig

TINY = "configs/albert_tiny.json"


def tiny(**changes):
    return AlbertConfig.from_json_file(TINY).replace(**changes)


def batch_for(config, batch=2, seq=12, predictions=3, seed=0):
    rng = np.random.default_rng(seed)
    inputs = {
        "input_word_ids": rng.integers(5, config.vocab_size, (batch, seq)).astype("int32"),
        "input_mask": np.ones((batch, seq), "int32"),
        "input_type_ids": np.zeros((batch, seq), "int32"),
        "masked_lm_positions": rng.integers(0, seq, (batch, predictions)).astype("int32"),
    }
    inputs["input_mask"][-1, seq // 2:] = 0
    inputs["input_type_ids"][:, seq // 3:] = 1
    return inputs


def backbone_inputs(inputs):
    return {k: inputs[k] for k in ("input_word_ids", "input_mask", "input_type_ids")}


def xla_compiled_functions(graph_def):
    """Names of the functions in a GraphDef's library that must be compiled by XLA."""
    return sorted(
        function.signature.name
        for function in graph_def.library.function
        if function.attr["_XlaMustCompile"].b
    )


def executed_op_types(function, *args):
    """{op type: count} of the kernels that one call of the traced `function` ran, as TF's
    profiler saw them: the graph after TF's rewrites (fusions, oneDNN ops), not the traced one."""
    import collections
    import pathlib
    import tempfile

    import tensorflow as tf
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    function(*args)  # trace and optimize outside the profile
    with tempfile.TemporaryDirectory() as logdir:
        tf.profiler.experimental.start(logdir)
        try:
            function(*args)
        finally:
            tf.profiler.experimental.stop()
        (path,) = pathlib.Path(logdir).rglob("*.xplane.pb")
        space = xplane_pb2.XSpace.FromString(path.read_bytes())
    counts = collections.Counter()
    for plane in space.planes:
        for line in plane.lines:
            if line.name.startswith("tf_Compute"):  # the executor's threads: one event per kernel run
                names = (plane.event_metadata[event.metadata_id].name for event in line.events)
                counts.update(name.rpartition(":")[2] for name in names if ":" in name)
    return counts
