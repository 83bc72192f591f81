"""The "eager" kernel set computes the reference's values and gradients (also recomputed), on
PyTorch and JAX (in a subprocess each, TensorFlow unimportable; on TensorFlow
`test_kernel_sets.py` checks its outputs)."""

import pytest

from backend_process import run_on_backend

CHECK = """
import numpy as np
from albert_tf import AlbertModel, AlbertPretrainingModel
from albert_tf.models import rebuilt
from backend_run import flat_outputs, gradients, kind_inputs, small_config

config = small_config()  # groups and inner groups, E != H: Q/K/V joined per group, reused per layer
reference = AlbertPretrainingModel(config)
eager = rebuilt(reference, kernels="eager")
assert eager.kernels == "eager" and eager.kernel_set.name == "eager"
inputs = kind_inputs("pretraining", config.vocab_size)
want, got = (flat_outputs(model(inputs, training=False)) for model in (reference, eager))
for name in want:
    np.testing.assert_allclose(got[name], want[name], atol=1e-5, rtol=0, err_msg=name)
rng = np.random.default_rng(0)
labels = {"masked_lm_ids": rng.integers(0, config.vocab_size, (2, 3)).astype("int32"),
          "masked_lm_weights": np.array([[1.0, 1.0, 0.0], [1.0, 0.0, 1.0]], "float32"),
          "next_sentence_labels": np.array([0, 1], "int32")}
# And through `keras.remat`, whose boundaries a join must not cross (JAX refuses it).
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
print(len(grads))
"""


@pytest.mark.parametrize("backend", ["torch", "jax"])
def test_eager_set_equals_the_reference_in_outputs_and_gradients(backend):
    assert int(run_on_backend(backend, CHECK).split()[-1]) > 20  # every trainable weight compared
