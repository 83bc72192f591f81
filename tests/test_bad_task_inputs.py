"""Issue 18 for the fine-tuning tasks (GLUE, SQuAD, RACE): a damaged feature cache and an --output_dir of
another run are one line naming what is wrong, exit 2, no traceback."""

import json
import os

import pytest
import tensorflow as tf

from albert_cli.run_settings import SETTINGS_FILE, check_run_settings, record_run_settings, run_settings
from albert_cli.cli import UsageError
from albert_tf.config import AlbertConfig
from albert_tf.glue import features as glue_features
from albert_tf.glue.examples import read_examples
from albert_tf.glue.tasks import get_task
from albert_tf.race import features as race_features
from albert_tf.race.examples import read_race_examples
from albert_tf.squad import features as squad_features
from albert_tf.squad.examples import read_squad_examples
from albert_tf.tokenization import AlbertTokenizer
from race_test_data import write_race
from squad_test_data import REPO, SPM_MODEL, SQUAD_DEV, TINY_CONFIG
from test_bad_inputs import assert_one_line_error, run_script


@pytest.fixture(scope="module")
def tokenizer():
    return AlbertTokenizer(SPM_MODEL)


def _glue_cache(tokenizer, cache_dir, tmp_path):
    task = get_task("SST-2")
    examples = read_examples(task, "dev", os.path.join(REPO, "data", "glue"))
    examples = examples._replace(examples=examples.examples[:24])
    return lambda: glue_features.cached_features(task, "dev", examples, tokenizer, 32, cache_dir)


def _squad_cache(tokenizer, cache_dir, tmp_path):
    examples = read_squad_examples(SQUAD_DEV, False, True)[:6]
    return lambda: squad_features.cached_features(SQUAD_DEV, examples, tokenizer, cache_dir, 64, 32, 16, False,
                                                  True)[0]


def _race_cache(tokenizer, cache_dir, tmp_path):
    examples = read_race_examples(write_race(tmp_path / "race", splits=("dev",)), "dev")
    return lambda: race_features.cached_features(examples, "dev-all", tokenizer, cache_dir, 32, 8)


def _rewrite(path, change):
    records = [tf.train.Example.FromString(record.numpy()) for record in tf.data.TFRecordDataset(path)]
    records = change(records)
    with tf.io.TFRecordWriter(path) as writer:
        for record in records:
            writer.write(record.SerializeToString())


def _as_floats(records):
    for record in records[1:]:  # the first record stays intact: a check of one record would pass
        values = list(record.features.feature["input_ids"].int64_list.value)
        record.features.feature["input_ids"].Clear()
        record.features.feature["input_ids"].float_list.value.extend(values)
    return records


def _damage(path, fault):
    data = bytearray(open(path, "rb").read())
    if fault == "truncated":
        open(path, "wb").write(data[:len(data) * 2 // 3])
    elif fault == "flipped bytes":
        data[len(data) * 2 // 3] ^= 0xFF
        open(path, "wb").write(data)
    elif fault == "float_list":
        _rewrite(path, _as_floats)
    elif fault == "one record short":
        _rewrite(path, lambda records: records[:-1])
    elif fault == "sidecar not JSON":
        open(path + ".json", "w").write("{garbage")
    else:
        os.remove(path)


@pytest.mark.parametrize("cache", [_glue_cache, _squad_cache, _race_cache])
@pytest.mark.parametrize("fault, words", [
    ("truncated", "truncated record"),
    ("flipped bytes", "corrupted record"),
    ("float_list", "input_ids"),
    ("one record short", "records,"),
    ("sidecar not JSON", "is not JSON"),
    ("missing", "missing"),
])
def test_a_damaged_feature_cache_is_named_with_how_to_rebuild_it(tmp_path, tokenizer, cache, fault, words):
    build = cache(tokenizer, str(tmp_path / "cache"), tmp_path)
    path = build()
    build()  # an intact cache is read through and reused
    _damage(path, fault)
    with pytest.raises(ValueError) as error:
        build()
    message = str(error.value)
    assert path in message and "damaged" in message and "delete it" in message and words in message, message


def test_run_squad_names_a_damaged_cache_in_one_line(tmp_path, tokenizer):
    cache_dir = str(tmp_path / "cache")
    examples = read_squad_examples(SQUAD_DEV, False, True)
    path, _ = squad_features.cached_features(SQUAD_DEV, examples, tokenizer, cache_dir, 64, 32, 16, False, True)
    _damage(path, "truncated")
    code, stderr = run_script("run_squad.py", f"--predict_file={SQUAD_DEV}", f"--cached_dir={cache_dir}",
                              f"--output_dir={tmp_path / 'out'}", "--do_predict", "--version_2_with_negative",
                              f"--init_checkpoint={tmp_path}",
                              "--max_seq_length=64", "--doc_stride=32", "--max_query_length=16")
    assert_one_line_error(code, stderr, "--predict_file", path, "damaged")


def _settings(task="squad v2.0", max_seq_length=384, hidden_size=None):
    config = AlbertConfig.from_json_file(TINY_CONFIG)
    if hidden_size is not None:
        config = AlbertConfig.from_dict(dict(config.to_dict(), hidden_size=hidden_size))
    return run_settings(task, max_seq_length, config)


@pytest.mark.parametrize("there, words", [
    (_settings(task="race"), ["a race run", "task 'race' there, 'squad v2.0' here"]),
    (_settings(max_seq_length=512), ["max_seq_length 512 there, 384 here"]),
    (_settings(hidden_size=256), ["albert_config.hidden_size 256 there, 128 here"]),
])
def test_an_output_dir_of_another_run_says_what_is_there_and_what_was_expected(tmp_path, there, words):
    record_run_settings(str(tmp_path), there)
    with pytest.raises(UsageError) as error:
        check_run_settings(str(tmp_path), _settings())
    assert all(word in str(error.value) for word in words), str(error.value)
    check_run_settings(str(tmp_path), there)  # the same run continues


def test_run_settings_are_not_written_over_another_runs_checkpoints(tmp_path):
    os.makedirs(tmp_path / "checkpoints")
    (tmp_path / "checkpoints" / "ckpt-2.index").write_bytes(b"")
    record_run_settings(str(tmp_path), _settings())
    assert not os.path.exists(tmp_path / SETTINGS_FILE)
    (tmp_path / SETTINGS_FILE).write_text("[1, 2")
    with pytest.raises(UsageError, match="is unreadable"):
        check_run_settings(str(tmp_path), _settings())


@pytest.mark.parametrize("script, args, there, words", [
    ("run_squad.py", [f"--predict_file={SQUAD_DEV}", "--do_predict", "--version_2_with_negative"],
     _settings(task="race", max_seq_length=512), ["a race run", "task 'race' there, 'squad v2.0' here"]),
    ("run_race.py", ["--data_dir={data}", "--do_eval", "--max_seq_length=64", "--max_qa_length=16"],
     _settings(task="race", max_seq_length=512), ["max_seq_length 512 there, 64 here"]),
])
def test_the_runners_refuse_an_output_dir_of_another_run(tmp_path, script, args, there, words):
    output_dir = str(tmp_path / "out")
    os.makedirs(output_dir)
    record_run_settings(output_dir, there)
    data = write_race(tmp_path / "race", splits=("dev",))
    code, stderr = run_script(script, f"--output_dir={output_dir}", *[a.format(data=data) for a in args])
    assert_one_line_error(code, stderr, f"--output_dir {output_dir}", *words)
    with open(os.path.join(output_dir, SETTINGS_FILE)) as handle:
        assert json.load(handle) == there
