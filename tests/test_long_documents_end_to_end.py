"""Long windows end to end with a block-sparse config (configs/albert_tiny_long.json) at 512 tokens:
pretraining data, run_pretraining.py, run_classifier.py, run_squad.py and the exports.

512 tokens are past the tiny long config's dense threshold ((5 + 2 * 1) * 16 = 112), so every
step below runs the block-sparse path; the scripts' logs are checked to say no 512-token dense
fallback, and the served encoder is checked against the block-sparse model and away from the dense
one of the same weights.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the SentencePiece ops of the exports)

from albert_tf import AlbertConfig, AlbertModel
from albert_tf import checkpoints
from albert_tf.config import min_sparse_length
from glue_test_data import REPO, SPM_MODEL, head_of_shipped
import script_process
from squad_test_data import SQUAD_DEV, SQUAD_TRAIN, serve_squad
from test_bad_inputs import assert_one_line_error

LONG_CONFIG = os.path.join(REPO, "configs", "albert_tiny_long.json")
SEQ = 512
PREDICTIONS = 20
DENSE_FALLBACK = f"{SEQ} tokens <= (5 + 2 * num_random_blocks) * block_size"


def run(*command, timeout=300):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    result = script_process.run_python(command, cwd=REPO, env=env, timeout=timeout)
    assert result.returncode == 0, result.stderr[-3000:]
    assert DENSE_FALLBACK not in result.stderr
    return result


def test_the_test_length_is_on_the_block_sparse_path():
    config = AlbertConfig.from_json_file(LONG_CONFIG)
    assert config.attention_type == "block_sparse" and min_sparse_length(config.block_size,
                                                                          config.num_random_blocks) < SEQ
    base = AlbertConfig.from_json_file(os.path.join(REPO, "configs", "albert_base_4096.json"))
    assert (base.attention_type, base.block_size, base.num_random_blocks, base.max_position_embeddings) == (
        "block_sparse", 64, 3, 4096)


@pytest.fixture(scope="module")
def pretrained(tmp_path_factory):
    """Pretraining data at 512 from the first ~120 KB of the bundled corpus, then 2 pretraining steps."""
    root = tmp_path_factory.mktemp("long")
    with open(os.path.join(REPO, "data", "corpus", "sample.txt"), "rb") as handle:
        text = handle.read(120_000)
    corpus = root / "corpus.txt"
    corpus.write_bytes(text[:text.rindex(b"\n") + 1])
    records = str(root / "train.tfrecord")
    run("-m", "albert_cli.create_pretraining_data", f"--input_file={corpus}", f"--output_file={records}",
        f"--spm_model_file={SPM_MODEL}", f"--max_seq_length={SEQ}", f"--max_predictions_per_seq={PREDICTIONS}",
        "--dupe_factor=1")
    output_dir = str(root / "pretraining")
    run("run_pretraining.py", f"--albert_config_file={LONG_CONFIG}", f"--input_file={records}",
        f"--output_dir={output_dir}", f"--max_seq_length={SEQ}", f"--max_predictions_per_seq={PREDICTIONS}",
        "--train_batch_size=2", "--num_train_steps=2", "--save_checkpoints_steps=2", "--learning_rate=1e-3",
        "--recompute")
    return root, records, output_dir


def test_pretraining_data_and_steps_at_512(pretrained):
    _, records, output_dir = pretrained
    example = tf.train.Example.FromString(next(iter(tf.data.TFRecordDataset(records))).numpy())
    assert len(example.features.feature["input_ids"].int64_list.value) == SEQ
    assert tf.train.latest_checkpoint(output_dir).endswith("-2")


def test_encoder_export_serves_512_tokens_through_block_sparse_attention(pretrained):
    root, _, output_dir = pretrained
    export_dir = root / "hub"
    export_dir.mkdir()
    run("export_encoder.py", f"--albert_config_file={LONG_CONFIG}", f"--init_checkpoint={output_dir}",
        f"--export_dir={export_dir}", "--export_version=1")
    preprocessing = tf.saved_model.load(str(export_dir / "preprocessing" / "1"))
    # The pack lengths go past 512 (the config has 4,096 positions).
    packed = preprocessing.bert_pack_inputs([preprocessing.tokenize(tf.constant(["a long book . " * 400]))],
                                            seq_length=1024)
    assert packed["input_word_ids"].shape == (1, 1024) and int(tf.reduce_sum(packed["input_mask"])) == 1024
    packed = preprocessing.bert_pack_inputs([preprocessing.tokenize(tf.constant(["a long book . " * 400, "short"]))],
                                            seq_length=SEQ)
    served = tf.saved_model.load(str(export_dir / "encoder" / "1")).signatures["serving_default"](**packed)
    assert served["sequence_output"].shape == (2, SEQ, 128)

    config = AlbertConfig.from_json_file(LONG_CONFIG)
    expected = {}
    for name, model_config in (("sparse", config), ("dense", config.replace(
            attention_type="dense", block_size=None, num_random_blocks=None))):
        model = AlbertModel(model_config)
        checkpoints.load(model, output_dir)
        expected[name] = model(dict(packed), training=False)["sequence_output"].numpy()
    np.testing.assert_allclose(served["sequence_output"].numpy(), expected["sparse"], atol=1e-4)
    assert np.abs(served["sequence_output"].numpy()[0] - expected["dense"][0]).max() > 1e-3


def test_classifier_fine_tunes_and_serves_512_tokens(pretrained):
    root, _, output_dir = pretrained
    data_dir = head_of_shipped(str(root / "glue"), "SST-2", rows_per_split=8)
    export_dir = root / "classifier_export"
    run("run_classifier.py", "--task_name=SST-2", f"--data_dir={data_dir}", f"--output_dir={root / 'sst2'}",
        f"--albert_config_file={LONG_CONFIG}", f"--init_checkpoint={output_dir}", f"--export_dir={export_dir}",
        "--export_version=1", "--do_train", "--train_step=2", "--save_checkpoints_steps=2",
        "--train_batch_size=2", "--eval_batch_size=8", f"--max_seq_length={SEQ}", "--padding=fixed")
    serving = tf.saved_model.load(str(export_dir / "1"))
    ids = np.random.default_rng(0).integers(5, 30000, (2, SEQ)).astype(np.int32)
    ids[:, 0], ids[:, -1] = 2, 3  # [CLS] ... [SEP]
    by_ids = serving.signatures["serve_token_ids"](
        input_word_ids=tf.constant(ids), input_mask=tf.ones_like(ids), input_type_ids=tf.zeros_like(ids))
    assert by_ids["probabilities"].shape == (2, 2)
    np.testing.assert_allclose(tf.reduce_sum(by_ids["probabilities"], -1).numpy(), 1.0, atol=1e-5)
    # A text longer than max_seq_length is cut to 512 tokens and answered.
    by_text = serving.signatures["serving_default"](sentence=tf.constant(["a long review . " * 300]))
    assert by_text["probabilities"].shape == (1, 2)


def test_squad_recompute_refuses_a_config_with_dropout(tmp_path):
    config_file = tmp_path / "dropout.json"
    with open(LONG_CONFIG, encoding="utf-8") as handle:
        config_file.write_text(json.dumps({**json.load(handle), "hidden_dropout_prob": 0.1}))
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run([sys.executable, "run_squad.py", f"--albert_config_file={config_file}", "--recompute",
                             "--do_train", f"--train_file={SQUAD_TRAIN}", f"--predict_file={SQUAD_DEV}",
                             f"--output_dir={tmp_path / 'out'}"], capture_output=True, text=True, env=env, cwd=REPO,
                            timeout=300)
    assert_one_line_error(result.returncode, result.stderr, "--recompute needs hidden_dropout_prob")
    assert not os.path.exists(tmp_path / "out" / "best")


@pytest.mark.slow
def test_squad_trains_predicts_and_serves_in_512_token_windows(tmp_path):
    output_dir = str(tmp_path / "out")
    run("run_squad.py", f"--albert_config_file={LONG_CONFIG}", f"--max_seq_length={SEQ}", "--doc_stride=128",
        "--max_query_length=64", "--train_batch_size=4", "--predict_batch_size=8", "--learning_rate=1e-3",
        "--version_2_with_negative", "--do_train", "--do_predict", f"--train_file={SQUAD_TRAIN}",
        f"--predict_file={SQUAD_DEV}", f"--output_dir={output_dir}", "--num_train_epochs=0.2",
        "--save_checkpoints_steps=2", f"--export_dir={tmp_path / 'export'}", "--export_version=1", "--recompute",
        timeout=600)
    with open(os.path.join(output_dir, "predictions.json"), encoding="utf-8") as handle:
        predictions = json.load(handle)
    with open(SQUAD_DEV, encoding="utf-8") as handle:
        dataset = json.load(handle)["data"]
    assert set(predictions) == {qa["id"] for paragraph in dataset[0]["paragraphs"] for qa in paragraph["qas"]}
    paragraphs = dataset[0]["paragraphs"][:2]
    contexts = [paragraph["context"] for paragraph in paragraphs]
    served = serve_squad(str(tmp_path / "export" / "1"), [p["qas"][0]["question"] for p in paragraphs], contexts)
    for context, text, start, end in zip(contexts, served["text"], served["start"], served["end"]):
        assert (context[start:end] if text else "") == text


def _docs_python_lines():
    with open(os.path.join(REPO, "docs", "long_documents.md"), encoding="utf-8") as handle:
        text = handle.read()
    section = text[text.index("In Python, a long-document model"):]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def test_the_docs_python_lines_build_a_4096_token_model_from_a_512_position_checkpoint(tmp_path, capsys, monkeypatch):
    """As written, with the small config for albert_base_4096.json and a 512-position checkpoint of its shape."""
    released = tmp_path / "albert_base"
    checkpoints.save_tf1_checkpoint(AlbertModel(AlbertConfig.from_json_file(LONG_CONFIG).replace(
        max_position_embeddings=512)), str(released / "model.ckpt-best"))
    lines = _docs_python_lines().replace("configs/albert_base_4096.json", LONG_CONFIG)
    monkeypatch.chdir(tmp_path)  # "albert_base" is the released checkpoint's directory
    namespace = {}
    exec(lines, namespace)  # noqa: S102  (the docs' own lines)
    assert "position embeddings extended 512 -> 4096 (repeat)" in capsys.readouterr().out
    model = namespace["model"]
    ids = tf.ones([1, 4096], tf.int32)
    outputs = model({"input_word_ids": ids, "input_mask": ids, "input_type_ids": tf.zeros_like(ids)})
    assert outputs["sequence_output"].shape == (1, 4096, 128)
