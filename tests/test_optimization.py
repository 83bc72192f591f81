"""LAMB, AdamW and the schedule against the original's formulas, computed by hand in numpy."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_tf.training import optimization, replica_update
from optimizer_reference import BETA_1, reference_steps


def run_optimizer(optimizer, variables, gradient_steps, clip_norm=None):
    optimizer.build(variables)
    norms = []
    for gradients in gradient_steps:
        norms.append(
            float(
                replica_update.apply_gradients_across_replicas(
                    optimizer, [tf.constant(g) for g in gradients], variables, clip_norm=clip_norm
                )
            )
        )
    return norms


@pytest.mark.parametrize("name", ["lamb", "adamw"])
def test_updates_match_hand_computed_formula(name):
    rng = np.random.default_rng(1)
    kernel0 = rng.normal(size=(3, 4)).astype(np.float32)
    bias0 = rng.normal(size=(4,)).astype(np.float32)
    kernel_grads = [rng.normal(size=(3, 4)).astype(np.float32) for _ in range(3)]
    bias_grads = [rng.normal(size=(4,)).astype(np.float32) for _ in range(3)]
    kernel = keras.Variable(kernel0, name="kernel")
    bias = keras.Variable(bias0, name="bias")
    optimizer = (optimization.Lamb if name == "lamb" else optimization.AdamWeightDecay)(learning_rate=0.1)

    run_optimizer(optimizer, [kernel, bias], list(zip(kernel_grads, bias_grads)))

    lrs = [0.1] * 3
    expected_kernel = reference_steps(kernel0, kernel_grads, lrs, decays=True, layer_adaptation=name == "lamb")
    expected_bias = reference_steps(bias0, bias_grads, lrs, decays=False, layer_adaptation=False)
    np.testing.assert_allclose(kernel.numpy(), expected_kernel, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bias.numpy(), expected_bias, rtol=1e-5, atol=1e-6)
    assert int(optimizer.iterations.numpy()) == 3


def test_lamb_trust_ratio_is_one_for_zero_weights():
    gradient = np.array([[0.5, -2.0]], np.float32)
    weights = keras.Variable(np.zeros((1, 2), np.float32), name="kernel")
    run_optimizer(optimization.Lamb(learning_rate=0.1), [weights], [[gradient]])
    expected = reference_steps(np.zeros((1, 2)), [gradient], [0.1], decays=True, layer_adaptation=True)
    np.testing.assert_allclose(weights.numpy(), expected, rtol=1e-6)
    # With zero weights the ratio is 1 and, without bias correction, the first step is
    # lr * (1 - beta_1) / sqrt(1 - beta_2) * sign(g) = 0.1 * 3.162 * sign(g).
    np.testing.assert_allclose(weights.numpy(), [[-0.31623, 0.31623]], rtol=1e-4)


def slot(optimizer, suffix):
    (variable,) = [v for v in optimizer.variables if v.name.endswith(suffix)]
    return variable.numpy()


def test_gradients_are_clipped_by_global_norm_before_the_update():
    rng = np.random.default_rng(2)
    big = [rng.normal(size=(2, 3)).astype(np.float32) * 100, rng.normal(size=(3,)).astype(np.float32) * 100]
    global_norm = np.sqrt(sum(np.sum(g.astype(np.float64) ** 2) for g in big))
    variables = [keras.Variable(np.ones((2, 3), np.float32), name="kernel"), keras.Variable(np.ones(3, np.float32), name="bias")]
    optimizer = optimization.Lamb(learning_rate=0.1)

    norms = run_optimizer(optimizer, variables, [big], clip_norm=1.0)

    assert norms[0] == pytest.approx(global_norm, rel=1e-5)
    # The first momentum is (1 - beta_1) * gradient: it shows the gradient that was applied.
    np.testing.assert_allclose(slot(optimizer, "kernel_adam_m"), (1 - BETA_1) * big[0] / global_norm, rtol=1e-5)
    np.testing.assert_allclose(slot(optimizer, "bias_adam_m"), (1 - BETA_1) * big[1] / global_norm, rtol=1e-5)


def test_weight_decay_exclusions_follow_the_original_patterns_on_model_paths():
    optimizer = optimization.Lamb()
    excluded = [
        "embeddings/layer_norm/gamma",
        "encoder/group_0_inner_group_0_ffn/layer_norm/beta",
        "masked_lm_head/transform_layer_norm/gamma",
        "masked_lm_head/output_bias",
        "sentence_order_head/output_bias",
        "pooler/bias",
        "cls/predictions/transform/LayerNorm/beta",
    ]
    decayed = [
        "embeddings/word_embeddings",
        "embeddings/projection/kernel",
        "encoder/group_0_inner_group_0_attention/query/kernel",
        "sentence_order_head/output_weights",
    ]
    for path in excluded:
        assert not optimizer.uses_weight_decay(_Named(path))
    for path in decayed:
        assert optimizer.uses_weight_decay(_Named(path))


class _Named:
    def __init__(self, path):
        self.path = path
        self.name = path


def schedule_values(schedule, steps):
    return [float(schedule(step)) for step in steps]


def test_schedule_warmup_then_linear_decay_with_the_original_semantics():
    init, total, warmup = 0.00176, 1000, 100
    schedule = optimization.WarmupPolynomialDecay(init, total, warmup_steps=warmup)
    values = schedule_values(schedule, [0, 1, 50, 99, 100, 500, 1000, 2000])
    expected = [
        0.0,
        init * 1 / warmup,
        init * 50 / warmup,
        init * 99 / warmup,
        # Warmup over: the decay counts from step 0, so the rate drops below init here.
        init * (1 - 100 / total),
        init * (1 - 500 / total),
        0.0,
        0.0,
    ]
    np.testing.assert_allclose(values, expected, rtol=1e-5, atol=1e-12)


def test_schedule_power_and_start_warmup_step():
    init, total = 1.0, 100
    schedule = optimization.WarmupPolynomialDecay(init, total, warmup_steps=10, start_warmup_step=20, power=0.5)
    values = schedule_values(schedule, [0, 20, 25, 30, 64])
    expected = [0.0, 0.0, 0.5, (1 - 30 / 100) ** 0.5, (1 - 64 / 100) ** 0.5]
    np.testing.assert_allclose(values, expected, rtol=1e-5, atol=1e-12)


def test_schedule_without_warmup_is_plain_polynomial_decay():
    schedule = optimization.WarmupPolynomialDecay(2.0, 10)
    np.testing.assert_allclose(schedule_values(schedule, [0, 5, 10]), [2.0, 1.0, 0.0], rtol=1e-6)


def test_create_optimizer_uses_the_schedule_on_the_optimizer_step():
    optimizer = optimization.create_optimizer("adamw", 0.5, num_train_steps=10, num_warmup_steps=2)
    assert isinstance(optimizer, optimization.AdamWeightDecay)
    assert not isinstance(optimizer, optimization.Lamb)
    weights = keras.Variable(np.ones(2, np.float32), name="kernel")
    optimizer.build([weights])
    assert float(optimizer.learning_rate) == 0.0
    run_optimizer(optimizer, [weights], [[np.ones(2, np.float32)]])
    # The first update ran at lr 0 (as in the original), so the weights did not move.
    np.testing.assert_allclose(weights.numpy(), [1.0, 1.0])
    assert float(optimizer.learning_rate) == pytest.approx(0.25)
    with pytest.raises(ValueError, match="optimizer must be one of"):
        optimization.create_optimizer("sgd", 0.1, 10)


def test_slots_are_named_after_the_variable():
    weights = keras.Variable(np.ones(2, np.float32), name="kernel")
    optimizer = optimization.Lamb(learning_rate=0.1)
    run_optimizer(optimizer, [weights], [[np.ones(2, np.float32)]])
    np.testing.assert_allclose(slot(optimizer, "kernel_adam_m"), [0.1, 0.1], rtol=1e-6)
    np.testing.assert_allclose(slot(optimizer, "kernel_adam_v"), [0.001, 0.001], rtol=1e-4)


def test_non_finite_gradients_are_skipped_when_asked():
    weights = keras.Variable(np.ones(2, np.float32), name="kernel")
    optimizer = optimization.Lamb(learning_rate=0.1)
    optimizer.build([weights])
    norm = replica_update.apply_gradients_across_replicas(
        optimizer, [tf.constant([np.nan, 1.0])], [weights], skip_non_finite=True
    )
    assert not np.isfinite(float(norm))
    np.testing.assert_array_equal(weights.numpy(), [1.0, 1.0])
    assert int(optimizer.iterations.numpy()) == 0
    np.testing.assert_array_equal(slot(optimizer, "kernel_adam_m"), [0.0, 0.0])


def test_dynamic_loss_scale_halves_on_overflow_and_grows_after_the_interval():
    from albert_tf.pretraining.loss_scale import DynamicLossScale

    loss_scale = DynamicLossScale(initial_scale=8.0, growth_interval=2)
    loss_scale.update(tf.constant(False))
    assert float(loss_scale.scale) == 4.0
    loss_scale.update(tf.constant(True))
    assert float(loss_scale.scale) == 4.0
    loss_scale.update(tf.constant(True))
    assert float(loss_scale.scale) == 8.0 and int(loss_scale.finite_steps) == 0
    np.testing.assert_allclose([float(g) for g in loss_scale.unscale([tf.constant(16.0)])], [2.0])
