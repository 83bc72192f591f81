"""Bad input and faults, tried as a hostile user would: one line on stderr, exit 2,
no traceback, nothing lost or half-written. Each case is small; subprocesses only where the exit
code is the point."""

import contextlib
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from data_prep.create_pretraining_data import build
import script_process
from task_library_env import run_task_library_qa, task_library_python, write_fake_task_library_models

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPM_MODEL = os.path.join(REPO, "data/albert_spm/30k-clean.model")
TINY = {"max_seq_length": 32, "max_predictions_per_seq": 5, "dupe_factor": 1}
# What Python's json reads into trouble (albert_tf.json_text): lists nested past its recursion limit,
# and half of a UTF-16 surrogate pair, which no UTF-8 text can hold.
NESTED = '{"data": ' + "[" * 100_000 + "]" * 100_000 + "}"
LONE_SURROGATE = '{"data": [{"paragraphs": [{"context": "\\ud800 Normandy", "qas": []}]}], "vocab_size": 3}'


def run_script(*args, cwd=REPO):
    """Runs `python *args`; returns (exit code, stderr) (`script_process.run_python`)."""
    result = script_process.run_python(args, cwd=cwd, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"), timeout=300)
    return result.returncode, result.stderr


def assert_one_line_error(code, stderr, *words):
    assert code == 2, stderr
    assert "Traceback" not in stderr, stderr
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("error: "), stderr
    assert "{{function_node" not in last and "[Op:" not in last, last  # TensorFlow's wrapping, not words
    for word in words:
        assert word in last, last


def write_corpus(path, documents=4):
    with open(CORPUS_SAMPLE, "rb") as handle:
        lines = handle.read(20_000).splitlines()[:40]
    text = b""
    for start in range(0, len(lines), len(lines) // documents):
        text += b"\n".join(lines[start:start + len(lines) // documents]) + b"\n\n"
    path.write_bytes(text)
    return str(path)


CORPUS_SAMPLE = os.path.join(REPO, "data/corpus/sample.txt")


def build_tiny(input_file, output_file, **overrides):
    return build(input_file=input_file, output_file=output_file, spm_model_file=SPM_MODEL,
                 num_workers=1, show_progress=False, **{**TINY, **overrides})


# --- create_pretraining_data: never overwrite or read its own output --------------------------

def test_builder_refuses_an_output_equal_to_the_input_and_leaves_it_untouched(tmp_path):
    corpus = write_corpus(tmp_path / "corpus.txt")
    before = open(corpus, "rb").read()
    code, stderr = run_script("-m", "albert_cli.create_pretraining_data", f"--input_file={corpus}",
                              f"--output_file={corpus}", f"--spm_model_file={SPM_MODEL}",
                              "--max_seq_length=32", "--max_predictions_per_seq=5", "--dupe_factor=1")
    assert_one_line_error(code, stderr, "--output_file", "is also an input", "corpus.txt")
    assert open(corpus, "rb").read() == before
    assert sorted(os.listdir(tmp_path)) == ["corpus.txt"]


def test_builder_refuses_a_shard_that_would_overwrite_an_input(tmp_path):
    corpus = tmp_path / "data-00000-of-00002"
    write_corpus(corpus)
    with pytest.raises(ValueError, match="is also an input"):
        build_tiny(str(tmp_path / "*"), str(tmp_path / "data"), num_output_shards=2)


def test_a_glob_over_the_output_directory_skips_the_builders_own_files(tmp_path):
    corpus = write_corpus(tmp_path / "corpus.txt")
    first = build_tiny(str(tmp_path / "*"), str(tmp_path / "train.tfrecord"))
    assert first["stats"]["instances"] > 0
    second = build_tiny(str(tmp_path / "*"), str(tmp_path / "again.tfrecord"))
    assert second["stats"]["lines"] == first["stats"]["lines"]
    assert second["stats"]["instances"] == first["stats"]["instances"]
    assert second["stats"]["non_utf8_lines"] == 0
    # The same command again (a resume) sees the same inputs, so it skips the complete shard.
    third = build_tiny(str(tmp_path / "*"), str(tmp_path / "train.tfrecord"))
    assert third["skipped_shards"] == [0]
    assert open(corpus, "rb").read().startswith(b"[Emma")


def test_naming_a_tfrecord_as_input_is_an_error(tmp_path):
    corpus = write_corpus(tmp_path / "corpus.txt")
    build_tiny(corpus, str(tmp_path / "train.tfrecord"))
    os.remove(tmp_path / ".train.tfrecord.stats.json")  # recognised by its content alone
    with pytest.raises(ValueError, match="written by this builder"):
        build_tiny(str(tmp_path / "train.tfrecord"), str(tmp_path / "other"))
    with pytest.raises(ValueError, match="written by this builder"):
        build_tiny(str(tmp_path / "train.tfrecord.stats.json"), str(tmp_path / "other"))


def test_builder_refuses_more_predictions_than_positions(tmp_path):
    corpus = write_corpus(tmp_path / "corpus.txt")
    with pytest.raises(ValueError, match=r"--max_predictions_per_seq \(40\) must be <= --max_seq_length \(32\)"):
        build_tiny(corpus, str(tmp_path / "out"), max_predictions_per_seq=40)
    assert os.listdir(tmp_path) == ["corpus.txt"]


def test_builder_warns_when_most_lines_are_not_utf8(tmp_path, caplog):
    binary = tmp_path / "random.bin"
    rng = __import__("random").Random(0)
    binary.write_bytes(b"hello world\n" + bytes(rng.randrange(128, 256) for _ in range(4000)).replace(
        b"\xff", b"\n"))
    with caplog.at_level("WARNING"):
        result = build_tiny(str(binary), str(tmp_path / "out"))
    assert result["stats"]["non_utf8_lines"] > 0.5 * result["stats"]["lines"]
    assert any("are not UTF-8" in record.getMessage() for record in caplog.records)


def test_builder_does_not_warn_about_text(tmp_path, caplog):
    corpus = write_corpus(tmp_path / "corpus.txt")
    with caplog.at_level("WARNING"):
        build_tiny(corpus, str(tmp_path / "out"))
    assert not any("UTF-8" in record.getMessage() for record in caplog.records)


# --- GLUE: non-finite regression labels, non-finite loss ---------------------------------------

STSB_HEADER = "index\tgenre\tfilename\tyear\told_index\tsource1\tsource2\tsentence1\tsentence2\tscore"


@pytest.mark.parametrize("score", ["nan", "inf", "-inf", "1e309"])
def test_stsb_non_finite_score_names_file_and_line(tmp_path, score):
    from albert_tf.glue.examples import read_examples
    from albert_tf.glue.tasks import get_task
    from glue_test_data import write_glue_file

    rows = [f"{i}\tg\tf\t2012\t{i}\tnone\tnone\tA cat.\tA dog.\t{value}" for i, value in enumerate(["1.5", score])]
    write_glue_file(tmp_path, "STS-B", "train.tsv", [STSB_HEADER, *rows])
    with pytest.raises(ValueError, match=rf"STS-B/train.tsv:3: expected a finite score, got '{score}'"):
        read_examples(get_task("sts-b"), "train", data_dir=str(tmp_path))


def _sst2_with_latin1_rows(data_dir):
    """An SST-2 train.tsv whose lines 3 and 5 are latin-1 (a UTF-8 BOM in front, which is allowed)."""
    os.makedirs(data_dir / "SST-2", exist_ok=True)
    lines = ["sentence\tlabel", "a fine film\t1", "un café tiède\t0", "dull\t0", "très bien\t1", "good\t1"]
    content = b"\xef\xbb\xbf" + b"".join(
        (line.encode("latin-1") if number in (3, 5) else line.encode("utf-8")) + b"\n"
        for number, line in enumerate(lines, start=1))
    (data_dir / "SST-2" / "train.tsv").write_bytes(content)
    return str(data_dir / "SST-2" / "train.tsv")


def test_a_glue_tsv_that_is_not_utf8_names_its_first_such_line_and_the_count(tmp_path):
    from albert_tf.glue.examples import read_examples
    from albert_tf.glue.tasks import get_task

    path = _sst2_with_latin1_rows(tmp_path)
    with pytest.raises(ValueError, match=f"{path}:3: not UTF-8 text \\(2 line\\(s\\) of the file are not\\)"):
        read_examples(get_task("sst-2"), "train", data_dir=str(tmp_path))
    content = open(path, "rb").read().replace("café tiède".encode("latin-1"), "café tiède".encode("utf-8"))
    open(path, "wb").write(content.replace("très".encode("latin-1"), "très".encode("utf-8")))
    examples = read_examples(get_task("sst-2"), "train", data_dir=str(tmp_path)).examples
    assert [example.text_a for example in examples][1:4:2] == ["un café tiède", "très bien"]


def test_run_classifier_names_a_glue_tsv_that_is_not_utf8_in_one_line(tmp_path):
    path = _sst2_with_latin1_rows(tmp_path / "glue")
    (tmp_path / "glue" / "SST-2" / "dev.tsv").write_text("sentence\tlabel\nfine\t1\n")
    code, stderr = run_script("run_classifier.py", "--do_train", "--task_name=SST-2", f"--data_dir={tmp_path / 'glue'}",
                              f"--output_dir={tmp_path / 'out'}", "--train_step=1")
    assert_one_line_error(code, stderr, f"{path}:3: not UTF-8 text")


def test_run_classifier_refuses_a_missing_train_tsv_before_building_the_dev_features(tmp_path):
    (tmp_path / "glue" / "QNLI").mkdir(parents=True)
    (tmp_path / "glue" / "QNLI" / "dev.tsv").write_text("index\tquestion\tsentence\tlabel\n"
                                                         "0\tWho?\tNobody.\tentailment\n")
    code, stderr = run_script("run_classifier.py", "--do_train", "--task_name=QNLI", f"--data_dir={tmp_path / 'glue'}",
                              f"--output_dir={tmp_path / 'out'}", "--train_step=1")
    assert_one_line_error(code, stderr, "--data_dir", str(tmp_path / "glue" / "QNLI" / "train.tsv"), "does not exist")
    assert "features " not in stderr  # no split was tokenized


def _tiny_classifier(num_labels, vocab_size=50):
    from albert_tf import AlbertClassifier, AlbertConfig

    config = AlbertConfig.from_json_file(os.path.join(REPO, "configs", "albert_tiny.json")).replace(
        vocab_size=vocab_size, embedding_size=8, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
        max_position_embeddings=16)
    return AlbertClassifier(config, num_labels)


def _batches(labels, length=8):
    import tensorflow as tf

    count = len(labels)
    features = {"input_word_ids": tf.ones([count, length], tf.int32),
                "input_mask": tf.ones([count, length], tf.int32),
                "input_type_ids": tf.zeros([count, length], tf.int32)}
    return tf.data.Dataset.from_tensor_slices((features, tf.constant(labels, tf.float32)[:, None])).batch(2)


def _fine_tune_classifier(task, classifier, train, eval_set, train_steps, output_dir):
    """Fine-tunes `classifier` on GLUE's `task` as the driver does (`evaluated_training.fine_tune`),
    evaluating on `eval_set` every 2 steps."""
    from albert_tf.glue import training
    from albert_tf.training import evaluated_training
    from albert_tf.training.optimization import fine_tuning_optimizer

    optimizer = fine_tuning_optimizer("adamw", 1e-3, train_steps=train_steps, warmup_steps=0)
    return evaluated_training.fine_tune(
        training.logits_model(classifier), optimizer, train, lambda model: training.evaluate(task, model, [eval_set]),
        task.selection_metric, train_steps, 2, output_dir, loss=training.task_loss(task), saved_model=classifier)


def test_fine_tuning_stops_on_a_non_finite_loss_and_saves_nothing(tmp_path):
    from albert_tf.error_text import TrainingDiverged
    from albert_tf.training import evaluated_training
    from albert_tf.glue import training
    from albert_tf.glue.tasks import get_task

    task = get_task("sts-b")
    train = _batches([1.0, float("nan")]).repeat()
    eval_set = training.EvalSet("", _batches([1.0, 2.0, 3.0]), [1.0, 2.0, 3.0])
    with pytest.raises(TrainingDiverged, match=r"non-finite loss \(nan\) at step 1; stopped without saving"):
        _fine_tune_classifier(task, _tiny_classifier(1), train, eval_set, 4, str(tmp_path))
    assert not os.path.exists(tmp_path / evaluated_training.BEST_METRICS_FILE)
    assert not any(name.startswith("ckpt") for _, _, names in os.walk(tmp_path) for name in names)


# --- checkpoints.load: check everything, then assign ------------------------------------------

def _damage(prefix, fault):
    import glob

    data = glob.glob(prefix + ".data-*")[0]
    content = open(data, "rb").read()
    if fault == "truncated_data":
        open(data, "wb").write(content[: len(content) // 2])
    elif fault == "empty_data":
        open(data, "wb").write(b"")
    elif fault == "flipped_data":
        middle = len(content) // 2
        open(data, "wb").write(content[:middle] + bytes(b ^ 0xFF for b in content[middle:middle + 64])
                               + content[middle + 64:])
    elif fault == "garbage_index":
        open(prefix + ".index", "wb").write(bytes(range(256)) * 2)
    elif fault == "empty_index":
        open(prefix + ".index", "wb").write(b"")


@pytest.mark.parametrize("fault, words", [
    ("truncated_data", "truncated or damaged"), ("empty_data", "truncated or damaged"),
    ("flipped_data", "truncated or damaged"), ("garbage_index", "is not a readable checkpoint"),
    ("empty_index", "is not a readable checkpoint")])
@pytest.mark.parametrize("kind", ["tf1", "ours"])
def test_a_damaged_checkpoint_is_one_error_and_assigns_nothing(tmp_path, kind, fault, words):
    import numpy as np
    import tensorflow as tf

    from albert_tf.checkpoints import load, save_tf1_checkpoint

    source = _tiny_classifier(2)
    for variable in source.weights:
        variable.assign(variable + 1.0)
    prefix = str(tmp_path / "ckpt")
    if kind == "tf1":
        save_tf1_checkpoint(source, prefix)
    else:
        prefix = tf.train.Checkpoint(model=source).write(prefix)
    _damage(prefix, fault)
    target = _tiny_classifier(2)
    before = [variable.numpy().copy() for variable in target.weights]
    with pytest.raises(ValueError, match=words) as error:
        load(target, prefix)
    assert "ckpt" in str(error.value)
    assert all(np.array_equal(old, variable.numpy()) for old, variable in zip(before, target.weights))


def _save_in(kind, model, directory):
    """Writes `model` (a backbone) in the format `kind`; returns the path `load` reads."""
    import tensorflow as tf

    from albert_tf.checkpoints import save_huggingface_checkpoint, save_keras_hub_preset, save_tf1_checkpoint

    if kind == "tf1":
        save_tf1_checkpoint(model, str(directory / "model.ckpt"))
        return str(directory / "model.ckpt")
    if kind == "ours":
        return tf.train.Checkpoint(model=model).write(str(directory / "ckpt"))
    if kind == "keras":
        model.save(str(directory / "model.keras"))
        return str(directory / "model.keras")
    if kind == "weights_h5":
        model.save_weights(str(directory / "model.weights.h5"))
        return str(directory / "model.weights.h5")
    (save_huggingface_checkpoint if kind == "huggingface" else save_keras_hub_preset)(model, str(directory / kind))
    return str(directory / kind)


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
@pytest.mark.parametrize("kind", ["tf1", "ours", "keras", "weights_h5", "huggingface", "keras_hub"])
def test_every_reader_refuses_non_finite_weights_and_assigns_nothing(tmp_path, kind, value):
    from albert_tf.checkpoints import load, tf1_variables

    source = _tiny_classifier(2).albert
    table = tf1_variables(source)["bert/embeddings/word_embeddings"]
    damaged = table.numpy()
    damaged[3, 1] = value
    table.assign(damaged)
    path = _save_in(kind, source, tmp_path)
    target = _tiny_classifier(2).albert
    before = [variable.numpy().copy() for variable in target.weights]
    with pytest.raises(ValueError, match=r"embeddings\b.* holds NaN or infinite values") as error:
        load(target, path)
    assert str(error.value).startswith(path), str(error.value)
    assert all(np.array_equal(old, variable.numpy()) for old, variable in zip(before, target.weights))


def _corrupt_keras_file(tmp_path):
    path = tmp_path / "model.keras"
    _tiny_classifier(2).save(str(path))
    content = bytearray(path.read_bytes())
    middle = len(content) // 2  # inside model.weights.h5, stored uncompressed: its CRC no longer holds
    content[middle:middle + 16] = bytes(byte ^ 0xFF for byte in content[middle:middle + 16])
    path.write_bytes(bytes(content))
    return str(path)


def test_a_corrupt_keras_file_is_one_error_naming_it(tmp_path):
    from albert_tf.checkpoints import load

    path = _corrupt_keras_file(tmp_path)
    with pytest.raises(ValueError, match=f"{path} is not a loadable .keras file of an ALBERT model .*Bad CRC-32"):
        load(_tiny_classifier(2), path)


def test_convert_names_a_corrupt_keras_file_in_one_line(tmp_path):
    path = _corrupt_keras_file(tmp_path)
    _tiny_classifier(2).albert.config.to_json_file(str(tmp_path / "albert_config.json"))
    before = file_hashes(tmp_path)
    code, stderr = run_script("-m", "albert_cli.convert", f"--from={path}", f"--to={tmp_path / 'out'}", "--format=tf1")
    assert_one_line_error(code, stderr, f"--from {path}", "is not a loadable .keras file", "Bad CRC-32")
    assert_inputs_kept_and_nothing_left(tmp_path, before)


@pytest.mark.parametrize("checkpoints", [1, 2])
def test_a_checkpoint_state_file_that_is_not_text_is_read_as_unreadable(tmp_path, checkpoints):
    import tensorflow as tf

    from albert_tf.checkpoints import load

    source = _tiny_classifier(2)
    for step in range(1, checkpoints + 1):
        tf.train.Checkpoint(model=source).write(str(tmp_path / f"ckpt-{step}"))
    (tmp_path / "checkpoint").write_bytes(bytes(range(256)) * 2)
    if checkpoints == 1:  # the one checkpoint there is read, as with a state file that does not parse
        assert load(_tiny_classifier(2), str(tmp_path)).path == str(tmp_path / "ckpt-1")
        return
    with pytest.raises(FileNotFoundError, match="holds no single checkpoint .* no readable `checkpoint` file"):
        load(_tiny_classifier(2), str(tmp_path))


# --- configs and paths of the wrong kind -------------------------------------------------------

@pytest.mark.parametrize("key, value, words", [
    ("hidden_dropout_prob", "0.1", "`hidden_dropout_prob` must be a number, got '0.1' (str)"),
    ("initializer_range", "0.02", "`initializer_range` must be a number, got '0.02' (str)"),
    ("attention_probs_dropout_prob", None, "`attention_probs_dropout_prob` must be a number"),
    ("hidden_act", ["gelu"], "`hidden_act` must be a string"),
    ("initializer_range", float("nan"), "`initializer_range` must be positive"),
    ("hidden_size", "128", "`hidden_size` must be a positive integer")])
def test_config_field_of_the_wrong_type_is_named(tmp_path, key, value, words):
    from albert_tf.config import AlbertConfig

    values = json.load(open(os.path.join(REPO, "configs", "albert_tiny.json")))
    values[key] = value
    path = tmp_path / "albert_config.json"
    path.write_text(json.dumps(values))
    with pytest.raises(ValueError, match=rf"albert_config.json: AlbertConfig: {__import__('re').escape(words)}"):
        AlbertConfig.from_json_file(str(path))


def test_config_path_that_is_a_directory(tmp_path):
    from albert_tf.config import AlbertConfig

    with pytest.raises(ValueError, match="is a directory; expected an albert_config.json file"):
        AlbertConfig.from_json_file(str(tmp_path))
    with pytest.raises(ValueError, match="--albert_config_file: .* is a directory"):
        build_tiny(write_corpus(tmp_path / "corpus.txt"), str(tmp_path / "out"), albert_config_file=str(tmp_path))


def test_glue_tsv_path_that_is_a_directory(tmp_path):
    from albert_tf.glue.examples import read_examples
    from albert_tf.glue.tasks import get_task

    os.makedirs(tmp_path / "SST-2" / "dev.tsv")
    with pytest.raises(ValueError, match="SST-2/dev.tsv is a directory"):
        read_examples(get_task("sst-2"), "dev", data_dir=str(tmp_path))


def test_run_classifier_reports_a_string_valued_config_field_in_one_line(tmp_path):
    values = json.load(open(os.path.join(REPO, "configs", "albert_tiny.json")))
    values["hidden_dropout_prob"] = "0.1"
    config = tmp_path / "config.json"
    config.write_text(json.dumps(values))
    code, stderr = run_script("run_classifier.py", "--do_eval", f"--albert_config_file={config}",
                              f"--output_dir={tmp_path / 'out'}")
    assert_one_line_error(code, stderr, "--albert_config_file", "hidden_dropout_prob", "must be a number")
    assert not os.path.exists(tmp_path / "out")


# --- output directories and numeric flags -------------------------------------------------------

def _dangling_link(directory):
    os.symlink("gone", os.path.join(directory, "link"))
    return os.path.join(directory, "link")


@pytest.fixture
def a_file(tmp_path):
    path = tmp_path / "a_file"
    path.write_text("not a directory")
    return str(path)


@pytest.mark.parametrize("make_path, create, words", [
    (lambda tmp, a_file: "", True, "is empty"),
    (lambda tmp, a_file: "  ", False, "is empty"),
    (lambda tmp, a_file: a_file, True, "is a file, not a directory"),
    (lambda tmp, a_file: a_file, False, "is a file, not a directory"),
    (lambda tmp, a_file: os.path.join(a_file, "sub"), True, "cannot write to"),
    (lambda tmp, a_file: os.path.join(a_file, "sub", "deeper"), False, "is a file"),
    (lambda tmp, a_file: "/proc/albert-tf-test", True, "cannot write to"),
    (lambda tmp, a_file: _dangling_link(tmp), False, "is a symbolic link to 'gone', which does not exist"),
    (lambda tmp, a_file: _dangling_link(tmp), True, "is a symbolic link to 'gone', which does not exist"),
    (lambda tmp, a_file: os.path.join(_dangling_link(tmp), "hub"), False, "link is a symbolic link to 'gone'")])
def test_require_output_dir_refuses_what_cannot_hold_output(tmp_path, a_file, make_path, create, words):
    from albert_cli.cli import UsageError, require_output_dir

    with pytest.raises(UsageError, match=words):
        require_output_dir("output_dir", make_path(tmp_path, a_file), create=create)


def test_require_output_dir_creates_only_when_asked(tmp_path):
    from albert_cli.cli import require_output_dir

    require_output_dir("export_dir", str(tmp_path / "export" / "1"), create=False)
    assert os.listdir(tmp_path) == []
    require_output_dir("output_dir", str(tmp_path / "out" / "run"))
    assert os.listdir(tmp_path / "out" / "run") == []


@pytest.mark.parametrize("value", ["inf", "nan", "0", "-1e-3"])
def test_require_positive_finite(value):
    from albert_cli.cli import UsageError, require_positive_finite

    with pytest.raises(UsageError, match="--learning_rate must be a finite number > 0"):
        require_positive_finite("learning_rate", float(value))


@pytest.mark.parametrize("flag, words", [
    ("--output_dir=", ["--output_dir is empty"]),
    ("--output_dir={a_file}", ["--output_dir", "is a file"]),
    ("--output_dir={a_file}/sub", ["--output_dir: cannot write to"]),
    ("--learning_rate=inf", ["--learning_rate=inf: must be a finite number > 0"]),
    ("--albert_config_file={directory}", ["--albert_config_file", "is a directory"]),
    ("--extend_positions=repeat", ["--extend_positions extends the position table of --init_checkpoint",
                                   "give --init_checkpoint too"])])
def test_run_pretraining_refuses_bad_output_dir_and_learning_rate(tmp_path, a_file, flag, words):
    code, stderr = run_script(os.path.join(REPO, "run_pretraining.py"), "--do_train", "--num_train_steps=1",
                              f"--output_dir={tmp_path / 'out'}", flag.format(a_file=a_file, directory=tmp_path),
                              cwd=tmp_path)
    assert_one_line_error(code, stderr, *words)
    assert sorted(os.listdir(tmp_path)) == ["a_file"]  # nothing written, not even in the cwd


def test_run_classifier_refuses_a_file_as_export_dir(tmp_path, a_file):
    code, stderr = run_script(os.path.join(REPO, "run_classifier.py"), "--do_eval",
                              f"--output_dir={tmp_path / 'out'}", f"--export_dir={a_file}", cwd=tmp_path)
    assert_one_line_error(code, stderr, "--export_dir", "is a file")
    assert sorted(os.listdir(tmp_path)) == ["a_file"]


# --- what a Keras backend cannot do (issue 62): one line before any work ----------------------
# Each row: the backend, the command's arguments (given tmp_path), the words of its one line.

def _fine_tuning(script, *flags):
    def args(tmp_path):
        return [script, "--do_train", f"--output_dir={tmp_path / 'out'}", *[flag.format(tmp=tmp_path) for flag in flags]]
    return args


def _with_checkpoints_of(kind):
    """A fine-tuning --output_dir holding training checkpoints of `kind` ("tensorflow" or "jax")."""
    def args(tmp_path):
        checkpoints = tmp_path / "out" / "checkpoints"
        if kind == "tensorflow":
            os.makedirs(checkpoints)
            (checkpoints / "checkpoint").write_text('model_checkpoint_path: "ckpt-2"\n')
        else:
            os.makedirs(checkpoints / "ckpt-2")
            (checkpoints / "ckpt-2" / "weights.safetensors").write_bytes(b"")
            (checkpoints / "ckpt-2" / "state.json").write_text(json.dumps({"backend": kind, "step": 2}))
        return _fine_tuning("run_classifier.py", "--task_name=SST-2", "--data_dir={tmp}/none")(tmp_path)
    return args


@pytest.mark.parametrize("backend, make_args, words", [
    ("jax", _fine_tuning("run_classifier.py", "--task_name=SST-2", "--data_dir={tmp}/none", "--export_dir={tmp}/export"),
     ["--export_dir: exports are TensorFlow's", "on jax", "KERAS_BACKEND=tensorflow --do_train=false"]),
    ("torch", _fine_tuning("run_squad.py", "--train_file=t.json", "--predict_file=p.json", "--export_tflite={tmp}/lite"),
     ["--export_tflite: exports are TensorFlow's", "on torch", "KERAS_BACKEND=tensorflow --do_train=false"]),
    ("torch", _fine_tuning("run_race.py", "--data_dir={tmp}/none", "--export_dir={tmp}/export"), ["--export_dir", "on torch"]),
    ("torch", _fine_tuning("run_classifier.py", "--task_name=SST-2", "--data_dir={tmp}/none", "--strategy=tpu"),
     ["--strategy: strategy tpu needs KERAS_BACKEND=jax or tensorflow", "torch backend trains on one device"]),
    ("torch", _fine_tuning("run_classifier.py", "--task_name=SST-2", "--data_dir={tmp}/none", "--kernels=cpu"),
     ["--kernels=cpu", "need the tensorflow backend"]),
    ("jax", _with_checkpoints_of("tensorflow"), ["--output_dir", "holds TensorFlow checkpoints",
                                                 "resume with KERAS_BACKEND=tensorflow"]),
    ("tensorflow", _with_checkpoints_of("jax"), ["--output_dir", "holds portable checkpoints written on the jax "
                                                 "backend", "resume with KERAS_BACKEND=jax"]),
], ids=["classifier-export-on-jax", "squad-tflite-on-torch", "race-export-on-torch", "tpu-strategy-on-torch",
        "tf-kernels-on-torch", "tf-checkpoints-resumed-on-jax", "jax-checkpoints-resumed-on-tf"])
def test_issue62_what_a_backend_cannot_do_is_one_line_before_any_work(tmp_path, backend, make_args, words):
    args = make_args(tmp_path)
    before = file_hashes(tmp_path)
    result = script_process.run_python(args, cwd=REPO, timeout=300,
                                       env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", KERAS_BACKEND=backend))
    assert_one_line(result.returncode, result.stderr, 2, *words)
    assert_inputs_kept_and_nothing_left(tmp_path, before)


# --- serving ----------------------------------------------------------------------------------

@pytest.mark.parametrize("task_name", ["mrpc", "sts-b"])
def test_classifier_serving_answers_an_empty_batch_with_empty_outputs(task_name):
    import tensorflow as tf

    from albert_tf.glue.tasks import get_task
    from albert_tf.serving.classifier_export import ClassifierServingModule

    task = get_task(task_name)
    classifier = _tiny_classifier(task.num_labels, vocab_size=30000)
    module = ClassifierServingModule(classifier, task.text_feature_names, task.labels, SPM_MODEL,
                                     max_seq_length=16)
    signatures = module.signatures()
    empty = {name: tf.constant([], tf.string) for name in task.text_feature_names}
    outputs = signatures["serving_default"](**empty)
    assert {name: value.shape[0] for name, value in outputs.items()} == {name: 0 for name in outputs}
    ids = {name: tf.zeros([0, 0], tf.int32) for name in ("input_word_ids", "input_mask", "input_type_ids")}
    assert all(value.shape[0] == 0 for value in signatures["serve_token_ids"](**ids).values())
    one = {name: tf.constant(["A cat sat."]) for name in task.text_feature_names}
    assert all(value.shape[0] == 1 for value in signatures["serving_default"](**one).values())


@pytest.mark.parametrize("length", [0, 5])
def test_encoder_serving_answers_an_empty_batch_with_empty_outputs(length):
    import numpy as np
    import tensorflow as tf

    from albert_tf.serving.encoder_export import ENCODER_OUTPUTS_SIGNATURE, EncoderModule

    albert = _tiny_classifier(2).albert
    module = EncoderModule(albert)
    signatures = module.signatures()
    empty = {name: tf.zeros([0, length], tf.int32) for name in ("input_word_ids", "input_mask", "input_type_ids")}
    shapes = {name: value.shape.as_list() for name, value in signatures[ENCODER_OUTPUTS_SIGNATURE](**empty).items()}
    hidden = albert.config.hidden_size
    assert shapes == {"sequence_output": [0, length, hidden], "pooled_output": [0, hidden], "default": [0, hidden],
                      "encoder_outputs_0": [0, length, hidden]}
    assert {name: value.shape[0] for name, value in signatures["serving_default"](**empty).items()} == {
        "sequence_output": 0, "pooled_output": 0, "default": 0}
    assert [value.shape.as_list() for value in module.__call__(empty)["encoder_outputs"]] == [[0, length, hidden]]
    ids = tf.constant(np.random.default_rng(0).integers(1, 50, (2, 6)), tf.int32)
    rows = {"input_word_ids": ids, "input_mask": tf.ones_like(ids), "input_type_ids": tf.zeros_like(ids)}
    served, direct = module.__call__(rows), albert(rows, training=False)
    for name in ("sequence_output", "pooled_output"):
        np.testing.assert_allclose(served[name], direct[name], atol=1e-6)


# --- evaluation -------------------------------------------------------------------------------

def test_pretraining_eval_set_smaller_than_a_batch_is_refused_not_scored_zero(tmp_path):
    from pretraining_test_data import run_script as run_pretraining, small_run_flags, write_random_records

    eval_file = write_random_records(str(tmp_path / "eval.tfrecord"), 3)
    output_dir = tmp_path / "out"
    result = run_pretraining(small_run_flags(tmp_path, str(output_dir), do_train=False, do_eval=True,
                                             eval_input_file=eval_file, eval_batch_size=8), timeout=180)
    assert_one_line_error(result.returncode, result.stderr, "fewer examples than one batch of 8",
                          "--eval_batch_size")
    assert not os.path.exists(output_dir / "pretraining_summary.json")


# --- pretraining data that does not fit the model or is damaged -------------------------------

def _pretraining_records(tmp_path, name="train.tfrecord", count=64, change_last=None, cut=False):
    """Random records of the test schema; `change_last(example)` edits a copy of the first record,
    appended at the end; `cut` truncates the file inside its last record."""
    import tensorflow as tf

    from data_prep.tfrecord import frame_record
    from pretraining_test_data import write_random_records

    path = write_random_records(str(tmp_path / name), count)
    if change_last is not None:
        first = next(iter(tf.data.TFRecordDataset(path))).numpy()
        example = tf.train.Example.FromString(first)
        change_last(example.features.feature)
        with open(path, "ab") as handle:
            handle.write(frame_record(example.SerializeToString()))
    if cut:
        content = open(path, "rb").read()
        open(path, "wb").write(content[:-40])
    return path


def _set_ints(name, values):
    def change(features):
        features[name].int64_list.value[:] = values(list(features[name].int64_list.value))
    return change


def _as_floats(name):
    def change(features):
        values = list(features[name].int64_list.value)
        features[name].ClearField("int64_list")
        features[name].float_list.value[:] = values
    return change


@pytest.mark.parametrize("change, words", [
    (_set_ints("input_ids", lambda ids: [99] + ids[1:]), "'input_ids' holds ids in [0, 99], outside the model's [0, 64)"),
    (_set_ints("segment_ids", lambda ids: [2] + ids[1:]), "'segment_ids' holds ids in [0, 2], outside the model's [0, 2)"),
    (_as_floats("input_ids"), "'input_ids' is stored as float_list, expected int64_list")])
def test_first_record_checks_name_the_file_and_feature(tmp_path, change, words):
    import tensorflow as tf

    from albert_tf.pretraining.data import check_file
    from data_prep.tfrecord import frame_record
    from pretraining_test_data import PREDICTIONS, SEQ_LENGTH, VOCAB_SIZE

    source = _pretraining_records(tmp_path, count=1)
    example = tf.train.Example.FromString(next(iter(tf.data.TFRecordDataset(source))).numpy())
    change(example.features.feature)
    path = tmp_path / "bad.tfrecord"
    path.write_bytes(frame_record(example.SerializeToString()))
    with pytest.raises(ValueError, match="bad.tfrecord: feature " + __import__("re").escape(words)):
        check_file(str(path), SEQ_LENGTH, PREDICTIONS, vocab_size=VOCAB_SIZE, type_vocab_size=2)


@pytest.mark.parametrize("damage, words", [
    (dict(change_last=_set_ints("input_ids", lambda ids: ids + [5])), "input_ids"),
    (dict(change_last=_set_ints("masked_lm_ids", lambda ids: [64] + ids[1:])), "an id is >= 64"),
    (dict(change_last=_as_floats("segment_ids")), "segment_ids"),
    (dict(cut=True), "truncated"),
])
def test_find_bad_file_names_the_file_whose_later_record_is_bad(tmp_path, damage, words):
    from albert_tf.pretraining.data import find_bad_file
    from pretraining_test_data import PREDICTIONS, SEQ_LENGTH, VOCAB_SIZE

    good = _pretraining_records(tmp_path, "a.tfrecord")
    bad = _pretraining_records(tmp_path, "b.tfrecord", **damage)
    assert find_bad_file([good], SEQ_LENGTH, PREDICTIONS, VOCAB_SIZE, 2) is None
    path, message = find_bad_file([good, bad], SEQ_LENGTH, PREDICTIONS, VOCAB_SIZE, 2)
    assert path == bad and words in message, message
    assert "{{" not in message and "[Op:" not in message, message


@pytest.mark.parametrize("damage, words", [
    (dict(change_last=_set_ints("input_ids", lambda ids: [64] + ids[1:])), "an id is >= 64"),
    (dict(cut=True), "truncated")])
def test_run_pretraining_stops_on_bad_data_naming_the_file_and_saves_nothing(tmp_path, damage, words):
    from pretraining_test_data import run_script as run_pretraining, small_run_flags

    # One record in 17 is bad, so the shuffled, repeated stream meets it within a few batches.
    records = _pretraining_records(tmp_path, "train.tfrecord", count=16, **damage)
    output_dir = tmp_path / "out"
    result = run_pretraining(small_run_flags(tmp_path, str(output_dir), num_train_steps=64, iterations_per_loop=8,
                                             save_checkpoints_steps=1000), timeout=300)
    assert_one_line_error(result.returncode, result.stderr, "--input_file: bad pretraining data", records, words)
    assert not any(name.startswith("ckpt") for name in os.listdir(output_dir))


# --- full disk and partial outputs ------------------------------------------------------------

def test_a_failed_directory_output_is_removed_and_its_error_kept(tmp_path):
    import errno

    from albert_tf.io_utils import atomic_output

    with pytest.raises(OSError) as raised:
        with atomic_output(str(tmp_path / "1")) as staging:
            os.makedirs(os.path.join(staging, "variables"))
            open(os.path.join(staging, "variables", "part"), "w").write("half")
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), os.path.join(staging, "variables", "part"))
    assert raised.value.errno == errno.ENOSPC
    assert os.listdir(tmp_path) == []  # no hidden partial directory either


DISK_FULL_SCRIPT = """
import errno, os, sys
from albert_cli.cli import run_main
def main(argv):
    if sys.argv[-1] == "tf":
        import tensorflow as tf
        raise tf.errors.UnknownError(None, None, "{{function_node __wrapped__SaveV2_dtypes_3_device_/job:localhost/"
                                     "replica:0/task:0/device:CPU:0}} ckpt-2_temp/part-00000-of-00001.data-00000-of-"
                                     "00001.tempstate1; No space left on device [Op:SaveV2]")
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "out/model.ckpt.index")
run_main(main, argv=sys.argv[:1])
"""


@pytest.mark.parametrize("kind, words", [("os", "no space left on device writing out/model.ckpt.index"),
                                         ("tf", "no space left on device (ckpt-2_temp/part-00000-of-00001")])
def test_a_full_disk_is_one_line_and_exit_2(kind, words):
    code, stderr = run_script("-c", DISK_FULL_SCRIPT, kind)
    assert_one_line_error(code, stderr, words)


def test_killed_checkpoint_saves_leave_no_partials_behind(tmp_path):
    from albert_tf.training.checkpoint_saving import remove_checkpoint_partials

    (tmp_path / "ckpt-5_temp").mkdir()
    (tmp_path / "ckpt-5_temp" / "part-00000-of-00001.data-00000-of-00001").write_bytes(b"half")
    (tmp_path / "ckpt-4.index").write_bytes(b"kept")
    assert remove_checkpoint_partials(str(tmp_path)) == [str(tmp_path / "ckpt-5_temp")]
    assert os.listdir(tmp_path) == ["ckpt-4.index"]


# --- resuming from an output directory that does not fit ----------------------------------------

@pytest.fixture(scope="module")
def trained_pretraining_dir(tmp_path_factory):
    """A run of the test model with checkpoints at steps 2 and 4."""
    from pretraining_test_data import run_script as run_pretraining, small_run_flags

    tmp_path = tmp_path_factory.mktemp("resume")
    output_dir = tmp_path / "out"
    result = run_pretraining(small_run_flags(tmp_path, str(output_dir), num_train_steps=4, iterations_per_loop=2,
                                             save_checkpoints_steps=2), timeout=900)
    assert result.returncode == 0, result.stderr[-2000:]
    return tmp_path


def _garbage_state(output_dir):
    (output_dir / "checkpoint").write_text("garbage {{ not a CheckpointState")


def _truncated_latest(output_dir):
    import glob

    (data,) = glob.glob(str(output_dir / "ckpt-4.data-*"))
    content = open(data, "rb").read()
    open(data, "wb").write(content[: len(content) // 3])


def _other_config(output_dir):
    from pretraining_test_data import TEST_CONFIG

    config_path = output_dir.parent / "other_config.json"
    config_path.write_text(json.dumps(dict(TEST_CONFIG, hidden_size=32)))
    return {"albert_config_file": str(config_path)}


def _binary_state(output_dir):
    (output_dir / "checkpoint").write_bytes(bytes(range(256)) * 2)


@pytest.mark.parametrize("damage, words", [
    (_garbage_state, ["`checkpoint` state file is missing or unreadable", "ckpt-2, ckpt-4"]),
    (_binary_state, ["`checkpoint` state file is missing or unreadable", "ckpt-2, ckpt-4"]),
    (_truncated_latest, ["the latest checkpoint", "ckpt-4 is damaged", "ckpt-2 is intact",
                         "run again with --resume_from_intact_checkpoint"]),
    (_other_config, ["ckpt-4, which does not fit this model", "config"])])
def test_resume_that_cannot_work_says_what_is_there(tmp_path, trained_pretraining_dir, damage, words):
    import shutil

    from pretraining_test_data import run_script as run_pretraining, small_run_flags

    shutil.copytree(trained_pretraining_dir, tmp_path, dirs_exist_ok=True)
    output_dir = tmp_path / "out"
    flags = damage(output_dir) or {}
    before = sorted(os.listdir(output_dir))
    result = run_pretraining(small_run_flags(tmp_path, str(output_dir), num_train_steps=6, iterations_per_loop=2,
                                             save_checkpoints_steps=2, **flags), timeout=180)
    assert_one_line_error(result.returncode, result.stderr, *words)
    assert sorted(os.listdir(output_dir)) == before


def test_resume_from_intact_checkpoint_deletes_the_damaged_latest_and_resumes_from_the_older(
        tmp_path, trained_pretraining_dir):
    import shutil

    from albert_tf.pretraining.metrics_log import read_metrics
    from albert_tf.training.resume_check import damaged
    from pretraining_test_data import run_script as run_pretraining, small_run_flags

    shutil.copytree(trained_pretraining_dir, tmp_path, dirs_exist_ok=True)
    output_dir = tmp_path / "out"
    _truncated_latest(output_dir)
    result = run_pretraining(small_run_flags(tmp_path, str(output_dir), num_train_steps=6, iterations_per_loop=2,
                                             save_checkpoints_steps=2) + ["--resume_from_intact_checkpoint"],
                             timeout=900)
    assert result.returncode == 0, result.stderr[-2000:]
    assert f"deleted the damaged ckpt-4; resuming from the intact {output_dir / 'ckpt-2'}" in result.stderr
    assert [record["step"] for record in read_metrics(str(output_dir)) if record["split"] == "train"] == [2, 4, 6]
    assert all(damaged(str(output_dir / f"ckpt-{step}")) is None for step in (2, 4, 6))


def test_fine_tuning_output_dir_of_another_task_is_refused(tmp_path):
    from albert_tf.glue import training
    from albert_tf.glue.tasks import get_task

    def tune(task_name, labels):
        task = get_task(task_name)
        eval_set = training.EvalSet("", _batches(labels), labels)
        return _fine_tune_classifier(task, _tiny_classifier(task.num_labels), _batches(labels).repeat(), eval_set, 2,
                                     str(tmp_path))

    tune("sts-b", [1.0, 2.0, 3.0, 4.0])
    before = sorted(os.listdir(tmp_path / "checkpoints"))
    with pytest.raises(ValueError, match=r"ckpt-2, which does not fit this model \(.*classification_head|output_weights"):
        tune("mrpc", [0.0, 1.0, 0.0, 1.0])
    assert sorted(os.listdir(tmp_path / "checkpoints")) == before


def test_resume_drops_metrics_of_rolled_back_steps(tmp_path):
    import glob

    import tensorflow as tf
    from tensorflow.core.util import event_pb2

    from albert_tf.pretraining.metrics_log import MetricsLog, read_metrics
    from albert_tf.pretraining.metrics_rollback import drop_records_after

    log = MetricsLog(str(tmp_path))
    for step in (2, 4, 6, 8):
        log.write("train", step, {"loss": 1.0 / step})
    log.close()
    with open(tmp_path / "metrics.jsonl", "a") as handle:
        handle.write('{"step": 10, "spl')  # cut by a kill -9
    assert drop_records_after(str(tmp_path), 4) == 3 + 2
    assert [record["step"] for record in read_metrics(str(tmp_path))] == [2, 4]
    (events,) = glob.glob(str(tmp_path / "logs" / "train" / "events.out.tfevents.*"))
    steps = [event_pb2.Event.FromString(record.numpy()).step for record in tf.data.TFRecordDataset(events)]
    assert max(steps) == 4 and steps.count(2) == 1 and steps.count(4) == 1
    assert drop_records_after(str(tmp_path), 4) == 0


@pytest.mark.slow
def test_sigterm_during_the_final_evaluation_stops_at_once(tmp_path, trained_pretraining_dir):
    import shutil

    from pretraining_test_data import script_command, small_run_flags

    # Resumed from the finished run's step 4, so that no evaluation of step 0 comes before the final one.
    shutil.copytree(trained_pretraining_dir, tmp_path, dirs_exist_ok=True)
    output_dir = tmp_path / "out"
    first_summary = (output_dir / "pretraining_summary.json").read_text()
    flags = small_run_flags(tmp_path, str(output_dir), num_train_steps=6, iterations_per_loop=2,
                            save_checkpoints_steps=2)
    long_eval = ",".join([str(tmp_path / "train.tfrecord")] * 400)  # 12,800 batches: minutes
    flags += ["--do_eval=True", f"--eval_input_file={long_eval}", "--max_eval_steps=100000", "--eval_batch_size=8",
              "--do_train=True"]
    # The evaluation's first progress line comes after its first batch: inside the final evaluation,
    # past its tracing, whatever the machine's load.
    code, stderr = _sigterm_after(script_command(flags), ["evaluation: 1 batches"], cwd=REPO)
    assert code == 143, stderr[-3000:]
    assert "stopped by SIGTERM during evaluation" in stderr and "Traceback" not in stderr
    assert "evaluation at step 6" not in stderr  # stopped, not the rest of the evaluation run first
    assert (output_dir / "pretraining_summary.json").read_text() == first_summary  # no summary of the stopped run


def test_evaluating_the_best_model_of_another_task_is_refused(tmp_path):
    from albert_tf.training import evaluated_training
    from albert_tf.glue import training
    from albert_tf.glue.tasks import get_task

    task = get_task("sts-b")
    classifier = _tiny_classifier(task.num_labels)
    labels = [1.0, 2.0, 3.0, 4.0]
    _fine_tune_classifier(task, classifier, _batches(labels).repeat(), training.EvalSet("", _batches(labels), labels),
                          2, str(tmp_path))
    with pytest.raises(ValueError, match=r"best model .* does not fit this task and config \(2 variable\(s\) differ"):
        evaluated_training.restore_best(_tiny_classifier(3), str(tmp_path))
    evaluated_training.restore_best(_tiny_classifier(1), str(tmp_path))


# --- no input overwritten, one run per output directory, nothing half-written -----------------
# Each row: what to run, the exit status, the words of its one line; every row also checks that
# the files it found are unchanged (the inputs' hashes) and that it left nothing new behind.

def file_hashes(directory):
    """{path under `directory`: sha256 of the file, None for a directory, "fifo" for one}, hidden files included."""
    import hashlib

    hashes = {}
    for root, dirs, files in os.walk(directory):
        for name in dirs:
            hashes[os.path.relpath(os.path.join(root, name), directory)] = None
        for name in files:
            if not os.path.isfile(os.path.join(root, name)):
                hashes[os.path.relpath(os.path.join(root, name), directory)] = "fifo"
                continue
            with open(os.path.join(root, name), "rb") as handle:
                hashes[os.path.relpath(os.path.join(root, name), directory)] = hashlib.sha256(handle.read()).hexdigest()
    return hashes


def assert_inputs_kept_and_nothing_left(directory, before, allowed=()):
    after = file_hashes(directory)
    assert {path: digest for path, digest in after.items() if path in before} == before  # inputs unchanged
    assert sorted(set(after) - set(before) - set(allowed)) == []  # nothing left behind


def assert_one_line(code, stderr, status, *words):
    """`assert_one_line_error` for exit 2; for 143 (SIGTERM) the same without the `error: ` prefix."""
    if status == 2:
        return assert_one_line_error(code, stderr, *words)
    assert code == status and "Traceback" not in stderr, stderr[-3000:]
    last = stderr.strip().splitlines()[-1]
    assert all(word in last for word in words), last


def _corpus_in_output_dir(tmp_path):
    os.makedirs(tmp_path / "d")
    write_corpus(tmp_path / "d" / "train.txt")
    return ["-m", "albert_cli.split_corpus", f"--input_file={tmp_path / 'd' / 'train.txt'}",
            f"--output_dir={tmp_path / 'd'}"]


def _vocab_named_input(tmp_path):
    write_corpus(tmp_path / "c.vocab")
    return ["-m", "albert_cli.train_sentencepiece", f"--input={tmp_path / 'c.vocab'}",
            f"--model_prefix={tmp_path / 'c'}", "--vocab_size=100"]


def _squad_file_named_like_an_output(tmp_path):
    import shutil

    os.makedirs(tmp_path / "out")
    shutil.copy(os.path.join(REPO, "data", "squad", "dev-v2.0-sample.json"), tmp_path / "out" / "predictions.json")
    return ["run_squad.py", "--do_predict", "--version_2_with_negative", f"--output_dir={tmp_path / 'out'}",
            f"--predict_file={tmp_path / 'out' / 'predictions.json'}", f"--init_checkpoint={tmp_path / 'never_read'}"]


def _litert_model_in_use(tmp_path):
    os.makedirs(tmp_path / "tflite")
    (tmp_path / "tflite" / "classifier_float32.tflite").write_bytes(b"served")
    return ["run_classifier.py", "--do_eval", f"--output_dir={tmp_path / 'out'}", f"--export_tflite={tmp_path / 'tflite'}"]


def _experiment(*flags):
    def args(tmp_path):
        (tmp_path / "binary.txt").write_bytes(bytes(range(256)) * 8)
        os.makedirs(tmp_path / "corpus_dir")
        return ["-m", "albert_cli.experiments", "sharing", f"--output_dir={tmp_path / 'out'}",
                *[flag.format(tmp=tmp_path) for flag in flags]]
    return args


@pytest.mark.parametrize("make_args, words", [
    (_corpus_in_output_dir, ["--output_dir", "d/train.txt", "is also an input (--input_file"]),
    (_vocab_named_input, ["--model_prefix", "c.vocab", "is also an input (--input"]),
    (_squad_file_named_like_an_output, ["--output_dir", "out/predictions.json", "is also an input (--predict_file"]),
    (_litert_model_in_use, ["--export_tflite", "classifier_float32.tflite exists", "never replaced"]),
    (_experiment("--scale=inf"), ["--scale must be a finite number > 0, got inf"]),
    (_experiment("--output_dir=/proc/albert-tf-test"), ["--output_dir: cannot write to /proc/albert-tf-test"]),
    (_experiment("--corpus_file={tmp}/binary.txt"), ["--corpus_file", "binary.txt is not UTF-8 text"]),
    (_experiment("--corpus_file={tmp}/corpus_dir"), ["--corpus_file", "corpus_dir is a directory"]),
], ids=["split_corpus-into-its-input", "spm-vocab-named-input", "squad-predict-file-named-like-an-output",
        "litert-model-in-use",
        "experiments-scale-inf", "experiments-unwritable-output", "experiments-binary-corpus",
        "experiments-directory-corpus"])
def test_issue40_bad_input_rows(tmp_path, make_args, words):
    args = make_args(tmp_path)
    before = file_hashes(tmp_path)
    code, stderr = run_script(*args)
    assert_one_line(code, stderr, 2, *words)
    assert_inputs_kept_and_nothing_left(tmp_path, before)


@pytest.mark.parametrize("value", ["inf", "nan", "-1", "0"])
def test_experiment_scale_must_be_finite_and_positive(value):
    from albert_cli.experiments.setup import Setup

    with pytest.raises(ValueError, match=f"--scale must be a finite number > 0, got {value}"):
        Setup(output_dir="unused").scaled(float(value))


def test_experiment_corpus_that_it_would_write_is_refused(tmp_path):
    from albert_cli.experiments.setup import Setup

    os.makedirs(tmp_path / "out" / "data")
    corpus = write_corpus(tmp_path / "out" / "data" / "train.txt")
    with pytest.raises(ValueError, match="--output_dir: .*train.txt' is also an input \\(--corpus_file"):
        Setup(output_dir=str(tmp_path / "out"), corpus_file=corpus).check()


HOLD_LOCK = ("import sys, time; from albert_cli.output_lock import lock_output_dir; "
             "lock_output_dir('output_dir', sys.argv[1]); print('locked', flush=True); time.sleep(600)")


@contextlib.contextmanager
def lock_held(directory):
    """A process that holds `directory`'s run lock while the block runs; yields it."""
    os.makedirs(directory, exist_ok=True)
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(directory)], cwd=REPO, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        yield holder
    finally:
        holder.kill()
        holder.wait()


def _pretraining_run(tmp_path):
    from pretraining_test_data import small_run_flags

    return ["run_pretraining.py", *small_run_flags(tmp_path, str(tmp_path / "out"))]


@pytest.mark.parametrize("make_args", [
    _pretraining_run,
    lambda tmp_path: ["run_classifier.py", "--do_train", f"--output_dir={tmp_path / 'out'}"],
    lambda tmp_path: ["run_squad.py", "--do_predict", f"--output_dir={tmp_path / 'out'}",
                      f"--predict_file={os.path.join(REPO, 'data', 'squad', 'dev-v2.0-sample.json')}",
                      "--version_2_with_negative", f"--init_checkpoint={tmp_path / 'never_read'}"],
    lambda tmp_path: ["-m", "albert_cli.experiments", "sharing", f"--output_dir={tmp_path / 'out'}"],
], ids=["run_pretraining", "run_classifier", "run_squad", "experiments"])
def test_a_second_run_on_one_output_dir_is_refused_naming_the_first(tmp_path, make_args):
    args = make_args(tmp_path)
    with lock_held(tmp_path / "out") as holder:
        before = file_hashes(tmp_path)
        code, stderr = run_script(*args)
    assert_one_line(code, stderr, 2, f"--output_dir {tmp_path / 'out'} is in use by another run",
                    f"pid {holder.pid} on host", "since")
    assert_inputs_kept_and_nothing_left(tmp_path, before)


def test_the_lock_of_a_dead_run_is_taken_over(tmp_path):
    from albert_cli.output_lock import lock_output_dir
    from albert_tf.tasks.output_lock import LOCK_FILE

    with lock_held(tmp_path) as holder:
        holder.kill()  # kill -9: the kernel drops its lock, its lock file stays
        holder.wait()
        lock_output_dir("output_dir", str(tmp_path))
    assert json.loads((tmp_path / LOCK_FILE).read_text())["pid"] == os.getpid()


def _lock_as_symlink(output_dir, precious):
    os.symlink(precious, output_dir / ".run.lock")


def _lock_as_hard_link(output_dir, precious):
    os.link(precious, output_dir / ".run.lock")


@pytest.mark.parametrize("make_lock, words", [(_lock_as_symlink, "is a symbolic link"),
                                              (_lock_as_hard_link, "is a hard link to another file")])
def test_a_run_lock_that_is_a_link_is_refused_and_its_target_kept(tmp_path, make_lock, words):
    from albert_cli.cli import UsageError
    from albert_cli.output_lock import lock_output_dir

    precious = tmp_path / "precious.txt"
    precious.write_text("a user's file")
    os.makedirs(tmp_path / "out")
    make_lock(tmp_path / "out", precious)
    with pytest.raises(UsageError, match=f"--output_dir: {tmp_path / 'out' / '.run.lock'} {words}"):
        lock_output_dir("output_dir", str(tmp_path / "out"))
    assert precious.read_text() == "a user's file"


@pytest.mark.parametrize("content", ["[1, 2", "{}", '{"runs": [{"metrics": {}}]}', NESTED,
                                     '{"runs": [{"seed": Infinity, "metrics": {"accuracy": 1}}]}'])
def test_an_unreadable_seeds_summary_is_one_line_naming_it(tmp_path, content):
    os.makedirs(tmp_path / "out")
    (tmp_path / "out" / "seeds_summary.json").write_text(content)
    code, stderr = run_script("run_classifier.py", "--do_eval", f"--output_dir={tmp_path / 'out'}")
    assert_one_line(code, stderr, 2, "--output_dir", "seeds_summary.json is unreadable")
    assert os.listdir(tmp_path / "out") == ["seeds_summary.json"]


def test_run_classifier_refuses_a_run_lock_that_is_a_symlink(tmp_path):
    precious = tmp_path / "precious.txt"
    precious.write_text("a user's file")
    os.makedirs(tmp_path / "out")
    _lock_as_symlink(tmp_path / "out", precious)
    before = file_hashes(tmp_path)
    code, stderr = run_script("run_classifier.py", "--do_train", f"--output_dir={tmp_path / 'out'}")
    assert_one_line(code, stderr, 2, "--output_dir", ".run.lock is a symbolic link")
    assert_inputs_kept_and_nothing_left(tmp_path, before)


@contextlib.contextmanager
def file_size_limit(limit):
    """Writes past `limit` bytes fail (EFBIG, as a full disk fails them): RLIMIT_FSIZE, no root needed."""
    import resource
    import signal

    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an error, not the signal's kill
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)


def test_a_failed_checkpoint_save_leaves_no_partial_checkpoint(tmp_path):
    import tensorflow as tf

    from albert_tf.training.checkpoint_saving import save_checkpoint

    output_dir = tmp_path / "run-2"  # the directory's name holds "-2" as the failing step's files do
    manager = tf.train.CheckpointManager(tf.train.Checkpoint(v=tf.Variable(tf.zeros([100_000]))), str(output_dir), 3)
    save_checkpoint(manager, 1)
    before = file_hashes(output_dir)
    with pytest.raises(tf.errors.OpError, match="File too large"), file_size_limit(100_000):
        save_checkpoint(manager, 2)  # TensorFlow alone leaves ckpt-2_temp/
    assert_inputs_kept_and_nothing_left(output_dir, before)
    assert manager.latest_checkpoint == str(output_dir / "ckpt-1")


def _modules():
    import tensorflow as tf

    small, large = tf.Module(), tf.Module()
    small.v, large.v = tf.Variable(tf.zeros([4])), tf.Variable(tf.zeros([100_000]))
    return small, large


def test_an_export_pair_appears_whole_or_not_at_all(tmp_path):
    from albert_tf.serving.versioned_dir import save_versioned_together

    small, large = _modules()
    models = [(small, str(tmp_path / "preprocessing"), None), (large, str(tmp_path / "encoder"), None)]
    with pytest.raises(Exception, match="File too large"), file_size_limit(100_000):
        save_versioned_together(models, version=5)  # the small one is written, the large one fails
    assert file_hashes(tmp_path) == {"preprocessing": None, "encoder": None}
    assert save_versioned_together(models, version=5) == [str(tmp_path / "preprocessing" / "5"),
                                                          str(tmp_path / "encoder" / "5")]


def test_an_export_version_written_meanwhile_is_one_error_and_kept(tmp_path, monkeypatch):
    import tensorflow as tf

    from albert_tf.serving import versioned_dir

    save = tf.saved_model.save

    def save_while_another_export_finishes(module, path, signatures=None):
        save(module, path, signatures=signatures)
        os.makedirs(tmp_path / "7")
        (tmp_path / "7" / "saved_model.pb").write_bytes(b"the other export's")

    monkeypatch.setattr(versioned_dir.tf.saved_model, "save", save_while_another_export_finishes)
    with pytest.raises(ValueError, match=f"export version 7: {tmp_path / '7'} exists .* nothing of this one was kept"):
        versioned_dir.save_versioned(_modules()[0], str(tmp_path), version=7)
    assert sorted(file_hashes(tmp_path)) == ["7", "7/saved_model.pb"]  # no hidden staging folder left
    assert (tmp_path / "7" / "saved_model.pb").read_bytes() == b"the other export's"


def test_exports_started_in_the_same_second_take_two_default_versions(tmp_path, monkeypatch):
    import tensorflow as tf

    from albert_tf.serving import versioned_dir

    monkeypatch.setattr(versioned_dir.time, "time", lambda: 1_700_000_000.5)
    save, inner = tf.saved_model.save, []

    def save_while_another_export_runs(module, path, signatures=None):
        save(module, path, signatures=signatures)
        if not inner:  # the other export chooses its version now, and finishes first
            inner.append(None)
            inner[0] = versioned_dir.save_versioned_together([(_modules()[0], str(tmp_path / "encoder"), None)])

    monkeypatch.setattr(versioned_dir.tf.saved_model, "save", save_while_another_export_runs)
    outer = versioned_dir.save_versioned_together([(_modules()[0], str(tmp_path / "encoder"), None)])
    assert inner == [[str(tmp_path / "encoder" / "1700000001")]] and outer == [str(tmp_path / "encoder" / "1700000000")]
    assert sorted(os.listdir(tmp_path / "encoder")) == ["1700000000", "1700000001"]  # no reservation left
    monkeypatch.setattr(versioned_dir.tf.saved_model, "save", save)
    assert versioned_dir.save_versioned(_modules()[0], str(tmp_path / "encoder")) == str(tmp_path / "encoder" / "1700000002")


def test_litert_files_never_replace_a_model_and_appear_whole(tmp_path, monkeypatch):
    from albert_tf.serving.litert import publish

    sizes = {"float32": 200_000, "dynamic_int8": 50_000}  # written in the other order
    monkeypatch.setattr(publish, "mediapipe_classifier",
                        lambda classifier, spm, labels, length, quantization: b"x" * sizes[quantization])
    (tmp_path / "classifier_dynamic_int8.tflite").write_bytes(b"in use")
    before = file_hashes(tmp_path)
    with pytest.raises(ValueError, match="classifier_dynamic_int8.tflite exists"):
        publish.export_tflite(None, str(tmp_path), SPM_MODEL, ["0", "1"])
    assert_inputs_kept_and_nothing_left(tmp_path, before)
    (tmp_path / "classifier_float32.tflite").write_bytes(b"in use too")
    with pytest.raises(ValueError, match="classifier_float32.tflite, .*classifier_dynamic_int8.tflite exist; remove them"):
        publish.export_tflite(None, str(tmp_path), SPM_MODEL, ["0", "1"])
    os.remove(tmp_path / "classifier_float32.tflite")
    os.remove(tmp_path / "classifier_dynamic_int8.tflite")
    with pytest.raises(Exception, match="File too large"), file_size_limit(100_000):
        publish.export_tflite(None, str(tmp_path), SPM_MODEL, ["0", "1"], quantizations=("dynamic_int8", "float32"))
    assert os.listdir(tmp_path) == []


def test_a_litert_file_name_taken_by_a_link_to_nothing_is_refused_before_the_conversion(tmp_path):
    from albert_tf.tasks import ConfigError
    from albert_tf.tasks.export_formats import check_litert_output

    os.symlink("/nowhere", tmp_path / "classifier_float32.tflite")
    with pytest.raises(ConfigError, match="export_tflite: .*classifier_float32.tflite exists") as error:
        check_litert_output(str(tmp_path), "classifier", True, "MediaPipe")
    assert error.value.worded(lambda name: f"--{name}").startswith("--export_tflite: ")


def test_without_hard_links_a_new_file_is_still_never_placed_over_another(tmp_path, monkeypatch):
    """vfat, exFAT and some FUSE mounts refuse os.link (EPERM): the name is reserved with O_EXCL."""
    import errno

    from albert_tf import io_utils

    def no_hard_links(source, destination):
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(io_utils.os, "link", no_hard_links)
    with io_utils.atomic_outputs([str(tmp_path / "a"), str(tmp_path / "b")], replace=False) as (a, b):
        open(a, "w").write("new a")
        open(b, "w").write("new b")
    assert (tmp_path / "a").read_text() == "new a" and (tmp_path / "b").read_text() == "new b"
    (tmp_path / "d").write_text("made meanwhile")
    with pytest.raises(FileExistsError):
        with io_utils.atomic_outputs([str(tmp_path / "c"), str(tmp_path / "d")], replace=False) as (c, d):
            open(c, "w").write("new c")
            open(d, "w").write("new d")
    assert sorted(os.listdir(tmp_path)) == ["a", "b", "d"] and (tmp_path / "d").read_text() == "made meanwhile"


@pytest.mark.parametrize("labels", [["negative", "two\nlines"], ["negative", ""], ["negative", " "], ["a\r", "b"],
                                    ["negative", 1]])
def test_a_label_name_the_label_file_cannot_hold_is_refused_before_the_conversion(labels):
    from albert_tf.serving.litert.mediapipe import mediapipe_classifier

    with pytest.raises(ValueError, match="label name .*: expected a non-empty name on one line"):
        mediapipe_classifier(_tiny_classifier(2), SPM_MODEL, labels, seq_length=8)


def test_a_model_file_made_during_the_conversion_is_kept_and_nothing_of_the_export_left(tmp_path, monkeypatch):
    from albert_tf.serving.litert import publish

    def convert_while_another_writes(classifier, spm, labels, length, quantization):
        if quantization == "dynamic_int8":  # published second: the float32 file placed first is undone
            (tmp_path / "classifier_dynamic_int8.tflite").write_bytes(b"made meanwhile")
        return b"x" * 1000

    monkeypatch.setattr(publish, "mediapipe_classifier", convert_while_another_writes)
    with pytest.raises(ValueError, match="classifier_dynamic_int8.tflite exists"):
        publish.export_tflite(None, str(tmp_path), SPM_MODEL, ["0", "1"], quantizations=("float32", "dynamic_int8"))
    assert os.listdir(tmp_path) == ["classifier_dynamic_int8.tflite"]
    assert (tmp_path / "classifier_dynamic_int8.tflite").read_bytes() == b"made meanwhile"


@pytest.mark.parametrize("args, words", [
    (["run_classifier.py", "--task_name=MNLI"], ["--export_tflite", "MNLI classifies a pair of texts", "--export_dir"]),
    (["run_classifier.py", "--task_name=STS-B"], ["--export_tflite", "STS-B scores a similarity (regression)"]),
    (["run_classifier.py", "--tflite_seq_length=513"], ["--tflite_seq_length", "max_position_embeddings 512, got 513"]),
    (["run_classifier.py", "--spm_model_file={tmp}/missing.model"], ["--spm_model_file", "does not exist"]),
    (["run_classifier.py", "--do_lower_case=false"], ["--export_tflite", "lowercases", "--do_lower_case=false"]),
    (["export_encoder.py", "--seq_length=513"], ["--seq_length must be at most 512, got 513"]),
    (["export_encoder.py", "--spm_model_file={tmp}/missing.model"], ["--spm_model_file", "does not exist"]),
], ids=["pair-task", "regression-task", "longer-than-positions", "classifier-missing-spm", "cased",
        "embedder-longer-than-positions", "embedder-missing-spm"])
def test_a_model_mediapipe_cannot_serve_is_refused_before_any_work(tmp_path, args, words):
    """--export_tflite (MediaPipe's form): refused before training or export, nothing written."""
    script, *flags = args
    if script == "run_classifier.py":
        flags += ["--do_train", f"--output_dir={tmp_path / 'out'}"]
    else:
        flags += [f"--init_checkpoint={tmp_path / 'never_read'}", f"--export_dir={tmp_path / 'hub'}"]
    before = file_hashes(tmp_path)
    code, stderr = run_script(script, *[flag.format(tmp=tmp_path) for flag in flags],
                              f"--export_tflite={tmp_path / 'tflite'}")
    assert_one_line_error(code, stderr, *words)
    assert_inputs_kept_and_nothing_left(tmp_path, before)


@pytest.mark.parametrize("flags, words", [
    (["--do_lower_case=false"], ["--export_tflite", "lowercases", "--do_lower_case=false"]),
    (["--albert_config_file={short_config}"], ["--max_seq_length 384 exceeds the model's max_position_embeddings 256"]),
    (["--spm_model_file={tmp}/missing.model"], ["--spm_model_file", "does not exist"]),
    (["--version_2_with_negative"], ["--export_tflite", "SQuAD 2.0 head", "--version_2_with_negative"]),
    (["--max_seq_length=128"], ["--export_tflite", "windows of 384 tokens", "are 128 and 64", "--max_seq_length=384"]),
    (["--max_query_length=32"], ["--export_tflite", "questions cut to 64 pieces", "are 384 and 32"]),
], ids=["cased", "fewer-positions-than-384", "missing-spm", "squad-2.0-head", "fine-tuned-on-128-tokens",
        "questions-cut-to-32"])
def test_a_squad_model_the_task_library_cannot_serve_is_refused_before_any_work(tmp_path, flags, words):
    """--export_tflite (the Task Library's BertQuestionAnswerer): refused before training, nothing written."""
    config = json.loads(open(os.path.join(REPO, "configs", "albert_tiny.json"), encoding="utf-8").read())
    (tmp_path / "short.json").write_text(json.dumps(dict(config, max_position_embeddings=256)))
    squad_train = os.path.join(REPO, "data", "squad", "train-v2.0-sample.json")
    before = file_hashes(tmp_path)
    code, stderr = run_script("run_squad.py", "--do_train", f"--train_file={squad_train}",
                              f"--predict_file={squad_train}", f"--output_dir={tmp_path / 'out'}",
                              f"--albert_config_file={os.path.join(REPO, 'configs', 'albert_tiny.json')}",
                              *[flag.format(tmp=tmp_path, short_config=tmp_path / "short.json") for flag in flags],
                              f"--export_tflite={tmp_path / 'tflite'}")
    assert_one_line_error(code, stderr, *words)
    assert_inputs_kept_and_nothing_left(tmp_path, before)


def test_the_task_library_form_needs_384_positions_of_the_model_itself():
    """Below the command line (whose --max_seq_length check comes first): the library's own check."""
    from albert_tf.serving.litert.task_library import check_question_answerer
    from model_test_data import tiny

    with pytest.raises(ValueError, match="reads 384 tokens, more than the model's max_position_embeddings 256"):
        check_question_answerer(False, tiny(max_position_embeddings=256))
    check_question_answerer(False, tiny(max_position_embeddings=384))


def _sigterm_after(command, line_words, cwd, signal_number=None):
    """Runs `command`, sends SIGTERM (or `signal_number`) once a stderr line holds all of
    `line_words`; returns (code, stderr)."""
    import signal
    import time

    # Ctrl-C as in a terminal: a shell starts background jobs (`pytest ... &`) with SIGINT ignored,
    # which children inherit, and Python then installs no KeyboardInterrupt handler.
    process = subprocess.Popen(command, cwd=cwd, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    seen = []
    try:
        for line in process.stderr:
            seen.append(line)
            if all(word in line for word in line_words):
                time.sleep(0.5)
                process.send_signal(signal_number or signal.SIGTERM)
                break
        _, rest = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return process.returncode, "".join(seen) + rest


SIGTERM_WHILE_WRITING = """
import os, signal, sys
from albert_cli.cli import run_main
from albert_tf.io_utils import atomic_open
def main(argv):
    with atomic_open(os.path.join(sys.argv[1], "out.txt")) as handle:
        handle.write("half")
        handle.flush()
        print("writing", file=sys.stderr, flush=True)
        signal.pause()  # until the signal: the script cannot finish first
run_main(main, argv=sys.argv[:1])
"""


@pytest.mark.parametrize("signal_name, code, words", [("SIGTERM", 143, "stopped by SIGTERM"),
                                                        ("SIGINT", 130, "stopped by Ctrl-C (SIGINT)")])
def test_sigterm_or_ctrl_c_in_any_script_is_one_line_and_removes_partial_files(tmp_path, signal_name, code, words):
    import signal

    returned, stderr = _sigterm_after([sys.executable, "-c", SIGTERM_WHILE_WRITING, str(tmp_path)], ["writing"],
                                      cwd=REPO, signal_number=getattr(signal, signal_name))
    assert_one_line(returned, stderr, code, words, "no partial output was kept")
    assert os.listdir(tmp_path) == []  # not even the hidden temporary file


SIGTERM_INSIDE_A_DESTRUCTOR = """
import os, signal, sys, time
from albert_cli.cli import run_main
from albert_tf.io_utils import atomic_open
class StoppedInside:
    def __del__(self):  # as JAX's garbage-collector callback: Python ignores what it raises
        signal.raise_signal(signal.SIGTERM)
        sum(range(1000))
def main(argv):
    with atomic_open(os.path.join(sys.argv[1], "out.txt")) as handle:
        handle.write("half")
        StoppedInside()
        started = time.monotonic()
        while time.monotonic() < started + 5:  # the next steps, a command's work
            sum(range(10))
        print("ran on after the stop", file=sys.stderr)
run_main(main, argv=sys.argv[:1])
"""


def test_sigterm_raised_where_python_ignores_errors_still_stops_the_command(tmp_path):
    code, stderr = run_script("-c", SIGTERM_INSIDE_A_DESTRUCTOR, str(tmp_path))
    assert "ran on after the stop" not in stderr
    assert_one_line(code, stderr, 143, "stopped by SIGTERM", "no partial output was kept")
    assert os.listdir(tmp_path) == []


@pytest.mark.slow
def test_sigterm_during_an_encoder_export_leaves_nothing_and_says_so(tmp_path):
    import tensorflow as tf

    from albert_tf import AlbertConfig, AlbertModel

    config = AlbertConfig.from_json_file(os.path.join(REPO, "configs", "albert_tiny.json"))
    checkpoint = tf.train.Checkpoint(model=AlbertModel(config)).write(str(tmp_path / "ckpt"))
    before = file_hashes(tmp_path)
    code, stderr = _sigterm_after([sys.executable, "export_encoder.py", f"--init_checkpoint={checkpoint}",
                                   f"--export_dir={tmp_path / 'hub'}", "--export_version=5"],
                                  ["writing the SavedModel", "started"], cwd=REPO)
    assert_one_line(code, stderr, 143, "stopped by SIGTERM", "no partial output was kept")
    assert_inputs_kept_and_nothing_left(tmp_path, before, allowed=["hub", "hub/encoder", "hub/preprocessing"])


@pytest.mark.slow
def test_sigterm_after_the_litert_files_removes_them_with_the_unfinished_savedmodels(tmp_path):
    """The LiteRT files are written first, the SavedModels last (a model server watching the export
    directory sees a version only once all succeeded): a stop while the SavedModels are written
    removes the LiteRT files too."""
    import tensorflow as tf

    from albert_tf import AlbertConfig, AlbertModel

    config = AlbertConfig.from_json_file(os.path.join(REPO, "configs", "albert_tiny.json"))
    checkpoint = tf.train.Checkpoint(model=AlbertModel(config)).write(str(tmp_path / "ckpt"))
    before = file_hashes(tmp_path)
    code, stderr = _sigterm_after([sys.executable, "export_encoder.py", f"--init_checkpoint={checkpoint}",
                                   f"--export_dir={tmp_path / 'hub'}", "--export_version=5",
                                   f"--export_tflite={tmp_path / 'tflite'}", "--seq_length=32"],
                                  ["writing the SavedModel", "started"], cwd=REPO)
    assert_one_line(code, stderr, 143, "stopped by SIGTERM", "no partial output was kept")
    assert "converting to LiteRT (dynamic_int8): done" in stderr  # both files were written before the stop
    assert_inputs_kept_and_nothing_left(tmp_path, before, allowed=["hub", "hub/encoder", "hub/preprocessing", "tflite"])


@pytest.mark.slow
def test_sigterm_during_the_bundled_data_build_leaves_nothing_half_written(tmp_path):
    code, stderr = _sigterm_after([sys.executable, os.path.join(REPO, "run_pretraining.py"), "--num_train_steps=1",
                                   f"--output_dir={tmp_path / 'out'}"], ["building the train data"], cwd=tmp_path)
    assert_one_line(code, stderr, 143, "stopped by SIGTERM")
    left = file_hashes(tmp_path)
    assert not [path for path in left if ".tmp-" in path or path.endswith("_temp")], left
    assert not any(path.endswith(".tfrecord") for path in left), left  # the first one was still being built

# --- albert-convert: a Hugging Face checkpoint's contents are checked, --to is never half-written. ---

def _hf_classifier_dir(directory):
    """A tiny HF AlbertForSequenceClassification directory written by albert-tf."""
    from albert_tf import AlbertClassifier, AlbertConfig  # pylint: disable=g-import-not-at-top
    from albert_tf.checkpoints import save_huggingface_checkpoint  # pylint: disable=g-import-not-at-top

    config = AlbertConfig(vocab_size=64, embedding_size=8, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                          intermediate_size=32, max_position_embeddings=16)
    save_huggingface_checkpoint(AlbertClassifier(config, num_labels=2), directory)
    return directory


def _edit_safetensors(change):
    def edit(directory):
        from safetensors.numpy import load_file, save_file  # pylint: disable=g-import-not-at-top

        path = os.path.join(directory, "model.safetensors")
        arrays = load_file(path)
        change(arrays)
        save_file(arrays, path, metadata={"format": "pt"})
    return edit


def _list_weight_map(directory):
    os.rename(os.path.join(directory, "model.safetensors"), os.path.join(directory, "model-00001-of-00001.safetensors"))
    with open(os.path.join(directory, "model.safetensors.index.json"), "w") as handle:
        json.dump({"metadata": {}, "weight_map": ["model-00001-of-00001.safetensors"]}, handle)


@pytest.mark.parametrize("damage, words", [
    (_edit_safetensors(lambda a: a.update({"classifier.weight": np.array(0.5, np.float32)})),
     ["model.safetensors", "classifier.weight is a 0-d tensor"]),
    (_edit_safetensors(lambda a: a.update({"albert.embeddings.word_embeddings.weight":
                                           a["albert.embeddings.word_embeddings.weight"].astype(np.int32)})),
     ["model.safetensors", "embeddings.word_embeddings.weight has dtype int32"]),
    (_edit_safetensors(lambda a: a.update({"albert.pooler.weight": np.full_like(a["albert.pooler.weight"], np.nan)})),
     ["model.safetensors", "pooler.weight holds NaN"]),
    (_edit_safetensors(lambda a: a.pop("albert.pooler.bias")), ["model.safetensors", "the pooler has no pooler.bias"]),
    (_list_weight_map, ["model.safetensors.index.json", "`weight_map` must be an object", "got list"]),
])
def test_convert_refuses_bad_huggingface_contents_in_one_line(tmp_path, damage, words):
    source = _hf_classifier_dir(str(tmp_path / "hf"))
    damage(source)
    before = {name: open(os.path.join(source, name), "rb").read() for name in os.listdir(source)}
    code, stderr = run_script("-m", "albert_cli.convert", f"--from={source}", f"--to={tmp_path / 'out'}", "--format=tf1")
    assert_one_line_error(code, stderr, f"--from {source}", *words)
    assert not os.path.exists(tmp_path / "out") and os.listdir(tmp_path) == ["hf"]
    assert before == {name: open(os.path.join(source, name), "rb").read() for name in os.listdir(source)}


def test_convert_to_a_read_only_directory_is_one_line_and_leaves_nothing(tmp_path):
    source = _hf_classifier_dir(str(tmp_path / "hf"))
    target = tmp_path / "read_only" / "out"
    os.makedirs(target.parent)
    # As root a chmod does not stop writes: the read-only file system is simulated where --to is created.
    program = ("import errno, os, sys\nreal_mkdir = os.mkdir\n"
               "def mkdir(path, *args, **kwargs):\n"
               f"    if os.path.dirname(os.path.abspath(path)) == {str(target.parent)!r}:\n"
               "        raise OSError(errno.EROFS, os.strerror(errno.EROFS), path)\n"
               "    return real_mkdir(path, *args, **kwargs)\n"
               "os.mkdir = mkdir\nfrom albert_cli.convert import console_main\n"
               f"sys.argv = ['albert-convert', '--from={source}', '--to={target}', '--format=hf']\nconsole_main()\n")
    code, stderr = run_script("-c", program)
    assert_one_line_error(code, stderr, f"--to {target}", "cannot write", "Read-only file system")
    assert os.listdir(target.parent) == []


# --- damaged run records, STS-B rows the original read silently, huge TSV fields ----------------

def test_resume_warns_about_each_damaged_metrics_line_and_keeps_it(tmp_path, caplog):
    from albert_tf.pretraining.metrics_log import MetricsLog, read_metrics
    from albert_tf.pretraining.metrics_rollback import drop_records_after

    log = MetricsLog(str(tmp_path))
    for step in (2, 4, 6):
        log.write("train", step, {"loss": 1.0 / step})
    log.close()
    metrics = tmp_path / "metrics.jsonl"
    lines = metrics.read_bytes().splitlines()
    damaged = [b"garbage", b'{"step": 3}', b"\xff\xfe not UTF-8", b"[1, 2]"]
    metrics.write_bytes(b"\n".join([lines[0], *damaged, *lines[1:]]) + b"\n")
    with pytest.raises(ValueError, match=r"metrics.jsonl:2: not JSON"):
        read_metrics(str(tmp_path))

    assert drop_records_after(str(tmp_path), 4) == len(damaged) + 2  # and step 6, in metrics.jsonl and logs/
    warnings = [record.getMessage() for record in caplog.records if "dropped a line" in record.getMessage()]
    assert len(warnings) == len(damaged)
    for line_number, (warning, line) in enumerate(zip(warnings, damaged), start=2):
        assert f"metrics.jsonl:{line_number}: " in warning
        assert line.decode("utf-8", errors="replace") in warning
    assert (tmp_path / "metrics.jsonl.dropped").read_bytes() == b"".join(line + b"\n" for line in damaged)
    assert [record["step"] for record in read_metrics(str(tmp_path))] == [2, 4]


def _finished_without_summary(output_dir):
    """After the last checkpoint, before the summary: lines without a split and without a loss."""
    (output_dir / "pretraining_summary.json").unlink()
    with open(output_dir / "metrics.jsonl", "a") as handle:
        handle.write('{"step": 4}\n{"step": 4, "split": "eval"}\n')


def _not_utf8_metrics(output_dir):
    with open(output_dir / "metrics.jsonl", "ab") as handle:
        handle.write(b'{"step": 4, "split": "\xff"}\n')


@pytest.mark.parametrize("damage, flags, words", [
    (_finished_without_summary, [], None),
    (lambda out: (out / "pretraining_summary.json").write_text("[1, 2]"), [],
     ["pretraining_summary.json: expected a JSON object, got list"]),
    (lambda out: (out / "pretraining_summary.json").write_text('{"final_step": 4,'), [],
     ["pretraining_summary.json: not a summary this script wrote"]),
    (lambda out: (out / "pretraining_summary.json").write_bytes(b"\xff\xfe"), [],
     ["pretraining_summary.json: not a summary this script wrote"]),
    (_not_utf8_metrics, ["--do_train=false", "--do_eval"], ["metrics.jsonl:", "not UTF-8 text"]),
    (lambda out: (out / "metrics.jsonl").write_text("garbage\n"), ["--do_train=false", "--do_eval"],
     ["metrics.jsonl:1: not JSON"]),
])
def test_a_rerun_over_damaged_run_records_is_a_warning_or_one_line(tmp_path, trained_pretraining_dir, damage, flags,
                                                                    words):
    import shutil

    from pretraining_test_data import run_script as run_pretraining, small_run_flags

    shutil.copytree(trained_pretraining_dir, tmp_path, dirs_exist_ok=True)
    output_dir = tmp_path / "out"
    damage(output_dir)
    before = sorted(os.listdir(output_dir))
    result = run_pretraining(small_run_flags(tmp_path, str(output_dir), num_train_steps=4, iterations_per_loop=2,
                                             save_checkpoints_steps=2) + flags, timeout=900)
    if words:
        assert_one_line_error(result.returncode, result.stderr, *words)
        assert sorted(os.listdir(output_dir)) == before
        return
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-3000:]
    assert "metrics.jsonl:3: dropped a line that is no metrics record" in result.stderr
    assert json.loads((output_dir / "pretraining_summary.json").read_text())["final_step"] == 4


def test_stsb_scores_the_original_read_silently_are_read_with_a_warning_naming_the_lines(tmp_path, caplog):
    from albert_tf.glue.examples import read_examples
    from albert_tf.glue.tasks import get_task
    from glue_test_data import write_glue_file

    rows = [f"{i}\tg\tf\t2012\t{i}\tnone\tnone\tA cat.\tA dog.\t{score}" for i, score in enumerate(["1.5", "99"])]
    rows.append("2\tg\tf\t2012\t2\tnone\tnone\tA cat.\tA dog.\t3.0\t4.5")  # an extra column: its score is 4.5
    path = write_glue_file(tmp_path, "STS-B", "train.tsv", [STSB_HEADER, *rows])
    examples = read_examples(get_task("sts-b"), "train", data_dir=str(tmp_path)).examples
    assert [example.label for example in examples] == [1.5, 99.0, 4.5]  # as the original: no clipping
    warnings = [record.getMessage() for record in caplog.records]
    assert any(f"{path}:4: 1 row(s) with a column count other than the header's 10" in w for w in warnings), warnings
    assert any(f"{path}:3: 1 row(s) with a score outside 0-5" in w for w in warnings), warnings


def test_a_glue_field_of_a_megabyte_is_read(tmp_path):
    from albert_tf.glue.examples import read_examples
    from albert_tf.glue.tasks import get_task
    from glue_test_data import write_glue_file

    sentence = "word " * 200_000
    write_glue_file(tmp_path, "SST-2", "train.tsv", ["sentence\tlabel", f"{sentence}\t1", "short\t0"])
    examples = read_examples(get_task("sst-2"), "train", data_dir=str(tmp_path)).examples
    assert [len(example.text_a) for example in examples] == [len(sentence), 5]


@pytest.mark.parametrize("script, args", [("run_pretraining.py", ("--num_train_steps=1",)),
                                          ("run_classifier.py", ("--task_name=SST-2",))])
def test_the_scripts_refuse_a_kernel_set_that_is_not_bit_identical_with_deterministic(tmp_path, script, args):
    code, stderr = run_script(os.path.join(REPO, script), "--do_train", *args,
                              f"--output_dir={tmp_path / 'out'}", "--deterministic", "--kernels=cpu", cwd=tmp_path)
    assert_one_line_error(code, stderr, "--kernels=cpu with --deterministic", "not bit-identical from run to run",
                          "'reference'")
    assert not os.path.exists(tmp_path / "out") or not os.listdir(tmp_path / "out")


@pytest.mark.parametrize("args, words", [
    (["{tmp}/missing.tflite"], ["model", "missing.tflite: no such file", "MediaPipe metadata"]),
    (["{tmp}"], ["model", "a directory, not a file"]),
    (["{model}"], ["model", "model.tflite: not a LiteRT model", "TFL3", "--export_tflite"]),
    (["{model}", "--port=70000"], ["--port must be from 0 to 65535, got 70000"]),
    (["{tmp}/fifo.tflite"], ["model", "fifo.tflite: not a regular file (a FIFO"]),
], ids=["web-serve-missing-model", "web-serve-directory", "web-serve-not-a-tflite-file", "web-serve-port-out-of-range",
        "web-serve-fifo"])
def test_the_web_page_server_refuses_in_one_line(tmp_path, args, words):
    model = tmp_path / "model.tflite"
    model.write_bytes(b"a text file, not a flatbuffer")
    os.mkfifo(tmp_path / "fifo.tflite")
    code, stderr = run_script(os.path.join(REPO, "web", "serve.py"), *[arg.format(tmp=tmp_path, model=model) for arg in args])
    assert_one_line_error(code, stderr, *words)


def test_the_web_page_server_names_a_model_it_cannot_read_not_the_port(tmp_path, monkeypatch, capsys):
    """An unreadable file (mode 000 for another user; root reads anything, so the refusal is made here)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("web_serve", os.path.join(REPO, "web", "serve.py"))
    serve = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(serve)
    model = tmp_path / "model.tflite"
    model.write_bytes(b"\0\0\0\0TFL3")

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(serve, "open", refuse, raising=False)
    assert serve.main([str(model), "--port=0"]) == 2
    assert capsys.readouterr().err == f"error: model {model}: cannot be read (Permission denied)\n"


# --- the Task Library bench: bench/task_library_qa.py (in the Task Library's environment) and
# bench/task_library_squad.py ---------------------------------------------------------------------

QUESTIONS = [{"context": "The Normans gave their name to Normandy.", "question": "Who gave their name?"}]


def _qa_files(questions=json.dumps(QUESTIONS), link=None):
    """Writes model.tflite (not a model) and questions.json; `link`: (name, target) made a hard link."""
    def prepare(tmp_path):
        (tmp_path / "model.tflite").write_bytes(b"TFL3, but not a model")
        (tmp_path / "questions.json").write_text(questions)
        os.makedirs(tmp_path / "a_directory")
        if link:
            os.link(tmp_path / link[1], tmp_path / link[0])
    return prepare


def _a_tflite_without_metadata(tmp_path):
    import tensorflow as tf

    _qa_files()(tmp_path)
    double = tf.function(lambda x: 2.0 * x, input_signature=[tf.TensorSpec([1, 4], tf.float32)])
    converter = tf.lite.TFLiteConverter.from_concrete_functions([double.get_concrete_function()], double)
    (tmp_path / "model.tflite").write_bytes(converter.convert())


def _an_exported(kind):
    """model.tflite: a tiny classifier's or embedder's MediaPipe export, which the Task Library loads."""
    def prepare(tmp_path):
        from albert_tf import AlbertClassifier, AlbertModel
        from albert_tf.serving.litert.publish import export_tflite, export_tflite_embedder
        from model_test_data import tiny

        _qa_files()(tmp_path)
        if kind == "classifier":
            [path, _] = export_tflite(AlbertClassifier(tiny(num_hidden_layers=1), num_labels=2), str(tmp_path / kind),
                                      SPM_MODEL, ["no", "yes"], seq_length=32)
        else:
            [path, _] = export_tflite_embedder(AlbertModel(tiny(num_hidden_layers=1)), str(tmp_path / kind), SPM_MODEL,
                                               seq_length=32)
        os.replace(path, tmp_path / "model.tflite")
    return prepare


def _a_fifo(name):
    def prepare(tmp_path):
        _qa_files()(tmp_path)
        os.remove(tmp_path / name)
        os.mkfifo(tmp_path / name)
    return prepare


QA_ARGS = ["{tmp}/model.tflite", "{tmp}/questions.json", "{tmp}/answers.json"]


@pytest.mark.parametrize("prepare, args, words", [
    (_qa_files(), QA_ARGS[:2], ["expected MODEL.tflite QUESTIONS.json ANSWERS.json, got 2 arguments"]),
    (_qa_files(), ["{tmp}/missing.tflite", *QA_ARGS[1:]], ["missing.tflite: cannot read the model",
                                                          "No such file"]),
    (_qa_files(), ["{tmp}/a_directory", *QA_ARGS[1:]], ["a_directory: the model is a directory"]),
    (_qa_files(), [QA_ARGS[0], "{tmp}/missing.json", QA_ARGS[2]], ["the questions: cannot read", "missing.json (No such file"]),
    (_qa_files("[{"), QA_ARGS, ["the questions: ", "questions.json is not JSON"]),
    (_qa_files(json.dumps(QUESTIONS[0])), QA_ARGS, ["questions.json: expected a list", "got dict"]),
    (_qa_files(json.dumps([*QUESTIONS, "Who?"])), QA_ARGS, ["questions.json: item 1: expected an object", "got str"]),
    (_qa_files(json.dumps([*QUESTIONS, {"context": "c"}])), QA_ARGS,
     ["questions.json: item 1: \"question\" must be a string, got nothing"]),
    (_qa_files(json.dumps([{"context": ["c"], "question": "q"}])), QA_ARGS,
     ["questions.json: item 0: \"context\" must be a string, got list"]),
    (_qa_files(), [*QA_ARGS[:2], "{tmp}/questions.json"], ["questions.json: the output is also an input"]),
    (_qa_files(link=("answers.json", "model.tflite")), QA_ARGS, ["answers.json: the output is also an input",
                                                                 "model.tflite"]),
    (_qa_files(), [*QA_ARGS[:2], "{tmp}/a_directory"], ["a_directory: the output is a directory"]),
    (_qa_files(), [*QA_ARGS[:2], "/proc/albert-tf-test/answers.json"], ["/proc/albert-tf-test/answers.json: cannot "
                                                                        "write the answers"]),
    (_qa_files(), QA_ARGS, ["model.tflite: not a Task Library BertQuestionAnswerer model", "not a valid Flatbuffer",
                            "run_squad.py --export_tflite"]),
    (_a_tflite_without_metadata, QA_ARGS, ["model.tflite: not a Task Library BertQuestionAnswerer model",
                                           "metadata"]),
    (_an_exported("classifier"), QA_ARGS, ["model.tflite: not a Task Library BertQuestionAnswerer model: its outputs "
                                           "have the shapes [[1, 2]] (a classifier or an embedder?)",
                                           "run_squad.py --export_tflite"]),
    (_an_exported("embedder"), QA_ARGS, ["model.tflite: not a Task Library BertQuestionAnswerer model: its outputs "
                                         "have the shapes [[1, "]),
    (_a_fifo("model.tflite"), QA_ARGS, ["model.tflite: the model is not a regular file (a FIFO"]),
    (_a_fifo("questions.json"), QA_ARGS, ["the questions: ", "questions.json is not a regular file"]),
], ids=["qa-argument-count", "qa-missing-model", "qa-model-directory", "qa-missing-questions", "qa-questions-not-json",
        "qa-questions-not-a-list", "qa-question-not-an-object", "qa-question-without-question",
        "qa-context-not-a-string", "qa-output-is-the-questions", "qa-output-hard-link-to-the-model",
        "qa-output-directory", "qa-output-unwritable", "qa-model-not-a-flatbuffer", "qa-model-without-metadata",
        "qa-classifier-model", "qa-embedder-model", "qa-model-fifo", "qa-questions-fifo"])
def test_the_task_library_qa_script_refuses_in_one_line_and_writes_nothing(tmp_path, prepare, args, words):
    prepare(tmp_path)
    before = file_hashes(tmp_path)
    result = run_task_library_qa(*[arg.format(tmp=tmp_path) for arg in args])
    assert_one_line_error(result.returncode, result.stderr, *words)
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr  # the runtime's own line held back
    assert_inputs_kept_and_nothing_left(tmp_path, before)


SQUAD = {"version": "v2.0", "data": [{"title": "Normans", "paragraphs": [{
    "context": "The Normans gave their name to Normandy in the 10th century.",
    "qas": [{"id": "q1", "question": "Who gave their name to Normandy?", "is_impossible": False,
             "answers": [{"text": "The Normans", "answer_start": 0}]},
            {"id": "q2", "question": "In what century?", "is_impossible": False,
             "answers": [{"text": "10th", "answer_start": 47}]},
            {"id": "q3", "question": "Who left Normandy?", "is_impossible": True, "answers": []}]}]}]}


def _bench(change=None, *flags):
    """bench/task_library_squad.py's arguments on a SQuAD file of two answerable questions and one
    unanswerable, run_squad's predictions and two fake models; `change(tmp_path)` damages one."""
    def args(tmp_path):
        (tmp_path / "squad.json").write_text(json.dumps(SQUAD))
        (tmp_path / "predictions.json").write_text(json.dumps({"q1": "Normans", "q2": "10th", "q3": ""}))
        write_fake_task_library_models(tmp_path / "tflite", SPM_MODEL)
        if change:
            change(tmp_path)
        return [os.path.join(REPO, "bench", "task_library_squad.py"), f"--squad_file={tmp_path / 'squad.json'}",
                f"--predictions={tmp_path / 'predictions.json'}", f"--tflite_dir={tmp_path / 'tflite'}",
                *[flag.format(tmp=tmp_path) for flag in flags]]
    return args


def _edit_squad(edit):
    def change(tmp_path):
        squad = json.loads(json.dumps(SQUAD))
        edit(squad)
        (tmp_path / "squad.json").write_text(json.dumps(squad))
    return change


def _qa(number):
    return lambda squad: squad["data"][0]["paragraphs"][0]["qas"][number]


@pytest.mark.parametrize("make_args, words", [
    (_bench(lambda tmp: (tmp / "squad.json").write_text("{")), ["--squad_file", "squad.json is not JSON"]),
    (_bench(lambda tmp: (tmp / "squad.json").write_bytes(b"\xff\xfe")), ["--squad_file", "is not UTF-8 text"]),
    (_bench(_edit_squad(lambda squad: squad.pop("data"))), ["--squad_file", "squad.json: data must be a list, "
                                                                           "got nothing"]),
    (_bench(_edit_squad(lambda squad: _qa(1)(squad).update(question=2))),
     ["--squad_file", "data[0].paragraphs[0].qas[1].question must be a string, got int"]),
    (_bench(_edit_squad(lambda squad: _qa(0)(squad).update(answers=[]))),
     ["--squad_file", "data[0].paragraphs[0].qas[0] is answerable", "has no answers"]),
    (_bench(_edit_squad(lambda squad: [_qa(i)(squad).update(is_impossible=True) for i in range(2)])),
     ["--squad_file", "no answerable question", "3 questions, all is_impossible"]),
    (_bench(_edit_squad(lambda squad: _qa(1)(squad).update(id="q1"))),
     ["--squad_file", "data[0].paragraphs[0].qas[1].id 'q1' is also the id of data[0].paragraphs[0].qas[0]",
      "question ids must be unique"]),
    (_bench(lambda tmp: (tmp / "predictions.json").write_text("Normans")), ["--predictions", "is not JSON"]),
    (_bench(lambda tmp: (tmp / "predictions.json").write_text(json.dumps({"q1": "Normans"}))),
     ["--predictions", "no answer to 1 of the 2 answerable questions of --squad_file", "'q2'"]),
    (_bench(lambda tmp: os.remove(tmp / "tflite" / "question_answerer_dynamic_int8.tflite")),
     ["--tflite_dir", "question_answerer_dynamic_int8.tflite: no such file"]),
    (_bench(lambda tmp: (tmp / "tflite" / "question_answerer_float32.tflite").write_bytes(b"TFL3")),
     ["--tflite_dir", "question_answerer_float32.tflite holds 0 SentencePiece models", "run_squad.py --export_tflite"]),
    (_bench(None, "--json={tmp}/predictions.json"), ["--json", "predictions.json", "is also an input (--predictions"]),
    (_bench(lambda tmp: os.link(tmp / "squad.json", tmp / "record.json"), "--json={tmp}/record.json"),
     ["--json", "record.json", "is also an input (--squad_file"]),
    (_bench(None, "--json=/proc/albert-tf-test/record.json"), ["--json: cannot write to /proc/albert-tf-test"]),
], ids=["bench-squad-not-json", "bench-squad-not-utf8", "bench-squad-without-data", "bench-question-not-a-string",
        "bench-answerable-without-answers", "bench-no-answerable-question", "bench-duplicate-question-id", "bench-predictions-not-json",
        "bench-prediction-missing", "bench-missing-model", "bench-model-without-sentencepiece",
        "bench-json-is-the-predictions", "bench-json-hard-link-to-the-squad-file", "bench-json-unwritable"])
def test_the_task_library_bench_refuses_bad_input_in_one_line_before_any_work(tmp_path, make_args, words):
    args = make_args(tmp_path)
    before = file_hashes(tmp_path)
    code, stderr = run_script(*args)
    assert_one_line_error(code, stderr, *words)
    assert_inputs_kept_and_nothing_left(tmp_path, before)


def test_the_task_library_bench_names_what_its_task_library_process_said(tmp_path):
    task_library_python()  # the environment is there: the fake models reach the Task Library
    args = _bench(None, "--json={tmp}/record.json")(tmp_path)
    before = file_hashes(tmp_path)
    code, stderr = run_script(*args)
    assert_one_line_error(code, stderr, "bench/task_library_qa.py on", "question_answerer_float32.tflite failed "
                          "(exit status 2)", "not a Task Library BertQuestionAnswerer model")
    assert_inputs_kept_and_nothing_left(tmp_path, before)


def _fake_python(path, body):
    """An executable (shell `body`) standing in for the Task Library's python."""
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return str(path)


@pytest.mark.parametrize("python, code, words", [
    (lambda tmp: str(tmp / "missing" / "python"), 2, ["the Task Library's environment is missing",
                                                      "bash bench/install_task_library.sh"]),
    (lambda tmp: _fake_python(tmp / "python", "echo \"ModuleNotFoundError: No module named 'tflite_support'\" >&2; "
                                                "exit 1"),
     2, ["cannot import tflite_support.task.text (ModuleNotFoundError: No module named 'tflite_support')",
         "environment is broken", "bash bench/install_task_library.sh"]),
    (lambda tmp: _fake_python(tmp / "python", "[ \"$1\" = -c ] && exit 0\necho 'Traceback (most recent call last):' "
                                                ">&2\necho 'RuntimeError: the runtime broke' >&2; exit 1"),
     1, ["question_answerer_float32.tflite failed (exit status 1): RuntimeError: the runtime broke"]),
], ids=["environment-missing", "environment-half-made", "task-library-crash"])
def test_the_task_library_bench_names_a_broken_environment_or_process_in_one_line(tmp_path, monkeypatch, capsys,
                                                                                    python, code, words):
    from glue_test_data import load_bench_script

    bench = load_bench_script("task_library_squad")
    monkeypatch.setattr(bench, "VENV_PYTHON", python(tmp_path))
    args = _bench(None, "--json={tmp}/record.json")(tmp_path)
    before = file_hashes(tmp_path)
    status = bench.main(args[1:])
    stderr = capsys.readouterr().err
    assert status == code and "Traceback" not in stderr, stderr
    assert stderr.startswith("error: ") and len(stderr.strip().splitlines()) == 1, stderr
    assert all(word in stderr for word in words), stderr
    assert_inputs_kept_and_nothing_left(tmp_path, before)


# --- every JSON reader: deeply nested JSON and lone surrogate escapes (albert_tf.json_text) -------


def _json_file(tmp_path, name, text):
    (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / name).write_text(text)
    return str(tmp_path / name)


def _read_squad(tmp_path, text):
    from albert_tf.squad.examples import read_squad_examples
    read_squad_examples(_json_file(tmp_path, "dev.json", text), is_training=False, version_2_with_negative=True)


def _read_race(tmp_path, text):
    from albert_tf.race.examples import read_race_examples
    _json_file(tmp_path, "RACE/dev/middle/all.txt", text)
    read_race_examples(str(tmp_path), "dev", levels=["middle"])


def _read_config(tmp_path, text):
    from albert_tf import AlbertConfig
    AlbertConfig.from_json_file(_json_file(tmp_path, "albert_config.json", text))


def _read_foreign_config(tmp_path, text):
    from albert_tf.checkpoints.architecture import read_json
    read_json(_json_file(tmp_path, "config.json", text))


def _read_metrics_jsonl(tmp_path, text):
    from albert_cli.plot_metrics import read_jsonl
    read_jsonl(_json_file(tmp_path, "metrics.jsonl", text))


def _read_eval_history(tmp_path, text):
    from albert_cli.plot_metrics import plot_metrics
    _json_file(tmp_path, "eval_history.json", text)
    plot_metrics(str(tmp_path))


def _read_feature_cache_sidecar(tmp_path, text):
    from albert_tf.training.feature_cache import read_sidecar
    _json_file(tmp_path, "train.tfrecord.json", text)
    read_sidecar(str(tmp_path / "train.tfrecord"))


def _read_run_settings(tmp_path, text):
    from albert_tf.tasks.run_settings import check_run_settings
    _json_file(tmp_path, "run_settings.json", text)
    check_run_settings(str(tmp_path), {"task": "squad"})


def _read_task_library_questions(tmp_path, text):
    from glue_test_data import load_bench_script
    load_bench_script("task_library_qa").read_questions(_json_file(tmp_path, "questions.json", text))


@pytest.mark.parametrize("text, words", [(NESTED, "nested deeper than a JSON reader follows"),
                                         (LONE_SURROGATE, "the escape \\ud800, half of a UTF-16 pair alone")],
                         ids=["nested", "lone-surrogate"])
@pytest.mark.parametrize("read", [_read_squad, _read_race, _read_config, _read_foreign_config, _read_metrics_jsonl,
                                  _read_eval_history, _read_feature_cache_sidecar, _read_run_settings,
                                  _read_task_library_questions])
def test_every_json_reader_names_its_file_for_deep_nesting_and_lone_surrogates(tmp_path, read, text, words):
    with pytest.raises(Exception) as error:
        read(tmp_path, text)
    message = str(error.value)
    assert type(error.value).__name__ in ("ValueError", "ConfigError", "UsageError", "BadInput"), repr(error.value)
    assert str(tmp_path) in message and words in message and "\n" not in message, message


@pytest.mark.parametrize("flag", ["train_file", "predict_file"])
def test_run_squad_names_deeply_nested_json_in_one_line(tmp_path, flag):
    from squad_test_data import SQUAD_DEV, TINY_CONFIG

    files = {"train_file": SQUAD_DEV, "predict_file": SQUAD_DEV, flag: _json_file(tmp_path, "bad.json", NESTED)}
    code, stderr = run_script("run_squad.py", "--version_2_with_negative", "--do_train",
                              *[f"--{name}={value}" for name, value in files.items()],
                              f"--output_dir={tmp_path / 'out'}", f"--cached_dir={tmp_path / 'cache'}",
                              f"--albert_config_file={TINY_CONFIG}", "--max_seq_length=64", "--doc_stride=32",
                              "--max_query_length=16")
    assert_one_line_error(code, stderr, f"--{flag}", "bad.json", "nested deeper than a JSON reader follows")


def test_the_task_library_qa_script_run_without_tflite_support_says_which_python_to_use(tmp_path):
    _qa_files()(tmp_path)
    result = subprocess.run([sys.executable, os.path.join(REPO, "bench", "task_library_qa.py"),
                             *[arg.format(tmp=tmp_path) for arg in QA_ARGS]], capture_output=True, text=True)
    assert_one_line_error(result.returncode, result.stderr, f"{sys.executable} has no tflite-support",
                          ".venv-tflite-support/bin/python", "bash bench/install_task_library.sh")


# --- data inputs that are no regular files: refused, never waited on -------------------------------
@contextlib.contextmanager
def _fifo(path, seconds=15):
    """A FIFO at `path`; should a reader wait on it, a writer comes after `seconds` and closes it (the
    reader then sees an empty file), so that the test fails rather than hangs."""
    import threading

    os.makedirs(os.path.dirname(path), exist_ok=True)
    os.mkfifo(path)
    done = threading.Event()

    def release():
        if not done.wait(seconds):
            with contextlib.suppress(OSError):
                os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))

    writer = threading.Thread(target=release, daemon=True)
    writer.start()
    try:
        yield path
    finally:
        done.set()
        writer.join()


def _glue_dev(tmp_path, path):
    from albert_tf.glue.examples import read_examples
    from albert_tf.glue.tasks import get_task
    read_examples(get_task("sst-2"), "dev", data_dir=str(tmp_path))


def _squad(tmp_path, path):
    from albert_tf.squad.examples import read_squad_examples
    read_squad_examples(path, is_training=False, version_2_with_negative=True)


def _race(tmp_path, path):
    from albert_tf.race.examples import read_race_examples
    read_race_examples(str(tmp_path), "dev", levels=["middle"])


def _config(tmp_path, path):
    from albert_tf import AlbertConfig
    AlbertConfig.from_json_file(path)


def _spm_model(tmp_path, path):
    from albert_tf.text.tokenization import AlbertTokenizer
    AlbertTokenizer(spm_model_file=path)


def _pretraining_data(tmp_path, path):
    from albert_tf.pretraining.data import expand_file_patterns
    expand_file_patterns(str(tmp_path / "train-*"))


@pytest.mark.parametrize("read, name", [(_glue_dev, "SST-2/dev.tsv"), (_squad, "dev.json"),
                                        (_race, "RACE/dev/middle/all.txt"), (_config, "albert_config.json"),
                                        (_spm_model, "30k-clean.model"), (_pretraining_data, "train-00000-of-00001")],
                         ids=["glue", "squad", "race", "config", "spm-model", "pretraining-data"])
def test_a_fifo_as_a_data_input_is_refused_not_waited_on(tmp_path, read, name):
    with _fifo(str(tmp_path / name)) as path, pytest.raises(ValueError) as error:
        read(tmp_path, path)
    assert f"{path}" in str(error.value) and "is a FIFO, not a regular file" in str(error.value), str(error.value)


def test_run_classifier_refuses_a_fifo_as_dev_tsv_in_one_line(tmp_path):
    from glue_test_data import write_glue_file

    write_glue_file(tmp_path, "SST-2", "train.tsv", ["sentence\tlabel", "good\t1", "bad\t0"])
    with _fifo(str(tmp_path / "SST-2" / "dev.tsv")):
        code, stderr = run_script("run_classifier.py", "--task_name=SST-2", "--do_train", f"--data_dir={tmp_path}",
                                  f"--output_dir={tmp_path / 'out'}", "--train_step=1", "--max_seq_length=16")
    assert_one_line_error(code, stderr, "--data_dir", "SST-2/dev.tsv is a FIFO, not a regular file")


# --- a config that lies about sizes is checked against the stored shapes before anything is built -
LIED_INTERMEDIATE_SIZE = 100_000  # 128 x 100,000 floats: what an unchecked build makes is still small here


def _lying_checkpoint(kind, directory):
    """A tiny backbone saved as `kind`, its config then saying intermediate_size 100,000; the path to load."""
    from albert_tf import AlbertModel
    from albert_tf.checkpoints import save_huggingface_checkpoint, save_keras_hub_preset, save_tf1_checkpoint
    from model_test_data import tiny

    model = AlbertModel(tiny(num_hidden_layers=1))
    os.makedirs(directory)
    if kind == "tf1":
        save_tf1_checkpoint(model, os.path.join(directory, "model.ckpt"))
        config, key = os.path.join(directory, "albert_config.json"), "intermediate_size"
        model.config.to_json_file(config)
    elif kind == "huggingface":
        save_huggingface_checkpoint(model, directory)
        config, key = os.path.join(directory, "config.json"), "intermediate_size"
    else:
        save_keras_hub_preset(model, directory)
        config, key = os.path.join(directory, "config.json"), "intermediate_dim"
    with open(config) as handle:
        values = json.load(handle)
    (values["config"] if kind == "keras_hub" else values)[key] = LIED_INTERMEDIATE_SIZE
    with open(config, "w") as handle:
        json.dump(values, handle)
    return os.path.join(directory, "model.ckpt") if kind == "tf1" else directory, config


@pytest.mark.parametrize("kind", ["tf1", "huggingface", "keras_hub"])
def test_convert_checks_a_config_that_lies_about_sizes_before_building(tmp_path, kind):
    source, config = _lying_checkpoint(kind, str(tmp_path / "in"))
    code, stderr = run_script("-m", "albert_cli.convert", f"--from={source}", f"--to={tmp_path / 'out'}", "--format=tf1")
    assert_one_line_error(code, stderr, f"{config}: intermediate_size 100000 is the size of no weight in {source}",
                          "128", "512", "this config is not the checkpoint's")
    assert not os.path.exists(tmp_path / "out")


def test_check_config_sizes_passes_a_config_that_tells_the_truth(tmp_path):
    from albert_tf.checkpoints.stored_sizes import check_config_sizes
    from model_test_data import tiny

    source, _ = _lying_checkpoint("tf1", str(tmp_path / "in"))
    check_config_sizes(tiny(num_hidden_layers=1), source, "the config")
    with pytest.raises(ValueError, match="the config: hidden_size 96 is the size of no weight"):
        check_config_sizes(tiny(num_hidden_layers=1, hidden_size=96), source, "the config")


@pytest.mark.parametrize("script", ["run_classifier.py", "run_pretraining.py"])
def test_the_runners_check_init_checkpoint_sizes_before_building(tmp_path, script):
    from glue_test_data import write_glue_file

    source, config = _lying_checkpoint("tf1", str(tmp_path / "in"))
    for split in ("train", "dev"):
        write_glue_file(tmp_path / "glue", "SST-2", f"{split}.tsv", ["sentence\tlabel", "good\t1", "bad\t0"])
    task_flags = ["--task_name=SST-2", f"--data_dir={tmp_path / 'glue'}", "--train_step=1"] \
        if script == "run_classifier.py" else ["--num_train_steps=1"]
    code, stderr = run_script(script, "--do_train", *task_flags, f"--output_dir={tmp_path / 'out'}",
                              f"--init_checkpoint={source}", "--max_seq_length=16")
    assert_one_line_error(code, stderr, f"--init_checkpoint: cannot initialise from {source}: the model's config: "
                          "intermediate_size 100000 is the size of no weight")
