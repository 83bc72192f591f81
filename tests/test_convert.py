"""`python -m albert_cli.convert`: HF -> TF1 -> HF and TF1 -> keras-hub, outputs checked against the libraries."""

import json
import os

import keras_hub
import numpy as np
import pytest
import transformers

import script_process
import test_parity_huggingface as parity
import tensorflow as tf

from albert_tf import AlbertConfig, AlbertPretrainingModel
from albert_tf.checkpoints import load, save_tf1_checkpoint, tf1_variables

SPM_MODEL = os.path.join(parity.REPO, "data", "albert_spm", "30k-clean.model")


def _convert(*args):
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONPATH": parity.REPO}
    return script_process.run_python(["-m", "albert_cli.convert", *args], cwd=parity.REPO, env=env)


@pytest.mark.slow
def test_huggingface_to_tf1_and_back(tmp_path):
    config = parity._grouped_config()
    hf_model = parity._hf_model(config, seed=3)
    hf_model.save_pretrained(tmp_path / "hf")
    result = _convert(f"--from={tmp_path / 'hf'}", f"--to={tmp_path / 'tf1'}", "--format=tf1")
    assert result.returncode == 0, result.stderr
    assert "Wrote AlbertPretrainingModel as tf1" in result.stdout

    model = AlbertPretrainingModel(AlbertConfig.from_json_file(str(tmp_path / "tf1" / "albert_config.json")))
    load(model, str(tmp_path / "tf1"))
    inputs = parity._inputs(config.vocab_size)
    parity._assert_parity(parity._our_outputs(model, inputs), parity._hf_outputs(hf_model, inputs), "convert HF -> tf1")

    result = _convert(f"--from={tmp_path / 'tf1'}", f"--to={tmp_path / 'hf_again'}", "--format=hf")
    assert result.returncode == 0, result.stderr
    again, info = transformers.AlbertForPreTraining.from_pretrained(tmp_path / "hf_again", output_loading_info=True,
                                                                    attn_implementation="eager")
    assert not (info["missing_keys"] or info["unexpected_keys"] or info["mismatched_keys"])
    parity._assert_parity(parity._hf_outputs(again.eval(), inputs), parity._hf_outputs(hf_model, inputs),
                          "convert HF -> tf1 -> HF")


@pytest.mark.slow
def test_tf1_to_keras_hub_with_the_tokenizer(tmp_path):
    config = parity._grouped_config().replace(vocab_size=30000)
    model = AlbertPretrainingModel(config)
    save_tf1_checkpoint(model, str(tmp_path / "tf1" / "model.ckpt-best"))
    config.to_json_file(str(tmp_path / "tf1" / "albert_config.json"))
    result = _convert(f"--from={tmp_path / 'tf1'}", f"--to={tmp_path / 'preset'}", "--format=keras_hub",
                      f"--spm_model_file={SPM_MODEL}", "--backbone_only")
    assert result.returncode == 0, result.stderr
    assert "left out masked_lm_head, sentence_order_head (--backbone_only)" in result.stdout
    backbone = keras_hub.models.AlbertBackbone.from_preset(str(tmp_path / "preset"))
    inputs = parity._inputs(config.vocab_size)
    ours = model.albert({name: inputs[name] for name in ("input_word_ids", "input_mask", "input_type_ids")})
    theirs = backbone({"token_ids": inputs["input_word_ids"], "segment_ids": inputs["input_type_ids"],
                       "padding_mask": inputs["input_mask"]})
    for name in ("sequence_output", "pooled_output"):
        assert np.max(np.abs(ours[name].numpy() - np.asarray(theirs[name]))) < parity.TOLERANCE
    assert keras_hub.models.AlbertTokenizer.from_preset(str(tmp_path / "preset")).vocabulary_size() == 30000


def test_bad_input_is_one_line_and_writes_nothing(tmp_path):
    (tmp_path / "bert").mkdir()
    (tmp_path / "bert" / "config.json").write_text(json.dumps({"model_type": "bert", "vocab_size": 10}))
    (tmp_path / "bert" / "model.safetensors").write_bytes(b"")
    result = _convert(f"--from={tmp_path / 'bert'}", f"--to={tmp_path / 'out'}", "--format=tf1")
    assert result.returncode == 2
    assert result.stderr.splitlines()[-1] == (
        f"error: --from {tmp_path / 'bert'}: {tmp_path / 'bert' / 'config.json'}: `model_type` is 'bert', "
        "expected 'albert'.")
    assert "Traceback" not in result.stderr and not os.path.exists(tmp_path / "out")


@pytest.mark.slow
def test_our_pretraining_output_converts_with_its_heads(tmp_path):
    """The MLM and SOP heads of our own pretraining output reach HF's AlbertForPreTraining
    and the TF1 output; keras-hub (a backbone) refuses them unless --backbone_only."""
    config = parity._grouped_config()
    source = AlbertPretrainingModel(config)
    for variable in source.weights:
        variable.assign(np.random.default_rng(5).standard_normal(tuple(variable.shape)).astype(np.float32) * 0.1)
    run_dir = tmp_path / "pretraining"
    tf.train.Checkpoint(model=source, data_steps=tf.Variable(3, dtype=tf.int64)).write(str(run_dir / "ckpt-3"))
    config.to_json_file(str(run_dir / "albert_config.json"))  # as the runners write it

    result = _convert(f"--from={run_dir}", f"--to={tmp_path / 'hf'}", "--format=hf")
    assert result.returncode == 0, result.stderr
    count = len(tf1_variables(source))
    assert f"Loaded {count} of {count} variables" in result.stdout and "Not used by this model" not in result.stdout
    hf_model, info = transformers.AlbertForPreTraining.from_pretrained(tmp_path / "hf", output_loading_info=True,
                                                                       attn_implementation="eager")
    assert not (info["missing_keys"] or info["unexpected_keys"] or info["mismatched_keys"])
    inputs = parity._inputs(config.vocab_size)
    parity._assert_parity(parity._our_outputs(source, inputs), parity._hf_outputs(hf_model.eval(), inputs),
                          "our pretraining output -> HF")

    result = _convert(f"--from={run_dir}", f"--to={tmp_path / 'tf1'}", "--format=tf1")
    assert result.returncode == 0, result.stderr
    names = {name for name, _ in tf.train.list_variables(str(tmp_path / "tf1" / "model.ckpt-best"))}
    assert set(tf1_variables(source)) <= names and any(name.startswith("cls/seq_relationship/") for name in names)

    result = _convert(f"--from={run_dir}", f"--to={tmp_path / 'preset'}", "--format=keras_hub")
    assert result.returncode == 2 and not os.path.exists(tmp_path / "preset")
    assert result.stderr.splitlines()[-1] == (
        f"error: --from {run_dir} holds the masked_lm_head, sentence_order_head, which a keras-hub preset (the "
        "backbone only) cannot hold; pass --backbone_only to convert the backbone alone")
