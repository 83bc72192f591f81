"""Numerical parity with HuggingFace's PyTorch ALBERT, through TF1 checkpoints in both directions.

(1) ours -> save_tf1_checkpoint -> read into HF's model by this file's own name map -> same outputs.
(2) HF -> a TF1 checkpoint written here from HF's state dict (the same independent map) ->
    checkpoints.load -> same outputs.
The map is written from HF's module tree, not from `albert_tf.checkpoints.names`. (transformers 4's
`load_tf_weights_in_albert` read direction (1) before; transformers 5 has no TensorFlow code.)
Run with `pytest -s` to see the measured maximum absolute differences.
"""

import os
import re

import numpy as np
import pytest
import tensorflow as tf
import torch
import transformers

from albert_tf import AlbertConfig, AlbertPretrainingModel
from albert_tf.checkpoints import load, save_tf1_checkpoint

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOLERANCE = 1e-5
BATCH, SEQ, PADDING = 2, 24, 7
MASKED_POSITIONS = [[1, 4, 9, 16], [2, 3, 11, 15]]
OUTPUTS = ("sequence_output", "pooled_output", "mlm_logits", "sop_logits")

# HF module -> original TF1 scope, written from HF's module tree independently of
# albert_tf.checkpoints.names. torch Linear weights are [out, in]: TF1 kernels are their transpose.
HF_MODULES = {
    "albert.embeddings.LayerNorm": "bert/embeddings/LayerNorm",
    "albert.encoder.embedding_hidden_mapping_in": "bert/encoder/embedding_hidden_mapping_in",
    "albert.pooler": "bert/pooler/dense",
    "predictions.dense": "cls/predictions/transform/dense",
    "predictions.LayerNorm": "cls/predictions/transform/LayerNorm",
}
HF_BLOCK = r"albert\.encoder\.albert_layer_groups\.(\d+)\.albert_layers\.(\d+)\.(.+)"
HF_BLOCK_MODULES = {
    "attention.query": "attention_1/self/query",
    "attention.key": "attention_1/self/key",
    "attention.value": "attention_1/self/value",
    "attention.dense": "attention_1/output/dense",
    "attention.LayerNorm": "LayerNorm",
    "ffn": "ffn_1/intermediate/dense",
    "ffn_output": "ffn_1/intermediate/output/dense",
    "full_layer_layer_norm": "LayerNorm_1",
}
HF_UNSCOPED = {  # Stored as they are (output_weights is [2, H] in both).
    "predictions.bias": "cls/predictions/output_bias",
    "sop_classifier.classifier.weight": "cls/seq_relationship/output_weights",
    "sop_classifier.classifier.bias": "cls/seq_relationship/output_bias",
}


def _hf_to_tf1(name, array):
    """(TF1 name, array in the TF1 layout) of one HF parameter."""
    if name in HF_UNSCOPED:
        return HF_UNSCOPED[name], array
    module, leaf = name.rsplit(".", 1)
    if module.endswith("_embeddings"):
        return "bert/embeddings/" + module.split(".")[-1], array
    block = re.fullmatch(HF_BLOCK, module)
    if block:
        group, inner, sublayer = block.groups()
        scope = f"bert/encoder/transformer/group_{group}/inner_group_{inner}/{HF_BLOCK_MODULES[sublayer]}"
    else:
        scope = HF_MODULES[module]
    if scope.endswith(("LayerNorm", "LayerNorm_1")):
        return f"{scope}/{'gamma' if leaf == 'weight' else 'beta'}", array
    return (f"{scope}/kernel", array.T) if leaf == "weight" else (f"{scope}/bias", array)


def _write_tf1_checkpoint_from_hf(hf_model, prefix):
    names, tensors = [], []
    for name, parameter in hf_model.named_parameters():  # The tied decoder is not listed again.
        tf1_name, array = _hf_to_tf1(name, parameter.detach().numpy())
        names.append(tf1_name)
        tensors.append(tf.constant(np.ascontiguousarray(array)))
    tf.raw_ops.SaveV2(prefix=prefix, tensor_names=names, shape_and_slices=[""] * len(names), tensors=tensors)
    return names


def _read_tf1_checkpoint_into_hf(hf_model, prefix):
    """Every parameter of `hf_model` from the TF1 checkpoint `prefix` (the inverse of
    `_hf_to_tf1`); the checkpoint's every weight must be read."""
    reader = tf.train.load_checkpoint(prefix)
    read = set()
    with torch.no_grad():
        for name, parameter in hf_model.named_parameters():  # The tied decoder is not listed again.
            tf1_name, _ = _hf_to_tf1(name, parameter.numpy())
            array = reader.get_tensor(tf1_name)
            parameter.copy_(torch.from_numpy(np.ascontiguousarray(array.T if tf1_name.endswith("/kernel") else array)))
            read.add(tf1_name)
    stored = {name for name in reader.get_variable_to_shape_map() if name.startswith(("bert/", "cls/"))}
    assert read == stored, f"unread: {sorted(stored - read)}"


def _hf_config(config):
    return transformers.AlbertConfig(
        vocab_size=config.vocab_size,
        embedding_size=config.embedding_size,
        hidden_size=config.hidden_size,
        num_hidden_layers=config.num_hidden_layers,
        num_hidden_groups=config.num_hidden_groups,
        num_attention_heads=config.num_attention_heads,
        intermediate_size=config.intermediate_size,
        inner_group_num=config.inner_group_num,
        hidden_act="gelu_new",  # The original's (and our) "gelu" is the tanh approximation.
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        classifier_dropout_prob=0.0,
        max_position_embeddings=config.max_position_embeddings,
        type_vocab_size=config.type_vocab_size,
        layer_norm_eps=1e-12,
        attn_implementation="eager",
    )


def _random_value(name, shape, rng):
    """Weights far from init (LayerNorm gamma != 1, biases != 0) so every tensor matters."""
    if name.endswith(("gamma", "LayerNorm.weight", "layer_norm.weight")):
        return 1.0 + 0.1 * rng.standard_normal(shape)
    if name.endswith(("beta", "bias")):
        return 0.1 * rng.standard_normal(shape)
    return 0.02 * rng.standard_normal(shape)


def _inputs(vocab_size):
    rng = np.random.default_rng(7)
    word_ids = rng.integers(5, vocab_size, size=(BATCH, SEQ)).astype(np.int32)
    mask = np.ones((BATCH, SEQ), np.int32)
    mask[1, SEQ - PADDING:] = 0
    word_ids[1, SEQ - PADDING:] = 0
    type_ids = np.zeros((BATCH, SEQ), np.int32)
    type_ids[:, SEQ // 2:] = 1
    return {
        "input_word_ids": word_ids,
        "input_mask": mask,
        "input_type_ids": type_ids,
        "masked_lm_positions": np.array(MASKED_POSITIONS, np.int32),
    }


def _our_outputs(model, inputs):
    # Traced with static shapes: where the CPU kernel sets use their XLA and oneDNN forms.
    outputs = tf.function(lambda batch: model(batch, training=False))({name: tf.constant(value) for name, value in inputs.items()})
    return {name: outputs[name].numpy() for name in OUTPUTS}


def _hf_arguments(inputs):
    return {
        "input_ids": torch.from_numpy(inputs["input_word_ids"]).long(),
        "attention_mask": torch.from_numpy(inputs["input_mask"]).long(),
        "token_type_ids": torch.from_numpy(inputs["input_type_ids"]).long(),
    }


def _at_masked_positions(prediction_logits, inputs):
    """HF's [B, T, V] MLM logits at our `masked_lm_positions`: [B, P, V]."""
    positions = torch.from_numpy(inputs["masked_lm_positions"]).long()
    return torch.gather(prediction_logits, 1, positions[:, :, None].expand(-1, -1, prediction_logits.shape[-1]))


def _hf_outputs(hf_model, inputs):
    arguments = _hf_arguments(inputs)
    with torch.no_grad():
        backbone = hf_model.albert(**arguments)
        pretraining = hf_model(**arguments)
    return {
        "sequence_output": backbone.last_hidden_state.numpy(),
        "pooled_output": backbone.pooler_output.numpy(),
        "mlm_logits": _at_masked_positions(pretraining.prediction_logits, inputs).numpy(),
        "sop_logits": pretraining.sop_logits.numpy(),
    }


def _assert_parity(ours, theirs, label):
    differences = {name: float(np.max(np.abs(ours[name] - theirs[name]))) for name in ours}
    scales = {name: float(np.max(np.abs(theirs[name]))) for name in theirs}
    print(f"\n[{label}] max |ours - HF|: "
          + ", ".join(f"{name} {differences[name]:.2e} (max |value| {scales[name]:.2f})" for name in ours))
    # All positions, padded ones included: both add a large negative bias to padded keys
    # (-10000 here, float32 min in HF), which softmax turns into exactly zero weight in float32.
    for name, difference in differences.items():
        assert difference < TOLERANCE, f"{label}: {name} differs by {difference}"


def _base_config():
    return AlbertConfig.from_json_file(os.path.join(REPO, "configs", "albert_base.json"))


def _grouped_config():
    tiny = AlbertConfig.from_json_file(os.path.join(REPO, "configs", "albert_tiny.json"))
    return tiny.replace(vocab_size=500, max_position_embeddings=64, num_hidden_groups=2, inner_group_num=2)


def _hf_model(config, seed):
    torch.manual_seed(seed)
    hf_model = transformers.AlbertForPreTraining(_hf_config(config)).eval()
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, parameter in hf_model.named_parameters():
            parameter.copy_(torch.from_numpy(_random_value(name, tuple(parameter.shape), rng)).float())
    return hf_model


def _check_ours_to_hf(config, tmp_path, label, hf_groups=None, kernels="reference"):
    model = AlbertPretrainingModel(config, kernels=kernels)
    rng = np.random.default_rng(0)
    for variable in model.weights:
        variable.assign(_random_value(variable.path, tuple(variable.shape), rng).astype(np.float32))
    prefix = save_tf1_checkpoint(model, str(tmp_path / "model.ckpt-1"))
    hf_config = _hf_config(config.replace(num_hidden_groups=hf_groups or config.num_hidden_groups))
    hf_model = transformers.AlbertForPreTraining(hf_config).eval()
    _read_tf1_checkpoint_into_hf(hf_model, prefix)
    inputs = _inputs(config.vocab_size)
    _assert_parity(_our_outputs(model, inputs), _hf_outputs(hf_model, inputs), label)


def _check_hf_to_ours(config, tmp_path, label, hf_groups=None, kernels="reference"):
    hf_model = _hf_model(config.replace(num_hidden_groups=hf_groups or config.num_hidden_groups), seed=1)
    tmp_path.mkdir(parents=True, exist_ok=True)
    prefix = str(tmp_path / "from_hf")
    written = _write_tf1_checkpoint_from_hf(hf_model, prefix)
    model = AlbertPretrainingModel(config, kernels=kernels)
    report = load(model, prefix)
    assert sorted(report.loaded) == sorted(written)
    inputs = _inputs(config.vocab_size)
    _assert_parity(_our_outputs(model, inputs), _hf_outputs(hf_model, inputs), label)


KERNEL_SETS = pytest.mark.parametrize("kernels", ["reference", "cpu", "cpu_inference", "eager"])


@KERNEL_SETS
def test_ours_to_huggingface_grouped(tmp_path, kernels):
    _check_ours_to_hf(_grouped_config(), tmp_path, f"ours({kernels})->HF, L=4 G=2 K=2", kernels=kernels)


@KERNEL_SETS
def test_huggingface_to_ours_grouped(tmp_path, kernels):
    _check_hf_to_ours(_grouped_config(), tmp_path, f"HF->ours({kernels}), L=4 G=2 K=2", kernels=kernels)


def test_unshared_naming_matches_one_group_per_layer(tmp_path):
    """sharing="none" writes layer l under group_l: HF reads it as num_hidden_groups = L.

    inner_group_num is 1 here: HF's head_mask slicing fails when inner_group_num > L / G.
    """
    config = _grouped_config().replace(num_hidden_groups=1, inner_group_num=1, sharing="none")
    _check_ours_to_hf(config, tmp_path / "out", "ours(none)->HF(G=L)", hf_groups=config.num_hidden_layers)
    _check_hf_to_ours(config, tmp_path / "in", "HF(G=L)->ours(none)", hf_groups=config.num_hidden_layers)


@pytest.mark.slow
def test_ours_to_huggingface_base(tmp_path):
    _check_ours_to_hf(_base_config(), tmp_path, "ours->HF, albert_base")


@pytest.mark.slow
def test_huggingface_to_ours_base(tmp_path):
    _check_hf_to_ours(_base_config(), tmp_path, "HF->ours, albert_base")


# --- backward: the pretraining loss's gradient of every weight ---------------------------------

MASKED_WEIGHTS = [[1.0, 1.0, 1.0, 0.0], [1.0, 1.0, 0.0, 0.0]]  # padding predictions count for nothing
SOP_LABELS = [1, 0]


def _our_gradients(model, inputs, labels):
    from albert_tf.checkpoints import tf1_variables
    from albert_tf.pretraining.losses import pretraining_losses

    features = {name: tf.constant(value) for name, value in inputs.items()}
    features.update({name: tf.constant(value) for name, value in labels.items()})
    variables = tf1_variables(model)

    @tf.function
    def gradients():
        with tf.GradientTape() as tape:
            outputs = model({name: features[name] for name in inputs}, training=True)
            loss = pretraining_losses(outputs, features, tf.reduce_sum(features["masked_lm_weights"]), BATCH).loss
        return loss, tape.gradient(loss, list(variables.values()))

    loss, grads = gradients()
    return float(loss), {name: tf.convert_to_tensor(g).numpy() for name, g in zip(variables, grads)}


def _hf_gradients(hf_model, inputs, labels):
    """The same loss written in torch on HF's outputs: weighted-mean MLM + mean SOP."""
    hf_model.zero_grad()
    outputs = hf_model(**_hf_arguments(inputs))
    logits = _at_masked_positions(outputs.prediction_logits, inputs)
    token_losses = torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), torch.from_numpy(labels["masked_lm_ids"]).long().reshape(-1),
        reduction="none")
    weights = torch.from_numpy(labels["masked_lm_weights"]).reshape(-1)
    mlm = (token_losses * weights).sum() / (weights.sum() + 1e-5)
    sop = torch.nn.functional.cross_entropy(outputs.sop_logits, torch.from_numpy(labels["next_sentence_labels"]).long())
    loss = mlm + sop
    loss.backward()
    loss = loss.detach()
    gradients = {}
    for name, parameter in hf_model.named_parameters():
        tf1_name, gradient = _hf_to_tf1(name, parameter.grad.numpy())
        gradients[tf1_name] = gradient
    return float(loss), gradients


@KERNEL_SETS
def test_pretraining_gradients_match_huggingface(tmp_path, kernels):
    """Backward parity: d(MLM + SOP loss)/d(weight) equals torch autograd through HF's model
    for every weight (the tied decoder's gradient included in the word embeddings'), relative to
    the largest gradient of that weight. The CPU kernel sets' hand-written gradients are covered."""
    config = _grouped_config()
    hf_model = _hf_model(config, seed=1)
    prefix = str(tmp_path / "from_hf")
    _write_tf1_checkpoint_from_hf(hf_model, prefix)
    model = AlbertPretrainingModel(config, kernels=kernels)
    load(model, prefix)
    inputs = _inputs(config.vocab_size)
    rng = np.random.default_rng(3)
    labels = {
        "masked_lm_ids": rng.integers(5, config.vocab_size, size=(BATCH, 4)).astype(np.int32),
        "masked_lm_weights": np.array(MASKED_WEIGHTS, np.float32),
        "next_sentence_labels": np.array(SOP_LABELS, np.int32),
    }
    our_loss, ours = _our_gradients(model, inputs, labels)
    hf_loss, theirs = _hf_gradients(hf_model, inputs, labels)
    assert abs(our_loss - hf_loss) < TOLERANCE
    assert sorted(ours) == sorted(theirs)
    worst = {}
    for name, gradient in theirs.items():
        if name.endswith("self/key/bias"):
            # Exactly zero in exact arithmetic (a key bias shifts every score of a query by the
            # same amount, which softmax cancels): both sides hold only rounding noise.
            assert max(np.max(np.abs(gradient)), np.max(np.abs(ours[name]))) < 1e-8, name
            continue
        scale = float(np.max(np.abs(gradient)))
        assert scale > 0, f"{name}: HF's gradient is zero, the check would be empty"
        worst[name] = float(np.max(np.abs(ours[name] - gradient))) / scale
    print(f"\n[gradients, {kernels}] largest relative difference: {max(worst.values()):.2e} "
          f"({max(worst, key=worst.get)})")
    for name, relative in worst.items():
        assert relative < 1e-4, f"{name}: gradient differs from HF's by {relative:.2e} of its largest value"
