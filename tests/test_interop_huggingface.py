"""Hugging Face checkpoints in and out, with transformers (PyTorch) as the oracle.

HF -> ours: a randomized HF model saved with `save_pretrained` (safetensors and .bin), read by
`load_huggingface`. Ours -> HF: `save_huggingface_checkpoint`, read by `from_pretrained`, which must
report no missing, unexpected or mismatched weights. Outputs agree to 1e-5 in both directions.
"""

import json
import os

import numpy as np
import pytest
import tensorflow as tf
import torch
import transformers
from safetensors.numpy import load_file, save_file

import test_parity_huggingface as parity
from albert_tf import AlbertClassifier, AlbertModel, AlbertPretrainingModel
from albert_tf.checkpoints import tf1_variables
from albert_tf.checkpoints import CheckpointMismatchError
from albert_tf.checkpoints.architecture import ARCHITECTURE_KEYS
from albert_tf.checkpoints.huggingface import (
    albert_config_from_huggingface,
    is_huggingface_dir,
    save_huggingface_checkpoint,
)
from albert_tf.checkpoints.loading import load_huggingface
from albert_tf.text.tokenization import AlbertTokenizer

SPM_MODEL = os.path.join(parity.REPO, "data", "albert_spm", "30k-clean.model")
NUM_LABELS = 3


def _randomize_ours(model, seed=0):
    rng = np.random.default_rng(seed)
    for variable in model.weights:
        variable.assign(parity._random_value(variable.path, tuple(variable.shape), rng).astype(np.float32))
    return model


def _randomize_hf(hf_model, seed):
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for name, parameter in hf_model.named_parameters():
            parameter.copy_(torch.from_numpy(parity._random_value(name, tuple(parameter.shape), rng)).float())
    return hf_model.eval()


def _torch_inputs(inputs):
    return {
        "input_ids": torch.from_numpy(inputs["input_word_ids"]).long(),
        "attention_mask": torch.from_numpy(inputs["input_mask"]).long(),
        "token_type_ids": torch.from_numpy(inputs["input_type_ids"]).long(),
    }


def _backbone_outputs(model, hf_model, inputs):
    """Ours and HF's sequence and pooled outputs of an AlbertModel pair."""
    ours = model({name: tf.constant(inputs[name]) for name in ("input_word_ids", "input_mask", "input_type_ids")})
    with torch.no_grad():
        theirs = hf_model(**_torch_inputs(inputs))
    return (
        {"sequence_output": ours["sequence_output"].numpy(), "pooled_output": ours["pooled_output"].numpy()},
        {"sequence_output": theirs.last_hidden_state.numpy(), "pooled_output": theirs.pooler_output.numpy()},
    )


def _classifier_logits(classifier, hf_classifier, inputs):
    ours = classifier({name: tf.constant(inputs[name]) for name in ("input_word_ids", "input_mask", "input_type_ids")})
    with torch.no_grad():
        theirs = hf_classifier(**_torch_inputs(inputs)).logits
    return {"logits": ours["logits"].numpy()}, {"logits": theirs.numpy()}


def _from_pretrained(hf_class, directory):
    hf_model, info = hf_class.from_pretrained(directory, output_loading_info=True, attn_implementation="eager")
    # Lists in transformers 4, sets in 5.
    assert {key: list(value) for key, value in info.items()} == {
        "missing_keys": [], "unexpected_keys": [], "mismatched_keys": [], "error_msgs": []}
    return hf_model.eval()


def _unshared_equal_sizes_config():
    """E == H (no projection in ALBERT; an identity one in HF) and one group per layer."""
    return parity._grouped_config().replace(embedding_size=128, num_hidden_groups=1, inner_group_num=1,
                                            sharing="none")


@pytest.mark.parametrize("safe_serialization", [True, False], ids=["safetensors", "pytorch_bin"])
def test_huggingface_pretraining_checkpoint_loads_with_equal_outputs(tmp_path, safe_serialization):
    config = parity._grouped_config()
    hf_model = parity._hf_model(config, seed=3)
    if safe_serialization:
        hf_model.save_pretrained(tmp_path)
    else:  # transformers 5 writes safetensors only; hub checkpoints still come as .bin
        hf_model.config.save_pretrained(tmp_path)
        torch.save(hf_model.state_dict(), tmp_path / "pytorch_model.bin")
    assert os.path.isfile(tmp_path / ("model.safetensors" if safe_serialization else "pytorch_model.bin"))
    assert is_huggingface_dir(tmp_path)

    read_config = albert_config_from_huggingface(tmp_path)
    assert {key: getattr(read_config, key) for key in ARCHITECTURE_KEYS + ("num_hidden_groups",)} == {
        key: getattr(config, key) for key in ARCHITECTURE_KEYS + ("num_hidden_groups",)}
    model = AlbertPretrainingModel(read_config)
    report = load_huggingface(model, tmp_path)
    assert (report.missing, report.unused) == ((), ())
    assert len(report.loaded) == len(model.weights)
    inputs = parity._inputs(config.vocab_size)
    parity._assert_parity(parity._our_outputs(model, inputs), parity._hf_outputs(hf_model, inputs),
                          f"HF {'safetensors' if safe_serialization else '.bin'} -> ours, L=4 G=2 K=2")


def test_bfloat16_safetensors_load_as_their_values(tmp_path):
    """NumPy has no bfloat16: such files (common on model hubs) are read through TensorFlow."""
    config = parity._grouped_config()
    hf_model = parity._hf_model(config, seed=3).to(torch.bfloat16)
    hf_model.save_pretrained(tmp_path)
    model = AlbertPretrainingModel(config)
    load_huggingface(model, tmp_path)
    expected = hf_model.albert.pooler.weight.detach().float().numpy().T
    np.testing.assert_array_equal(tf1_variables(model)["bert/pooler/dense/kernel"].numpy(), expected)


def test_ours_to_huggingface_pretraining_loads_without_warnings(tmp_path):
    config = parity._grouped_config()
    model = _randomize_ours(AlbertPretrainingModel(config))
    save_huggingface_checkpoint(model, tmp_path)
    hf_model = _from_pretrained(transformers.AlbertForPreTraining, tmp_path)
    assert hf_model.config.hidden_act == "gelu_new" and hf_model.config.inner_group_num == 2
    inputs = parity._inputs(config.vocab_size)
    parity._assert_parity(parity._our_outputs(model, inputs), parity._hf_outputs(hf_model, inputs),
                          "ours -> save_huggingface_checkpoint -> HF, L=4 G=2 K=2")
    # The weights are written with the mode config.json gets (0644 under the usual umask), not 0600.
    assert os.stat(tmp_path / "model.safetensors").st_mode & 0o777 == os.stat(tmp_path / "config.json").st_mode & 0o777


def test_backbone_with_equal_sizes_round_trips_through_an_identity_projection(tmp_path):
    config = _unshared_equal_sizes_config()
    model = _randomize_ours(AlbertModel(config), seed=4)
    save_huggingface_checkpoint(model, tmp_path)
    written = load_file(str(tmp_path / "model.safetensors"))
    np.testing.assert_array_equal(written["encoder.embedding_hidden_mapping_in.weight"], np.eye(128))
    hf_model = _from_pretrained(transformers.AlbertModel, tmp_path)
    assert hf_model.config.num_hidden_groups == config.num_hidden_layers
    inputs = parity._inputs(config.vocab_size)
    parity._assert_parity(*_backbone_outputs(model, hf_model, inputs), "ours(E=H, none) -> HF AlbertModel")

    again = AlbertModel(config)
    report = load_huggingface(again, tmp_path)
    assert set(report.skipped) == {"encoder.embedding_hidden_mapping_in.weight",
                                   "encoder.embedding_hidden_mapping_in.bias"}
    for ours, theirs in zip(model.weights, again.weights):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_learned_projection_with_equal_sizes_is_refused(tmp_path):
    config = _unshared_equal_sizes_config().replace(sharing="all")
    transformers.AlbertModel(parity._hf_config(config)).save_pretrained(tmp_path)
    with pytest.raises(ValueError, match=r"model\.safetensors has a learned encoder\.embedding_hidden_mapping_in"):
        load_huggingface(AlbertModel(config), tmp_path)


def test_classifier_in_both_directions(tmp_path):
    config = parity._grouped_config()
    hf_config = parity._hf_config(config)
    hf_config.num_labels = NUM_LABELS
    hf_classifier = _randomize_hf(transformers.AlbertForSequenceClassification(hf_config), seed=5)
    hf_classifier.save_pretrained(tmp_path / "hf")
    classifier = AlbertClassifier(config, num_labels=NUM_LABELS)
    report = load_huggingface(classifier, tmp_path / "hf")
    assert "output_weights (classifier.weight)" not in report.missing and len(report.loaded) == len(classifier.weights)
    inputs = parity._inputs(config.vocab_size)
    parity._assert_parity(*_classifier_logits(classifier, hf_classifier, inputs), "HF classifier -> ours")

    _randomize_ours(classifier, seed=6)
    save_huggingface_checkpoint(classifier, tmp_path / "ours")
    reloaded = _from_pretrained(transformers.AlbertForSequenceClassification, tmp_path / "ours")
    assert reloaded.config.num_labels == NUM_LABELS
    parity._assert_parity(*_classifier_logits(classifier, reloaded, inputs), "ours classifier -> HF")


def test_classifier_from_a_pretraining_checkpoint_with_the_head_allowances(tmp_path):
    config = parity._grouped_config()
    parity._hf_model(config, seed=3).save_pretrained(tmp_path)
    classifier = AlbertClassifier(config, num_labels=2)
    with pytest.raises(CheckpointMismatchError, match=r"output_weights \(classifier\.weight\)"):
        load_huggingface(classifier, tmp_path)
    report = load_huggingface(classifier, tmp_path, allow_missing=("output_*",), allow_unused=("cls/*",))
    assert set(report.missing) == {"output_weights (classifier.weight)", "output_bias (classifier.bias)"}
    assert len(report.unused) == 7


def _edit_config(directory, **changes):
    path = directory / "config.json"
    values = json.loads(path.read_text())
    values.update(changes)
    path.write_text(json.dumps(values))


@pytest.fixture(name="hf_dir")
def _hf_dir(tmp_path):
    config = parity._grouped_config()
    parity._hf_model(config, seed=3).save_pretrained(tmp_path)
    return tmp_path


def test_a_non_albert_config_is_refused(hf_dir):
    _edit_config(hf_dir, model_type="bert")
    with pytest.raises(ValueError, match=r"config\.json: `model_type` is 'bert', expected 'albert'"):
        load_huggingface(AlbertPretrainingModel(parity._grouped_config()), hf_dir)


def test_erf_gelu_is_refused_unless_read_as_tanh(hf_dir):
    _edit_config(hf_dir, hidden_act="gelu")
    with pytest.raises(ValueError, match=r"config\.json: `hidden_act` 'gelu' \(the exact erf GELU.*erf_gelu_as_tanh"):
        albert_config_from_huggingface(hf_dir)
    assert albert_config_from_huggingface(hf_dir, erf_gelu_as_tanh=True).hidden_act == "gelu"


def test_erf_and_tanh_gelu_differ_by_at_most_4_8e_4():
    """The bound docs/checkpoints.md gives for reading an erf-GELU checkpoint with erf_gelu_as_tanh."""
    x = torch.linspace(-10.0, 10.0, 400001, dtype=torch.float64)
    gap = (torch.nn.functional.gelu(x) - torch.nn.functional.gelu(x, approximate="tanh")).abs().max().item()
    assert 4.7e-4 < gap < 4.8e-4


def test_another_layer_norm_epsilon_is_refused(hf_dir):
    _edit_config(hf_dir, layer_norm_eps=1e-5)
    with pytest.raises(ValueError, match=r"config\.json: `layer_norm_eps` is 1e-05"):
        albert_config_from_huggingface(hf_dir)


def test_another_architecture_is_refused(hf_dir):
    with pytest.raises(ValueError, match=r"config\.json describes another ALBERT.*num_attention_heads 2 \(the model has 4\)"):
        load_huggingface(AlbertPretrainingModel(parity._grouped_config().replace(num_attention_heads=4)), hf_dir)


def test_missing_weights_are_named_and_loadable_when_not_strict(hf_dir):
    path = str(hf_dir / "model.safetensors")
    arrays = load_file(path)
    del arrays["albert.pooler.bias"]
    save_file(arrays, path, metadata={"format": "pt"})
    model = AlbertPretrainingModel(parity._grouped_config())
    before = [variable.numpy() for variable in model.weights]
    with pytest.raises(CheckpointMismatchError, match=r"model\.safetensors does not match.*bert/pooler/dense/bias \(pooler\.bias\)"):
        load_huggingface(model, hf_dir)
    for variable, value in zip(model.weights, before):  # Nothing assigned on failure.
        np.testing.assert_array_equal(variable.numpy(), value)
    report = load_huggingface(model, hf_dir, strict=False)
    assert report.missing == ("bert/pooler/dense/bias (pooler.bias)",)


def test_a_shape_mismatch_names_the_file_and_the_tensor(hf_dir):
    path = str(hf_dir / "model.safetensors")
    arrays = load_file(path)
    arrays["albert.pooler.weight"] = arrays["albert.pooler.weight"][:, :64].copy()
    save_file(arrays, path, metadata={"format": "pt"})
    with pytest.raises(ValueError, match=r"shape mismatch loading .*model\.safetensors.*pooler\.weight \(as bert/pooler/dense/kernel: \[64, 128\]"):
        load_huggingface(AlbertPretrainingModel(parity._grouped_config()), hf_dir)


def test_no_weights_file_is_a_file_not_found_error(hf_dir):
    os.remove(hf_dir / "model.safetensors")
    with pytest.raises(FileNotFoundError, match="holds none of model.safetensors"):
        load_huggingface(AlbertPretrainingModel(parity._grouped_config()), hf_dir)


class _NotATensor:
    pass


def test_pytorch_bin_with_pickled_objects_is_refused(hf_dir):
    os.remove(hf_dir / "model.safetensors")
    torch.save({"albert.pooler.bias": _NotATensor()}, hf_dir / "pytorch_model.bin")
    with pytest.raises(ValueError, match=r"pytorch_model\.bin is not a readable PyTorch state dict"):
        load_huggingface(AlbertPretrainingModel(parity._grouped_config()), hf_dir)


def test_pytorch_bin_that_is_not_a_flat_state_dict_is_refused(hf_dir):
    os.remove(hf_dir / "model.safetensors")
    torch.save({"model": {"albert.pooler.bias": torch.zeros(2)}}, hf_dir / "pytorch_model.bin")
    with pytest.raises(ValueError, match=r"pytorch_model\.bin is not a state dict of tensors"):
        load_huggingface(AlbertPretrainingModel(parity._grouped_config()), hf_dir)


def test_partial_sharing_cannot_be_written(tmp_path):
    model = AlbertModel(parity._grouped_config().replace(sharing="attention"))
    with pytest.raises(ValueError, match="sharing='attention' cannot be stored"):
        save_huggingface_checkpoint(model, tmp_path)
    assert not os.listdir(tmp_path)


def test_tokenizer_travels_and_gives_our_ids(tmp_path):
    config = parity._grouped_config().replace(vocab_size=30000)
    save_huggingface_checkpoint(AlbertModel(config), tmp_path, spm_model_file=SPM_MODEL)
    hf_tokenizer = transformers.AlbertTokenizer.from_pretrained(tmp_path)
    ours = AlbertTokenizer(SPM_MODEL, do_lower_case=True)
    text = "The Quick brown fox didn't jump over 3 lazy dogs."
    assert hf_tokenizer.encode(text, add_special_tokens=False) == ours.convert_tokens_to_ids(ours.tokenize(text))


@pytest.mark.slow
def test_albert_base_in_both_directions(tmp_path):
    config = parity._base_config()
    hf_model = parity._hf_model(config, seed=1)
    hf_model.save_pretrained(tmp_path / "hf")
    model = AlbertPretrainingModel(albert_config_from_huggingface(tmp_path / "hf"))
    load_huggingface(model, tmp_path / "hf")
    inputs = parity._inputs(config.vocab_size)
    parity._assert_parity(parity._our_outputs(model, inputs), parity._hf_outputs(hf_model, inputs),
                          "HF save_pretrained -> ours, albert_base")

    _randomize_ours(model)
    save_huggingface_checkpoint(model, tmp_path / "ours")
    reloaded = _from_pretrained(transformers.AlbertForPreTraining, tmp_path / "ours")
    parity._assert_parity(parity._our_outputs(model, inputs), parity._hf_outputs(reloaded, inputs),
                          "ours -> save_huggingface_checkpoint -> HF, albert_base")
