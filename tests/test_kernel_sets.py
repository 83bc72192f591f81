"""Choosing a kernel set: by name, "auto" for the scripts, and the same model with another set."""

import types

import keras
import numpy as np
import pytest

from albert_tf import AlbertClassifier, AlbertModel, kernels
from albert_tf.layers import AttentionSubLayer, FeedForwardSubLayer, SharedTransformerEncoder, attention_bias
from albert_tf.models import copied, rebuilt
from model_test_data import backbone_inputs, batch_for, tiny


def devices(*types_):
    return [types.SimpleNamespace(device_type=device_type) for device_type in types_]


def test_auto_picks_cpu_without_accelerators_and_reference_with_them():
    assert kernels.choose("auto", devices("CPU")) == "cpu"
    assert kernels.choose("auto", devices("CPU", "GPU")) == "reference"
    assert kernels.choose("auto", devices("CPU", "TPU")) == "reference"
    assert kernels.choose("cpu_inference", devices("GPU")) == "cpu_inference"  # explicit wins


def test_deterministic_runs_take_the_reference_set_and_refuse_the_others(caplog):
    caplog.set_level("INFO", logger="absl")  # another test may have set absl's own level higher
    assert kernels.choose("auto", devices("CPU"), deterministic=True) == "reference"
    assert "using the 'reference' kernel set (the one bit-identical from run to run)" in caplog.text
    assert kernels.choose("reference", devices("CPU"), deterministic=True) == "reference"
    for name in ("cpu", "cpu_inference", "cpu_serving"):
        with pytest.raises(ValueError, match=rf"kernels '{name}' are not bit-identical from run to run"):
            kernels.choose(name, devices("CPU"), deterministic=True)


def test_unknown_names_are_refused():
    with pytest.raises(ValueError, match=r"unknown kernels 'fast'; allowed: \['reference', 'cpu', 'cpu_inference', 'cpu_serving', 'eager'\]"):
        kernels.get("fast")


@pytest.mark.parametrize("name", ["cpu", "cpu_inference", "cpu_serving", "eager"])
def test_rebuilt_copies_config_and_weights(name):
    config = tiny()
    model = AlbertClassifier(config, num_labels=3)
    copy = rebuilt(model, kernels=name)
    assert copy is not model and copy.kernels == name and copy.num_labels == 3
    assert rebuilt(copy, kernels=name) is copy
    for ours, theirs in zip(model.weights, copy.weights):
        np.testing.assert_array_equal(ours, theirs)
    inputs = backbone_inputs(batch_for(config))
    np.testing.assert_allclose(copy(inputs)["logits"], model(inputs)["logits"], atol=1e-5)


def test_rebuilt_changes_the_dtype_policy_and_keeps_the_weights():
    config = tiny()
    model = AlbertClassifier(config, num_labels=2)
    assert rebuilt(model, dtype="float32") is model and rebuilt(model) is model
    mixed = rebuilt(model, dtype="mixed_bfloat16", kernels="cpu")
    assert mixed.dtype_policy_name == "mixed_bfloat16" and mixed.kernels == "cpu"
    for ours, theirs in zip(model.weights, mixed.weights):
        np.testing.assert_array_equal(ours, theirs)
    back = rebuilt(mixed, dtype="float32", kernels="reference")
    assert back.dtype_policy_name == "float32" and back.kernels == "reference"
    inputs = backbone_inputs(batch_for(config))
    np.testing.assert_array_equal(back(inputs)["logits"], model(inputs)["logits"])


def test_copied_is_always_a_new_model():
    model = AlbertClassifier(tiny(), num_labels=2)
    copy = copied(model)
    assert copy is not model and copy.kernels == model.kernels
    for ours, theirs in zip(model.weights, copy.weights):
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("name", ["cpu", "cpu_inference", "cpu_serving"])
def test_tensorflow_kernel_sets_are_refused_on_other_backends(monkeypatch, name):
    monkeypatch.setattr(keras.backend, "backend", lambda: "jax")
    message = rf"kernels '{name}' are TensorFlow's and need the tensorflow backend \(KERAS_BACKEND=tensorflow\); Keras runs on 'jax'"
    for choice in (lambda: kernels.get(name), lambda: kernels.choose(name), lambda: AlbertModel(tiny(), kernels=name)):
        with pytest.raises(ValueError, match=message):
            choice()


@pytest.mark.parametrize("backend, chosen", [("jax", "reference"), ("torch", "eager")])
def test_auto_off_tensorflow_is_the_backends_set_whatever_the_devices(monkeypatch, backend, chosen):
    monkeypatch.setattr(keras.backend, "backend", lambda: backend)
    assert kernels.choose("auto") == chosen
    assert kernels.choose("auto", devices("CPU")) == chosen
    assert kernels.choose("auto", devices("CPU"), deterministic=True) == "reference"


@pytest.mark.parametrize("make", [
    lambda: AttentionSubLayer(16, 2),
    lambda: FeedForwardSubLayer(16, 32),
    lambda: SharedTransformerEncoder(2, 16, 2, 32),
], ids=["attention", "ffn", "encoder"])
def test_sub_layers_build_and_deserialize_alone_with_the_reference_set(make):
    layer = make()
    again = type(layer).from_config(layer.get_config())
    assert layer.kernels.name == again.kernels.name == "reference"
    states, mask = np.ones((1, 3, 16), "float32"), np.ones((1, 3), "int32")
    if isinstance(layer, SharedTransformerEncoder):
        outputs, rows = again(states, mask, np.zeros((1, 1), "int32"))
        assert len(outputs) == 2 and rows.shape == (1, 1, 16)
    else:
        args = (states, attention_bias(mask)) if isinstance(layer, AttentionSubLayer) else (states,)
        assert again(*args).shape == (1, 3, 16)
