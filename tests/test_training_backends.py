"""The optimizers, schedule and pretraining losses on JAX and PyTorch, without TensorFlow.

Each backend runs in a subprocess of its own with `tensorflow` unimportable and trains the same
variables for several steps through Keras' own `optimizer.apply` (with `global_clipnorm=1.0`, as
fine-tuning does); the results are checked against the original's formulas written out in NumPy.
"""

import json

import numpy as np
import pytest

from backend_process import run_on_backend
from optimizer_reference import reference_steps

LEARNING_RATE, TRAIN_STEPS, WARMUP_STEPS = 0.1, 10, 2
# A rank-3 kernel (LAMB's norms are over every element) and a bias (excluded from decay).
SHAPES = {"kernel": (2, 3, 4), "bias": (4,)}
# Gradient scales: norms above 1 are clipped, the last steps' are not.
SCALES = (40.0, 5.0, 0.05, 0.02, 0.01)
SCHEDULE = {"initial_learning_rate": 1.0, "decay_steps": 100, "warmup_steps": 10, "start_warmup_step": 20,
            "power": 0.5}
SCHEDULE_STEPS = (0, 20, 25, 30, 64, 100, 150)
BATCH, POSITIONS, VOCAB = 3, 4, 7

CHILD = r"""
import json
import keras
import numpy as np
from keras import ops
from albert_tf.pretraining.losses import pretraining_losses
from albert_tf.training import optimization

data = dict(np.load(sys.argv[1], allow_pickle=False))
settings = json.loads(sys.argv[2])
to_numpy = lambda x: np.asarray(ops.convert_to_numpy(x), np.float64).tolist()
result = {"backend": keras.backend.backend()}
for name in ("lamb", "adamw"):
    variables = [keras.Variable(data[f"initial_{v}"], name=v) for v in ("kernel", "bias")]
    optimizer = optimization.create_optimizer(name, settings["learning_rate"], settings["train_steps"],
                                              settings["warmup_steps"], global_clipnorm=1.0)
    for step in range(len(settings["scales"])):
        optimizer.apply([ops.convert_to_tensor(data[f"gradient_{v}_{step}"]) for v in ("kernel", "bias")],
                        variables)
    result[name] = {v.name: to_numpy(v) for v in variables}
    result[name + "_slots"] = sorted(v.name for v in optimizer.variables if v.name != "iteration")
    result[name + "_iterations"] = int(ops.convert_to_numpy(optimizer.iterations))
schedule = optimization.WarmupPolynomialDecay(**settings["schedule"])
result["schedule"] = [float(ops.convert_to_numpy(schedule(step))) for step in settings["schedule_steps"]]
features = {name: ops.convert_to_tensor(data[name])
            for name in ("masked_lm_ids", "masked_lm_weights", "next_sentence_labels")}
outputs = {name: ops.convert_to_tensor(data[name]) for name in ("mlm_logits", "sop_logits")}
losses = pretraining_losses(outputs, features, ops.sum(features["masked_lm_weights"]), data["mlm_logits"].shape[0])
result["losses"] = {name: to_numpy(value) for name, value in losses._asdict().items()}
result["tensorflow_stayed_out"] = sys.modules["tensorflow"] is None
print(json.dumps(result))
"""


def original_learning_rate(step, init, decay_steps, warmup_steps=0, start_warmup_step=0, power=1.0):
    """The original's schedule at one step (its negative warmup before the start made 0, as ours)."""
    decayed = init * (1 - min(step, decay_steps) / decay_steps) ** power
    into_warmup = step - start_warmup_step
    if warmup_steps and into_warmup < warmup_steps:
        return init * max(into_warmup, 0) / warmup_steps
    return decayed


def log_softmax(logits):
    shifted = logits - logits.max(-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))


def cross_entropy(logits, labels):
    return -np.take_along_axis(log_softmax(logits.astype(np.float64)), labels[..., None], -1)[..., 0]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    rng = np.random.default_rng(57)
    data = {f"initial_{name}": rng.normal(size=shape).astype(np.float32) for name, shape in SHAPES.items()}
    for step, scale in enumerate(SCALES):
        for name, shape in SHAPES.items():
            data[f"gradient_{name}_{step}"] = (scale * rng.normal(size=shape)).astype(np.float32)
    data["mlm_logits"] = rng.normal(size=(BATCH, POSITIONS, VOCAB)).astype(np.float32)
    data["sop_logits"] = rng.normal(size=(BATCH, 2)).astype(np.float32)
    data["masked_lm_ids"] = rng.integers(0, VOCAB, (BATCH, POSITIONS)).astype(np.int32)
    data["masked_lm_weights"] = np.array([[1, 1, 1, 0], [1, 1, 0, 0], [1, 1, 1, 1]], np.float32)
    data["next_sentence_labels"] = rng.integers(0, 2, (BATCH, 1)).astype(np.int32)
    # One logit set to the target's maximum, so that "correct" holds both values.
    data["mlm_logits"][0, 0, data["masked_lm_ids"][0, 0]] = 10.0
    path = tmp_path_factory.mktemp("training_backends") / "inputs.npz"
    np.savez(path, **data)
    return path, data


@pytest.fixture(scope="module", params=["jax", "torch"])
def backend_result(request, inputs):
    settings = {"learning_rate": LEARNING_RATE, "train_steps": TRAIN_STEPS, "warmup_steps": WARMUP_STEPS,
                "scales": SCALES, "schedule": SCHEDULE, "schedule_steps": SCHEDULE_STEPS}
    output = run_on_backend(request.param, CHILD, str(inputs[0]), json.dumps(settings))
    result = json.loads(output.strip().splitlines()[-1])
    assert result["backend"] == request.param and result["tensorflow_stayed_out"]
    return result


def clipped_gradients(data):
    """Each step's gradients scaled to global norm 1.0 when above it (the original's clip)."""
    steps = []
    for step in range(len(SCALES)):
        gradients = {name: data[f"gradient_{name}_{step}"].astype(np.float64) for name in SHAPES}
        norm = np.sqrt(sum(np.sum(g**2) for g in gradients.values()))
        steps.append({name: g / max(norm, 1.0) for name, g in gradients.items()})
    return steps


@pytest.mark.parametrize("name", ["lamb", "adamw"])
def test_several_steps_match_the_originals_formulas(backend_result, inputs, name):
    data = inputs[1]
    steps = clipped_gradients(data)
    learning_rates = [original_learning_rate(step, LEARNING_RATE, TRAIN_STEPS, WARMUP_STEPS)
                      for step in range(len(SCALES))]
    assert learning_rates[0] == 0.0 and learning_rates[-1] < learning_rates[2]  # warmup, then decay
    for variable, decays in (("kernel", True), ("bias", False)):
        expected = reference_steps(data[f"initial_{variable}"], [s[variable] for s in steps], learning_rates,
                                   decays=decays, layer_adaptation=decays and name == "lamb")
        np.testing.assert_allclose(backend_result[name][variable], expected, rtol=1e-5, atol=1e-6)
    assert backend_result[name + "_iterations"] == len(SCALES)
    # The slot names of the TensorFlow backend, so checkpoints keep their keys.
    assert backend_result[name + "_slots"] == ["bias_adam_m", "bias_adam_v", "kernel_adam_m", "kernel_adam_v"]


def test_schedule_values(backend_result):
    expected = [original_learning_rate(step, **{"init" if k == "initial_learning_rate" else k: v
                                                for k, v in SCHEDULE.items()}) for step in SCHEDULE_STEPS]
    assert expected[:2] == [0.0, 0.0] and expected[2] == 0.5
    np.testing.assert_allclose(backend_result["schedule"], expected, rtol=1e-6, atol=1e-12)


def test_pretraining_losses(backend_result, inputs):
    data = inputs[1]
    losses = backend_result["losses"]
    mlm = cross_entropy(data["mlm_logits"], data["masked_lm_ids"])
    labels = data["next_sentence_labels"].reshape(-1)
    sop = cross_entropy(data["sop_logits"], labels)
    weights = data["masked_lm_weights"]
    np.testing.assert_allclose(losses["masked_lm_losses"], mlm, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(losses["sentence_order_losses"], sop, rtol=1e-5)
    expected_loss = (mlm * weights).sum() / (weights.sum() + 1e-5) + sop.sum() / BATCH
    np.testing.assert_allclose(losses["loss"], expected_loss, rtol=1e-5)
    mlm_correct = data["mlm_logits"].argmax(-1) == data["masked_lm_ids"]
    assert mlm_correct.any() and not mlm_correct.all()
    np.testing.assert_array_equal(losses["masked_lm_correct"], mlm_correct.astype(np.float64))
    np.testing.assert_array_equal(losses["sentence_order_correct"], data["sop_logits"].argmax(-1) == labels)
