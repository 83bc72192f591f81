"""Bad input for the fine-tuning tasks (GLUE, one's own data, SQuAD, RACE): a damaged feature cache, an
--output_dir of another run, a bad data file are one line naming what is wrong, exit 2, no traceback."""

import json
import os

import pytest
import tensorflow as tf

from albert_tf.tasks import ConfigError
from albert_tf.tasks.run_settings import (SETTINGS_FILE, check_resume, check_run_settings, read_run_settings,
                                          record_run_settings, run_settings)
from albert_tf.config import AlbertConfig
from albert_tf.glue import features as glue_features
from albert_tf.glue.examples import read_examples
from albert_tf.glue.tasks import get_task
from albert_tf.race import features as race_features
from albert_tf.race.examples import read_race_examples
from albert_tf.squad import features as squad_features
from albert_tf.squad.examples import read_squad_examples
from albert_tf.text.tokenization import AlbertTokenizer
from race_test_data import PASSAGES, write_race
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


def _settings(task="squad v2.0", max_seq_length=384, hidden_size=None, spm_model_file=SPM_MODEL):
    config = AlbertConfig.from_json_file(TINY_CONFIG)
    if hidden_size is not None:
        config = AlbertConfig.from_dict(dict(config.to_dict(), hidden_size=hidden_size))
    return run_settings(task, max_seq_length, config, spm_model_file)


def _other_spm_model(directory):
    """A SentencePiece model of the official one's pieces, another file: an unknown protobuf field
    (number 100, varint 1) appended, which the parser keeps and ignores."""
    path = os.path.join(directory, "other.model")
    open(path, "wb").write(open(SPM_MODEL, "rb").read() + bytes([0xA0, 0x06, 0x01]))
    return path


def _trained(output_dir, record):
    """`output_dir` holding `record` and a training checkpoint (of nothing: the record is read first)."""
    os.makedirs(os.path.join(output_dir, "checkpoints"), exist_ok=True)
    open(os.path.join(output_dir, "checkpoints", "ckpt-2.index"), "wb").close()
    with open(os.path.join(output_dir, SETTINGS_FILE), "w") as handle:
        json.dump(record, handle)


@pytest.mark.parametrize("there, words", [
    (_settings(task="race"), ["a race run", "task 'race' there, 'squad v2.0' here"]),
    (_settings(max_seq_length=512), ["max_seq_length 512 there, 384 here"]),
    (_settings(hidden_size=256), ["albert_config.hidden_size 256 there, 128 here"]),
    (_settings(spm_model_file=TINY_CONFIG), ["spm_model_sha256", "--spm_model_file is another SentencePiece model"]),
])
def test_an_output_dir_of_another_run_says_what_is_there_and_what_was_expected(tmp_path, there, words):
    _trained(str(tmp_path), there)
    with pytest.raises(ConfigError) as error:
        check_run_settings(str(tmp_path), _settings())
    message = error.value.worded(lambda name: f"--{name}")  # as the command says it
    assert all(word in message for word in words), message
    check_run_settings(str(tmp_path), there)  # the same run continues


def test_run_settings_are_not_written_over_another_runs_checkpoints(tmp_path):
    os.makedirs(tmp_path / "checkpoints")
    (tmp_path / "checkpoints" / "ckpt-2.index").write_bytes(b"")
    record_run_settings(str(tmp_path), _settings(), {})
    assert not os.path.exists(tmp_path / SETTINGS_FILE)
    (tmp_path / SETTINGS_FILE).write_text("[1, 2")
    with pytest.raises(ConfigError, match="is unreadable"):
        check_run_settings(str(tmp_path), _settings())


def test_an_older_record_is_compared_on_the_keys_it_has_and_completed_by_training(tmp_path):
    older = {name: value for name, value in _settings().items() if name != "spm_model_sha256"}
    _trained(str(tmp_path), older)
    check_run_settings(str(tmp_path), _settings(spm_model_file=TINY_CONFIG))  # nothing recorded to compare
    assert check_resume(str(tmp_path), {"seed": 1}) == []
    record_run_settings(str(tmp_path), _settings(), {"seed": 1})
    assert read_run_settings(str(tmp_path)) == {**_settings(), "training": {"seed": 1}}
    with pytest.raises(ConfigError, match="spm_model_sha256"):
        check_run_settings(str(tmp_path), _settings(spm_model_file=TINY_CONFIG))


def test_a_record_without_a_trained_model_binds_nothing_and_is_written_anew(tmp_path):
    (tmp_path / SETTINGS_FILE).write_text(json.dumps(_settings(task="race")))  # a run stopped before step 1
    check_run_settings(str(tmp_path), _settings())
    record_run_settings(str(tmp_path), _settings(), {"seed": 3})
    assert read_run_settings(str(tmp_path)) == {**_settings(), "training": {"seed": 3}}


@pytest.mark.parametrize("script, args, there, words", [
    ("run_squad.py", [f"--predict_file={SQUAD_DEV}", "--do_predict", "--version_2_with_negative"],
     _settings(task="race", max_seq_length=512), ["a race run", "task 'race' there, 'squad v2.0' here"]),
    ("run_race.py", ["--data_dir={data}", "--do_eval", "--max_seq_length=64", "--max_qa_length=16"],
     _settings(task="race", max_seq_length=512), ["max_seq_length 512 there, 64 here"]),
])
def test_the_runners_refuse_an_output_dir_of_another_run(tmp_path, script, args, there, words):
    output_dir = str(tmp_path / "out")
    os.makedirs(output_dir)
    _trained(output_dir, there)
    data = write_race(tmp_path / "race", splits=("dev",))
    code, stderr = run_script(script, f"--output_dir={output_dir}", *[a.format(data=data) for a in args])
    assert_one_line_error(code, stderr, f"--output_dir {output_dir}", *words)
    with open(os.path.join(output_dir, SETTINGS_FILE)) as handle:
        assert json.load(handle) == there


# SQuAD and RACE files: a field of the wrong JSON type, an answer that is not a span
# of its context, a directory or a latin-1 file is one error naming the file (and question and field).

_CONTEXT = "Normandy is a region in France."


def _squad_qa(**changes):
    qa = {"id": "q1", "question": "Where is Normandy?", "answers": [{"text": "France", "answer_start": 24}],
          "is_impossible": False}
    return {**qa, **changes}


def _squad_file(tmp_path, data=None, **qa_changes):
    """A one-question training file; `data` replaces its whole `data` list, `qa_changes` its question's fields."""
    data = data if data is not None else [{"title": "t", "paragraphs": [{"context": _CONTEXT,
                                                                          "qas": [_squad_qa(**qa_changes)]}]}]
    path = tmp_path / "squad.json"
    path.write_text(json.dumps({"version": "v2.0", "data": data}), encoding="utf-8")
    return str(path)


def _latin1_squad(tmp_path):
    path = tmp_path / "squad.json"
    path.write_bytes(json.dumps({"data": [{"paragraphs": [{"context": "Café", "qas": []}]}]},
                                ensure_ascii=False).encode("latin-1"))
    return str(path)


def _squad_directory(tmp_path):
    os.makedirs(tmp_path / "train.json")
    return str(tmp_path / "train.json")


def _duplicate_ids(tmp_path):
    qas = [_squad_qa(id="q1"), _squad_qa(id="q2")]
    return _squad_file(tmp_path, data=[{"paragraphs": [{"context": _CONTEXT, "qas": qas}]},
                                       {"paragraphs": [{"context": _CONTEXT, "qas": [_squad_qa(id="q2")]}]}])


_BAD_SQUAD = [
    ("answer past the context", lambda p: _squad_file(p, answers=[{"text": "France.", "answer_start": 28}]),
     ["question q1: an answer", "answer_start 28", "not a span"]),
    ("answer_start a string", lambda p: _squad_file(p, answers=[{"text": "France", "answer_start": "24"}]),
     ["question q1: an answer", "'answer_start'", 'a string "24"', "expected an integer"]),
    ("answer_start a float", lambda p: _squad_file(p, answers=[{"text": "France", "answer_start": 24.0}]),
     ["question q1: an answer", "'answer_start'", "a number 24.0", "expected an integer"]),
    ("answer without text", lambda p: _squad_file(p, answers=[{"answer_start": 24}]),
     ["question q1: an answer", "lacks the field 'text'"]),
    ("is_impossible a string", lambda p: _squad_file(p, is_impossible="false"),
     ["question q1", "'is_impossible'", 'a string "false"', "expected true or false"]),
    ("question not a string", lambda p: _squad_file(p, question=None),
     ["question q1", "'question'", "null", "expected a string"]),
    ("article a string", lambda p: _squad_file(p, data=["text"]), ["article 0 is a string", "expected an object"]),
    ("article without paragraphs", lambda p: _squad_file(p, data=[{"title": "t"}]),
     ["article 0 lacks the field 'paragraphs'"]),
    ("paragraph a number", lambda p: _squad_file(p, data=[{"paragraphs": [3]}]),
     ["a paragraph of article 0 is a number 3", "expected an object"]),
    ("qas an object", lambda p: _squad_file(p, data=[{"paragraphs": [{"context": "c", "qas": {}}]}]),
     ["a paragraph of article 0", "'qas' is an object", "expected a list"]),
    ("context null", lambda p: _squad_file(p, data=[{"paragraphs": [{"context": None, "qas": []}]}]),
     ["a paragraph of article 0", "'context' is null", "expected a string"]),
    ("question a list", lambda p: _squad_file(p, data=[{"paragraphs": [{"context": "c", "qas": [[]]}]}]),
     ["a paragraph of article 0: a question is a list", "expected an object"]),
    ("duplicate id", _duplicate_ids, ["question q2 appears twice (articles 0 and 1)", "question ids must be unique"]),
    ("a directory", _squad_directory, ["is a directory", "expected a SQuAD file"]),
    ("latin-1", _latin1_squad, ["not UTF-8 text", "SQuAD files are UTF-8"]),
]


@pytest.mark.parametrize("name, make, words", _BAD_SQUAD, ids=[case[0] for case in _BAD_SQUAD])
def test_a_bad_squad_file_is_named_with_its_question_and_field(tmp_path, name, make, words):
    path = make(tmp_path)
    with pytest.raises(ValueError) as error:
        read_squad_examples(path, True, True)
    message = str(error.value)
    assert message.startswith(path) and all(word in message for word in words), message


def test_training_answers_not_in_their_context_are_skipped_and_counted(tmp_path, caplog):
    qas = [_squad_qa(id="wrong", answers=[{"text": "Normans", "answer_start": 24}]), _squad_qa(id="right"),
           _squad_qa(id="wrong too", answers=[{"text": "France", "answer_start": 0}])]
    path = _squad_file(tmp_path, data=[{"paragraphs": [{"context": _CONTEXT, "qas": qas}]}])
    assert [example.qas_id for example in read_squad_examples(path, True, True)] == ["right"]
    assert "2 training answers skipped" in caplog.text and "first: question wrong" in caplog.text, caplog.text
    assert [example.qas_id for example in read_squad_examples(path, False, True)] == ["wrong", "right", "wrong too"]


def _race_dir(tmp_path, text=None, raw=None, make_directory=False):
    """The test RACE data with one dev passage file replaced by `text`, `raw` bytes or a directory named *.txt."""
    data = write_race(tmp_path / "race", splits=("dev",))
    path = os.path.join(data, "RACE", "dev", "middle", "middle1.txt")
    if make_directory:
        path = os.path.join(os.path.dirname(path), "zzz.txt")
        os.makedirs(path)
    elif raw is not None:
        open(path, "wb").write(raw)
    else:
        passage = {**PASSAGES[0], **text} if isinstance(text, dict) else text
        open(path, "w").write(json.dumps(passage))
    return data, path


_LATIN1_PASSAGE = json.dumps({**PASSAGES[0], "article": "Café"}, ensure_ascii=False).encode("latin-1")

_BAD_RACE = [
    ("int answer", {"answers": [1, "C"]}, ["'answers' holds a number 1", "expected a list of strings"]),
    ("passage a string", "a passage", ["the passage is a string", "expected an object"]),
    ("null question", {"questions": [None, "Tom rides to _ ."]}, ["'questions' holds null", "list of strings"]),
    ("null option", {"options": [[None, "Red", "Green", "Black"], ["a", "b", "c", "d"]]},
     ["'options' holds null", "list of strings"]),
    ("options a string", {"options": "ABCD"}, ["'options' is a string \"ABCD\"", "list of 4 strings"]),
    ("article a list", {"article": ["a"]}, ["'article' is a list", "expected a string"]),
]


@pytest.mark.parametrize("name, text, words", _BAD_RACE, ids=[case[0] for case in _BAD_RACE])
def test_a_bad_race_passage_is_named_with_its_field(tmp_path, name, text, words):
    data, path = _race_dir(tmp_path, text)
    with pytest.raises(ValueError) as error:
        read_race_examples(data, "dev")
    message = str(error.value)
    assert message.startswith(path) and all(word in message for word in words), message


@pytest.mark.parametrize("kind, words", [("latin-1", ["not UTF-8 text"]), ("directory", ["is a directory"])])
def test_a_race_file_that_is_no_text_is_named(tmp_path, kind, words):
    data, path = _race_dir(tmp_path, raw=_LATIN1_PASSAGE, make_directory=kind == "directory")
    with pytest.raises(ValueError) as error:
        read_race_examples(data, "dev")
    assert str(error.value).startswith(path) and all(word in str(error.value) for word in words), str(error.value)


def _empty_contexts(tmp_path):
    qas = [{"id": f"q{i}", "question": "Where?", "answers": [], "is_impossible": True} for i in range(3)]
    return _squad_file(tmp_path, data=[{"paragraphs": [{"context": "", "qas": qas}]}])


@pytest.mark.parametrize("flag, make, words, warned", [
    ("train_file", _latin1_squad, ["not UTF-8 text"], None),
    ("train_file", _squad_directory, ["is a directory"], None),
    ("train_file", _empty_contexts, ["no trainable questions in", "of 3 read, 3 on paragraphs that are empty"], None),
    ("train_file", lambda p: _squad_file(p, answers=[{"text": "Normans", "answer_start": 24}]),
     ["no trainable questions in", "of 0 read"], "1 training answers skipped"),
    ("predict_file", _empty_contexts, ["no questions to answer in"], None),
    ("predict_file", _duplicate_ids, ["question q2 appears twice"], None),
    ("predict_file", lambda p: _squad_file(p, is_impossible="false"), ["question q1", "'is_impossible'"], None),
])
def test_run_squad_names_a_bad_file_in_one_line(tmp_path, flag, make, words, warned):
    path = make(tmp_path)
    files = {"train_file": SQUAD_DEV, "predict_file": SQUAD_DEV, flag: path}  # training reads --predict_file first
    code, stderr = run_script("run_squad.py", "--version_2_with_negative", "--do_train",
                              *[f"--{name}={value}" for name, value in files.items()],
                              f"--output_dir={tmp_path / 'out'}", f"--cached_dir={tmp_path / 'cache'}",
                              f"--albert_config_file={TINY_CONFIG}", "--max_seq_length=64", "--doc_stride=32",
                              "--max_query_length=16")
    assert_one_line_error(code, stderr, f"--{flag}", path, *words)
    assert warned is None or warned in stderr, stderr
    assert not os.path.lexists(tmp_path / "out")  # refused for its data: no --output_dir, no .run.lock


@pytest.mark.parametrize("kind, words", [("latin-1", ["not UTF-8 text"]), ("directory", ["is a directory"]),
                                         ("options", ["'options' is a string"])])
def test_run_race_names_a_bad_passage_in_one_line(tmp_path, kind, words):
    if kind == "options":
        data, path = _race_dir(tmp_path, {"options": "ABCD"})
    else:
        data, path = _race_dir(tmp_path, raw=_LATIN1_PASSAGE, make_directory=kind == "directory")
    code, stderr = run_script("run_race.py", f"--data_dir={data}", "--do_train", f"--output_dir={tmp_path / 'out'}",
                              f"--cached_dir={tmp_path / 'cache'}", f"--albert_config_file={TINY_CONFIG}",
                              "--max_seq_length=64", "--max_qa_length=16")
    assert_one_line_error(code, stderr, "--data_dir", path, *words)
    assert not os.path.lexists(tmp_path / "out")


# --- issue 60: a run directory of any task knows its run; flags refused before any work ------------

_GLUE = ["--max_seq_length=32", "--train_batch_size=8", "--save_checkpoints_steps=2", "--train_step=4"]


@pytest.fixture(scope="module")
def sst2_run(tmp_path_factory):
    """(GLUE data, a finished 4-step SST-2 run) with the bundled data's first rows."""
    from glue_test_data import head_of_shipped

    root = tmp_path_factory.mktemp("sst2_run")
    data = str(root / "glue")
    for task_dir in ("SST-2", "CoLA", "MRPC"):
        head_of_shipped(data, task_dir, 16)
    output_dir = str(root / "base")
    code, stderr = run_script("run_classifier.py", f"--data_dir={data}", f"--output_dir={output_dir}", "--do_train",
                              *_GLUE)
    assert code == 0, stderr[-3000:]
    return data, output_dir


@pytest.mark.parametrize("args, words", [
    (["--task_name=CoLA", "--do_train", "--train_step=6"], ["holds a SST-2 run", "task 'SST-2' there, 'CoLA' here"]),
    (["--task_name=MRPC", "--do_eval"], ["holds a SST-2 run", "task 'SST-2' there, 'MRPC' here"]),
    (["--do_eval", "--spm_model_file={other_spm}"], ["spm_model_sha256", "another SentencePiece model than the run's"]),
    (["--export_dir={tmp}/export", "--max_seq_length=64"], ["max_seq_length 32 there, 64 here"]),
    (["--do_train", "--train_step=6", "--train_batch_size=4"], ["resuming with --train_batch_size=4 (the run's 8)",
                                                               "other batches than its own"]),
    (["--do_train", "--train_step=6", "--seed=7"], ["resuming with --seed=7 (the run's 12345)"]),
], ids=["another-task-trained", "another-task-evaluated", "another-spm-model", "another-length-exported",
        "another-batch-size", "another-seed"])
def test_a_glue_run_directory_refuses_another_run_before_any_work(tmp_path, sst2_run, args, words):
    import shutil

    from test_bad_inputs import assert_inputs_kept_and_nothing_left, file_hashes

    data, base = sst2_run
    output_dir = str(tmp_path / "run")
    shutil.copytree(base, output_dir)
    values = {"tmp": tmp_path, "other_spm": _other_spm_model(str(tmp_path))}
    before = file_hashes(str(tmp_path))
    code, stderr = run_script("run_classifier.py", f"--data_dir={data}", f"--output_dir={output_dir}", *_GLUE,
                              *[arg.format(**values) for arg in args])
    assert_one_line_error(code, stderr, f"--output_dir {output_dir}", *words)
    assert_inputs_kept_and_nothing_left(str(tmp_path), before)


def test_resuming_with_another_learning_rate_says_so_and_records_it(tmp_path, sst2_run):
    import shutil

    data, base = sst2_run
    output_dir = str(tmp_path / "run")
    shutil.copytree(base, output_dir)
    code, stderr = run_script("run_classifier.py", f"--data_dir={data}", f"--output_dir={output_dir}", "--do_train",
                              *_GLUE, "--learning_rate=1e-4")
    assert code == 0, stderr[-3000:]
    assert "resuming with --learning_rate=0.0001 (the run had 5e-05)" in stderr, stderr
    assert read_run_settings(output_dir)["training"]["learning_rate"] == 1e-4


def test_a_run_refused_for_its_data_leaves_no_output_dir(tmp_path):
    data = str(tmp_path / "glue")
    os.makedirs(os.path.join(data, "SST-2"))
    open(os.path.join(data, "SST-2", "train.tsv"), "w").write("sentence\tlabel\nfine\t7\n")  # read first
    code, stderr = run_script("run_classifier.py", f"--data_dir={data}", f"--output_dir={tmp_path / 'out'}",
                              "--do_train", *_GLUE)
    assert_one_line_error(code, stderr, "train.tsv")
    assert not os.path.lexists(tmp_path / "out")


@pytest.mark.parametrize("args, words", [
    (["--seed=-1"], ["flag --seed=-1", "not an integer in the range [0, 4294967295]"]),
    ([f"--seed={2**32}"], [f"flag --seed={2**32}", "not an integer in the range"]),
    ([f"--seed={2**32 - 2}", "--seeds=3"], [f"--seed {2**32 - 2} with --seeds 3 reaches seed {2**32}"]),
    (["--export_tflite="], ["flag --export_tflite=", "--export_tflite is empty; give a directory"]),
    (["--export_dir= "], ["--export_dir is empty; give a directory"]),
], ids=["seed-negative", "seed-2**32", "seeds-past-2**32", "empty-export-tflite",
        "empty-export-dir"])
def test_run_classifier_refuses_bad_run_flags_before_any_work(tmp_path, args, words):
    code, stderr = run_script("run_classifier.py", "--do_train", f"--output_dir={tmp_path / 'out'}", *args)
    assert_one_line_error(code, stderr, *words)
    assert os.listdir(tmp_path) == []


def test_a_warmup_longer_than_the_run_is_said_not_refused(tmp_path):
    code, stderr = run_script("run_classifier.py", "--do_train", f"--output_dir={tmp_path / 'out'}",
                              "--warmup_step=5", "--train_step=4", f"--data_dir={tmp_path / 'no-data'}")
    assert code == 2  # refused for its missing data, after the warning
    assert "--warmup_step 5 exceeds --train_step 4: the learning rate never reaches --learning_rate" in stderr


@pytest.mark.parametrize("script, args", [
    ("run_squad.py", ["--do_predict", f"--predict_file={SQUAD_DEV}", "--export_tflite="]),
    ("run_race.py", ["--do_eval", "--data_dir=RACE", "--seed=-1"]),
])
def test_squad_and_race_refuse_bad_run_flags_before_any_work(tmp_path, script, args):
    code, stderr = run_script(script, f"--output_dir={tmp_path / 'out'}", *args)
    assert_one_line_error(code, stderr, "flag --" + args[-1].split("=")[0].lstrip("-"))
    assert os.listdir(tmp_path) == []


def _damaged_best_data(output_dir):
    (data,) = [name for name in os.listdir(os.path.join(output_dir, "best")) if name.startswith("model.data-")]
    path = os.path.join(output_dir, "best", data)
    content = open(path, "rb").read()
    open(path, "wb").write(content[: len(content) // 2])
    return [os.path.join(output_dir, "best", "model"), "is damaged"]


def _garbled_best_metrics(output_dir):
    open(os.path.join(output_dir, "best_metrics.json"), "w").write('{"step": 4, "metr')
    return [os.path.join(output_dir, "best_metrics.json"), "is not a best-model record", "not JSON"]


def _best_metrics_without_the_metric(output_dir):
    path = os.path.join(output_dir, "best_metrics.json")
    best = json.load(open(path))
    open(path, "w").write(json.dumps({"step": best["step"], "metrics": {}}))
    return [path, "no finite 'accuracy'"]


@pytest.mark.parametrize("damage", [_damaged_best_data, _garbled_best_metrics, _best_metrics_without_the_metric])
def test_a_damaged_best_model_or_record_is_one_line_naming_the_file(tmp_path, sst2_run, damage):
    import shutil

    data, base = sst2_run
    output_dir = str(tmp_path / "run")
    shutil.copytree(base, output_dir)
    words = damage(output_dir)
    code, stderr = run_script("run_classifier.py", f"--data_dir={data}", f"--output_dir={output_dir}", "--do_eval",
                              *_GLUE)
    assert_one_line_error(code, stderr, *words)



# One's own data (run_classifier.py --train_file): every bad file is one line naming the flag, the
# file, its line and the column (for a byte that is not UTF-8 its line:column), and nothing is written.
_GOOD_ROWS = "text,label\ngreat fun,pos\nawful,neg\n"
_BAD_OWN_DATA = [
    ("missing column", {"train.csv": "review,label\ngreat fun,pos\nawful,neg\n"}, [],
     ["--train_file", "train.csv:1: no column 'text' in the header (columns: 'review', 'label')"]),
    ("empty text", {"train.csv": "text,label\ngreat fun,pos\n  ,neg\n"}, [],
     ["--train_file", "train.csv:3: column 'text' is empty"]),
    ("label not in --label_names", {"train.csv": _GOOD_ROWS + "so-so,meh\n"}, ["--label_names=neg,pos"],
     ["--train_file", "train.csv:4: column 'label': 'meh' is not one of the label names ['neg', 'pos']"]),
    ("regression label not a number", {"train.csv": "text,label\ngreat fun,4.5\nawful,low\n"}, ["--regression"],
     ["--train_file", "train.csv:3: column 'label': 'low' is not a number"]),
    ("one label only", {"train.csv": "text,label\ngreat fun,pos\nlovely,pos\n"}, [],
     ["--train_file", "train.csv:2: column 'label' has the one label 'pos' in every row"]),
    ("mixed delimiters", {"train.csv": _GOOD_ROWS + "so-so\tneg\n"}, [],
     ["--train_file", "train.csv:4: 1 field(s), the header has 2; mixed delimiters? this row has tabs"]),
    ("a UTF-16 byte-order mark", {"train.csv": _GOOD_ROWS.encode("utf-16")}, [],
     ["--train_file", "train.csv:1:1: a UTF-16 byte-order mark", "save it as UTF-8"]),
    ("invalid UTF-8", {"train.csv": _GOOD_ROWS.encode() + b"caf\xe9 noir,pos\n"}, [],
     ["--train_file", "train.csv:4:4: not UTF-8 text (byte 0xe9)"]),
    ("dev labels the train file never saw", {"train.csv": _GOOD_ROWS, "dev.csv": "text,label\nfine,pos\nhm,maybe\n"},
     [], ["--dev_file", "dev.csv:3: column 'label': 'maybe' is not among the labels of", "['neg', 'pos']"]),
    ("JSON Lines line not JSON", {"train.jsonl": '{"text": "great", "label": "pos"}\n{"text": "awful",\n'}, [],
     ["--train_file", "train.jsonl:2:", "not JSON"]),
    ("JSON Lines text not a string", {"train.jsonl": '{"text": "great", "label": "pos"}\n{"text": 3, "label": "neg"}\n'},
     [], ["--train_file", "train.jsonl:2: column 'text' is a number, expected a text"]),
    ("unknown extension", {"train.txt": _GOOD_ROWS}, [], ["--train_file", "train.txt: cannot tell the format"]),
]


@pytest.mark.parametrize("name, files, flags, words", _BAD_OWN_DATA, ids=[case[0] for case in _BAD_OWN_DATA])
def test_run_classifier_names_a_bad_own_data_file_its_line_and_column(tmp_path, name, files, flags, words):
    for file_name, content in files.items():
        (tmp_path / file_name).write_bytes(content if isinstance(content, bytes) else content.encode())
    given = [f"--{'dev' if file_name.startswith('dev') else 'train'}_file={tmp_path / file_name}" for file_name in files]
    code, stderr = run_script("run_classifier.py", *given, *flags, "--do_train", f"--output_dir={tmp_path / 'out'}",
                              f"--albert_config_file={TINY_CONFIG}", "--max_seq_length=32")
    assert_one_line_error(code, stderr, str(tmp_path), *words)
    assert not (tmp_path / "out").exists()  # refused before anything is written
