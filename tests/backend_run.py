"""The model library on one Keras backend, without TensorFlow: run by `test_backends.py` in a
subprocess per backend (KERAS_BACKEND=jax or torch), with `tensorflow` made unimportable first.

`python backend_run.py SPEC.json`, SPEC naming its work directory, the directories of the
backends that ran before (their weights and outputs to check here) and the Hugging Face cases.
Every kind of model is built, called, saved (`.weights.h5`) and reloaded; the weights the other
backends saved give their outputs here; the HF cases' outputs and training gradients equal HF's.
Prints one JSON line of what it measured; any failure is an exception (a non-zero exit).
"""

import json
import os
import sys

import keras
import numpy as np
from keras import ops

from albert_tf import (AlbertClassifier, AlbertConfig, AlbertModel, AlbertMultipleChoice, AlbertPretrainingModel,
                       AlbertQuestionAnswering, kernels)
from albert_tf.checkpoints import load, tf1_variables

# As the TensorFlow parity tests: outputs within 1e-5, gradients within 1e-4 of their largest value.
OUTPUT_TOLERANCE = 1e-5
GRADIENT_TOLERANCE = 1e-4
# The same weights on another backend: float32 rounding of a different order of operations.
CROSS_BACKEND_TOLERANCE = 1e-5

MODEL_KINDS = {
    "backbone": lambda config: AlbertModel(config),
    "pretraining": lambda config: AlbertPretrainingModel(config),
    "classifier": lambda config: AlbertClassifier(config, num_labels=3),
    "multiple_choice": lambda config: AlbertMultipleChoice(config, num_choices=2),
    "squad_v1": lambda config: AlbertQuestionAnswering(config),
    "squad_v2": lambda config: AlbertQuestionAnswering(config, version_2_with_negative=True, start_n_top=2,
                                                       end_n_top=2),
}
# The kinds whose `.weights.h5` files `albert_tf.checkpoints.load` reads (see `checkpoints.keras_file`): all.
KINDS_OUR_LOADER_READS = tuple(MODEL_KINDS)


def small_config():
    """albert_tiny's shape with groups and inner groups, E != H, a small vocabulary."""
    return AlbertConfig(vocab_size=97, embedding_size=16, hidden_size=32, num_hidden_layers=4, num_hidden_groups=2,
                        inner_group_num=2, num_attention_heads=2, intermediate_size=64, max_position_embeddings=32)


def kind_inputs(kind, vocab_size, batch=2, length=10):
    rng = np.random.default_rng(5)
    shape = (batch, 2, length) if kind == "multiple_choice" else (batch, length)
    inputs = {"input_word_ids": rng.integers(5, vocab_size, shape).astype("int32"),
              "input_mask": np.ones(shape, "int32"), "input_type_ids": np.zeros(shape, "int32")}
    inputs["input_mask"][..., length - 3:] = 0
    inputs["input_type_ids"][..., length // 2:] = 1
    if kind in ("backbone", "pretraining"):
        inputs["masked_lm_positions"] = rng.integers(0, length, (batch, 3)).astype("int32")
    if kind.startswith("squad"):
        inputs["p_mask"] = np.zeros(shape, "int32")
        inputs["p_mask"][:, :2] = 1
    return inputs


def flat_outputs(outputs, prefix=""):
    """{name: NumPy array} of a model's (nested) outputs."""
    if isinstance(outputs, dict):
        return {key: value for name in sorted(outputs) for key, value in flat_outputs(outputs[name], f"{prefix}{name}/").items()}
    if isinstance(outputs, (list, tuple)):
        return {key: value for index, item in enumerate(outputs)
                for key, value in flat_outputs(item, f"{prefix}{index}/").items()}
    return {prefix.rstrip("/"): ops.convert_to_numpy(outputs)}


def outputs_of(model, kind, vocab_size):
    return flat_outputs(model(kind_inputs(kind, vocab_size), training=False))


def save_every_kind(directory, seed):
    """Each kind built here (this backend's random initialisation), saved with its outputs."""
    config = small_config()
    os.makedirs(directory, exist_ok=True)
    for kind, make in MODEL_KINDS.items():
        keras.utils.set_random_seed(seed)
        model = make(config)
        expected = outputs_of(model, kind, config.vocab_size)
        path = os.path.join(directory, f"{kind}.weights.h5")
        model.save_weights(path)
        np.savez(os.path.join(directory, f"{kind}.npz"), **expected)
        reloads = [lambda again: again.load_weights(path)]
        if kind in KINDS_OUR_LOADER_READS:
            reloads.append(lambda again: load(again, path))
        for reload in reloads:
            keras.utils.set_random_seed(seed + 1)
            again = make(config)
            reload(again)
            for name, value in outputs_of(again, kind, config.vocab_size).items():
                np.testing.assert_array_equal(value, expected[name], err_msg=f"{kind} reloaded: {name}")


def check_saved_elsewhere(directory):
    """The weights another backend saved give its outputs here: {kind: max |difference|}."""
    config = small_config()
    worst = {}
    for kind, make in MODEL_KINDS.items():
        model = make(config)
        model.load_weights(os.path.join(directory, f"{kind}.weights.h5"))
        with np.load(os.path.join(directory, f"{kind}.npz")) as saved:
            theirs = dict(saved)
        ours = outputs_of(model, kind, config.vocab_size)
        assert sorted(ours) == sorted(theirs), kind
        for name, value in ours.items():
            if value.dtype.kind in "iu":  # the SQuAD 2.0 beam's positions
                np.testing.assert_array_equal(value, theirs[name], err_msg=f"{kind}: {name}")
            else:
                np.testing.assert_allclose(value, theirs[name], rtol=0, atol=CROSS_BACKEND_TOLERANCE,
                                           err_msg=f"{kind} from {directory}: {name}")
        worst[kind] = max(float(np.max(np.abs(ours[n].astype("float64") - theirs[n]))) for n in ours)
    return worst


def check_keras_hub_preset(preset):
    """A keras-hub preset (written on TensorFlow) read by our keras-hub reader gives the
    TensorFlow backbone's outputs here: the largest |difference|."""
    model = AlbertModel.from_pretrained(preset)
    with np.load(os.path.join(preset, "..", "backbone.npz")) as saved:
        theirs = dict(saved)
    ours = outputs_of(model, "backbone", model.config.vocab_size)
    for name, value in ours.items():
        np.testing.assert_allclose(value, theirs[name], rtol=0, atol=CROSS_BACKEND_TOLERANCE, err_msg=f"preset: {name}")
    return max(float(np.max(np.abs(ours[name] - theirs[name]))) for name in ours)


def pretraining_loss(outputs, labels):
    """The weighted-mean MLM cross-entropy plus the mean SOP cross-entropy (the test's HF loss)."""
    tokens = ops.sparse_categorical_crossentropy(labels["masked_lm_ids"], outputs["mlm_logits"], from_logits=True)
    weights = ops.convert_to_tensor(labels["masked_lm_weights"])
    mlm = ops.sum(tokens * weights) / (ops.sum(weights) + 1e-5)
    sop = ops.mean(ops.sparse_categorical_crossentropy(labels["next_sentence_labels"], outputs["sop_logits"],
                                                       from_logits=True))
    return mlm + sop


def gradients(model, inputs, labels):
    """(loss, {TF1 name: gradient}) of `pretraining_loss`, by this backend's own autodiff."""
    trainable = model.trainable_variables
    if keras.backend.backend() == "jax":
        import jax  # pylint: disable=g-import-not-at-top

        non_trainable = [variable.value for variable in model.non_trainable_variables]

        def loss_of(values):
            outputs, _ = model.stateless_call(values, non_trainable, inputs, training=True)
            return pretraining_loss(outputs, labels)

        loss, grads = jax.value_and_grad(loss_of)([variable.value for variable in trainable])
    elif keras.backend.backend() == "tensorflow":
        import tensorflow as tf  # pylint: disable=g-import-not-at-top (only on its own backend)

        with tf.GradientTape() as tape:
            loss = pretraining_loss(model(inputs, training=True), labels)
        grads = tape.gradient(loss, [variable.value for variable in trainable])
    else:
        for variable in trainable:
            variable.value.grad = None
        loss = pretraining_loss(model(inputs, training=True), labels)
        loss.backward()
        grads = [variable.value.grad for variable in trainable]
    by_path = {variable.path: np.asarray(ops.convert_to_numpy(grad)) for variable, grad in zip(trainable, grads)}
    return float(ops.convert_to_numpy(loss)), {name: by_path[v.path] for name, v in tf1_variables(model).items()}


def check_huggingface_case(case):
    """Outputs and gradients of HF's weights (read by our HF reader, or a `.weights.h5`) against HF's."""
    config = AlbertConfig.from_dict(case["config"])
    with np.load(case["expected"]) as saved:
        expected = dict(saved)
    inputs = {name[len("input:"):]: value for name, value in expected.items() if name.startswith("input:")}
    labels = {name[len("label:"):]: value for name, value in expected.items() if name.startswith("label:")}
    measured = {}
    models = {"": AlbertPretrainingModel(config)}
    if case.get("recompute"):
        models["recompute "] = AlbertPretrainingModel(backbone=AlbertModel(config, recompute=True, name="albert"))
    models["eager kernels "] = AlbertPretrainingModel(config, kernels="eager")  # what "auto" picks on PyTorch
    for label, model in models.items():
        load(model, case["weights"])
        outputs = model(inputs, training=False)
        for name in ("sequence_output", "pooled_output", "mlm_logits", "sop_logits"):
            difference = float(np.max(np.abs(ops.convert_to_numpy(outputs[name]) - expected[f"output:{name}"])))
            assert difference < OUTPUT_TOLERANCE, f"{case['name']}: {label}{name} differs from HF's by {difference}"
            measured[f"{label}{name}"] = difference
        loss, grads = gradients(model, inputs, labels)
        assert abs(loss - float(expected["loss"])) < OUTPUT_TOLERANCE, (case["name"], loss, float(expected["loss"]))
        worst = 0.0
        for name, gradient in grads.items():
            theirs = expected[f"gradient:{name}"]
            if name.endswith("self/key/bias"):  # zero in exact arithmetic: rounding noise on both sides
                assert max(np.max(np.abs(gradient)), np.max(np.abs(theirs))) < 1e-6, name
                continue
            relative = float(np.max(np.abs(gradient - theirs))) / float(np.max(np.abs(theirs)))
            assert relative < GRADIENT_TOLERANCE, f"{case['name']}: {label}gradient of {name} differs by {relative:.2e}"
            worst = max(worst, relative)
        measured[f"{label}gradients (relative)"] = worst
    return measured


def main(spec_path):
    with open(spec_path, encoding="utf-8") as handle:
        spec = json.load(handle)
    assert kernels.choose("auto") == ("eager" if keras.backend.backend() == "torch" else "reference")
    for name in kernels.TENSORFLOW_KERNEL_SETS:
        try:
            kernels.get(name)
        except ValueError as error:
            assert "need the tensorflow backend" in str(error), error
        else:
            raise AssertionError(f"{name} was not refused on {keras.backend.backend()}")
    save_every_kind(spec["work"], seed=spec["seed"])
    report = {"backend": keras.backend.backend(),
              "loaded from": {os.path.basename(other): check_saved_elsewhere(other) for other in spec["check"]},
              "keras-hub preset": check_keras_hub_preset(spec["keras_hub_preset"]),
              "huggingface": {case["name"]: check_huggingface_case(case) for case in spec["huggingface"]}}
    assert sys.modules.get("tensorflow") is None, "tensorflow was imported"
    print(json.dumps(report))


if __name__ == "__main__":
    main(sys.argv[1])
