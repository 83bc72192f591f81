"""The "eager" kernel set computes the reference's values and gradients (also recomputed), on
each backend (in a subprocess each; on JAX and PyTorch with TensorFlow unimportable): its fused
attention, its last-block rows read from the full block in inference, and attention dropout kept
in training."""

import pytest

from backend_process import run_on_backend

CHECK = """
import keras
import numpy as np
from albert_tf import AlbertModel, AlbertPretrainingModel
from albert_tf.kernels import get
from albert_tf.models import rebuilt
from backend_run import flat_outputs, gradients, kind_inputs, small_config

config = small_config()  # groups and inner groups, E != H: Q/K/V joined per group, reused per layer
reference = AlbertPretrainingModel(config)
eager = rebuilt(reference, kernels="eager")
assert eager.kernels == "eager" and eager.kernel_set.name == "eager"
inputs = kind_inputs("pretraining", config.vocab_size)

# Inference: every block once (the rows of the last come from it), where the reference runs the
# last block a second time at [CLS] and the masked positions; each group's Q/K/V kernels and
# biases joined once for the pass, not once per layer that shares them.
attended = {}
joins, concatenate = [], keras.ops.concatenate
keras.ops.concatenate = lambda values, **kwargs: joins.append(len(values)) or concatenate(values, **kwargs)
for model in (reference, eager):
    kernel_set, attend = model.kernel_set, type(model.kernel_set).attend
    kernel_set.attend = lambda *args, kernel_set=kernel_set, attend=attend: (
        attended.__setitem__(kernel_set.name, attended.get(kernel_set.name, 0) + 1) or attend(kernel_set, *args))
want, got = (flat_outputs(model(inputs, training=False)) for model in (reference, eager))
keras.ops.concatenate = concatenate
blocks = config.num_hidden_layers * config.inner_group_num
attention_layers = {id(attention) for attention, _ in eager.albert.encoder.blocks()}
assert config.num_hidden_layers > config.num_hidden_groups and len(attention_layers) < blocks
assert joins == [3, 3] * len(attention_layers), joins
assert attended == {"reference": blocks + 1, "eager": blocks}, attended
for name in want:
    np.testing.assert_allclose(got[name], want[name], atol=1e-5, rtol=0, err_msg=name)

# Inside a block, inference calls no Keras layer (each call costs Python time beyond its ops): Dense
# layers and LayerNorms are computed from their variables, inactive dropout is skipped.
def block_layers(model):
    return {id(layer) for attention, ffn in model.albert.encoder.blocks() for sublayer in (attention, ffn)
            for layer in sublayer._flatten_layers(include_self=False)}
layer_calls, call = {}, keras.layers.Layer.__call__
def counted(layer, *args, **kwargs):
    if id(layer) in watched:
        layer_calls[type(layer).__name__] = layer_calls.get(type(layer).__name__, 0) + 1
    return call(layer, *args, **kwargs)
keras.layers.Layer.__call__ = counted
for model in (reference, eager):
    watched = block_layers(model)
    layer_calls.clear()
    model(inputs, training=False)
    if model is reference:
        assert {"Dense", "LayerNormalization", "Dropout"} <= set(layer_calls), layer_calls
keras.layers.Layer.__call__ = call
assert layer_calls == {}, layer_calls

# Training (dropout 0: the fused attention), and through `keras.remat`, whose boundaries a join
# must not cross (JAX refuses it).
rng = np.random.default_rng(0)
labels = {"masked_lm_ids": rng.integers(0, config.vocab_size, (2, 3)).astype("int32"),
          "masked_lm_weights": np.array([[1.0, 1.0, 0.0], [1.0, 0.0, 1.0]], "float32"),
          "next_sentence_labels": np.array([0, 1], "int32")}
recomputed = AlbertPretrainingModel(config, backbone=AlbertModel(config, kernels="eager", recompute=True))
recomputed.set_weights(reference.get_weights())
want_loss, want_grads = gradients(reference, inputs, labels)
for model in (eager, recomputed):
    loss, grads = gradients(model, inputs, labels)
    assert abs(loss - want_loss) < 1e-5, (loss, want_loss)
    assert sorted(grads) == sorted(want_grads)
    for name, gradient in grads.items():
        scale = max(np.max(np.abs(want_grads[name])), 1e-6)
        assert np.max(np.abs(gradient - want_grads[name])) <= 1e-5 * scale + 1e-8, name

# Attention and output dropout in training: the reference's, mask for mask (the same seed); off,
# the fused op and the inputs themselves.
rng = np.random.default_rng(1)
query, key, value = (rng.normal(size=(2, 2, 5, 4)).astype("float32") for _ in range(3))
bias = np.zeros((2, 1, 1, 5), "float32")
bias[1, ..., 3:] = -10000.0
results = {}
for name in ("reference", "eager"):
    dropout = keras.layers.Dropout(0.5, seed=7)
    results[name] = [keras.ops.convert_to_numpy(get(name).attend(query, key, value, bias, 0.5, dropout, training))
                     for training in (True, False)]
    dropout = keras.layers.Dropout(0.5, seed=7)
    results[name] += [keras.ops.convert_to_numpy(get(name).dropout(dropout, value, training))
                      for training in (True, False)]
for trained, untrained in ((0, 1), (2, 3)):  # attention, then output dropout
    np.testing.assert_array_equal(results["eager"][trained], results["reference"][trained])
    np.testing.assert_allclose(results["eager"][untrained], results["reference"][untrained], atol=1e-6, rtol=0)
assert np.max(np.abs(results["eager"][0] - results["eager"][1])) > 0.1  # the attention dropout was applied
assert np.mean(results["eager"][2] == 0) > 0.2  # the output dropout was applied
np.testing.assert_array_equal(results["eager"][3], value)
print(len(grads))
"""


@pytest.mark.parametrize("backend", ["torch", "jax", "tensorflow"])
def test_eager_set_equals_the_reference_in_outputs_and_gradients(backend):
    output = run_on_backend(backend, CHECK, tensorflow=backend == "tensorflow")
    assert int(output.split()[-1]) > 20  # every trainable weight compared
