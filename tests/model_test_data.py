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
