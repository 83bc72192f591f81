"""`data_prep.create_pretraining_data`: CLI, output schema, determinism, resuming, bad input."""

import json
import os
import subprocess
import sys

import pytest
import tensorflow as tf

from albert_tf.text.tokenization import AlbertTokenizer
from data_prep import tfrecord
from data_prep.create_pretraining_data import build

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPM_MODEL = os.path.join(REPO, "data/albert_spm/30k-clean.model")
CORPUS = os.path.join(REPO, "data/corpus/sample.txt")
SMALL = {"max_seq_length": 64, "max_predictions_per_seq": 10, "dupe_factor": 1}


@pytest.fixture(scope="module")
def small_corpus(tmp_path_factory):
    """The first ~120 KB of the bundled corpus, cut at a line end: several documents."""
    with open(CORPUS, "rb") as handle:
        text = handle.read(120_000)
    path = tmp_path_factory.mktemp("corpus") / "small.txt"
    path.write_bytes(text[:text.rindex(b"\n") + 1])
    return str(path)


def run_cli(*args):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    return subprocess.run([sys.executable, "-m", "albert_cli.create_pretraining_data", *args],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


def read_examples(path):
    return [tf.train.Example.FromString(record.numpy()) for record in tf.data.TFRecordDataset(path)]


def feature_values(example, name):
    feature = example.features.feature[name]
    return list(feature.int64_list.value) or list(feature.float_list.value)


def build_small(corpus_path, output_file, **overrides):
    settings = dict(input_file=corpus_path, output_file=output_file, spm_model_file=SPM_MODEL,
                    num_workers=1, show_progress=False, **SMALL)
    settings.update(overrides)
    return build(**settings)


def file_bytes(paths):
    return [open(path, "rb").read() for path in paths]


@pytest.mark.slow
def test_cli_with_only_input_output_and_model_writes_the_original_schema(tmp_path, small_corpus):
    output = str(tmp_path / "train.tfrecord")
    result = run_cli(f"--input_file={small_corpus}", f"--output_file={output}",
                     f"--spm_model_file={SPM_MODEL}", "--max_seq_length=64", "--dupe_factor=1")
    assert result.returncode == 0, result.stderr
    assert "instances/s" in result.stderr  # the progress line
    examples = read_examples(output)
    stats = json.load(open(output + ".stats.json"))
    assert len(examples) == stats["instances"] > 50
    lengths = {"input_ids": 64, "input_mask": 64, "segment_ids": 64, "token_boundary": 64,
               "masked_lm_positions": 20, "masked_lm_ids": 20, "masked_lm_weights": 20,
               "next_sentence_labels": 1}
    for example in examples[:50]:
        assert {name: len(feature_values(example, name)) for name in lengths} == lengths
        assert example.features.feature["masked_lm_weights"].float_list.value
        ids, mask = feature_values(example, "input_ids"), feature_values(example, "input_mask")
        num_tokens = sum(mask)
        assert ids[0] == 2 and ids[num_tokens - 1] == 3 and set(ids[num_tokens:]) <= {0}
        assert mask == [1] * num_tokens + [0] * (64 - num_tokens)


def test_output_is_identical_for_one_and_two_workers(tmp_path, small_corpus):
    one = build_small(small_corpus, str(tmp_path / "one" / "data"), num_output_shards=3,
                      input_chunk_bytes=16384)
    two = build_small(small_corpus, str(tmp_path / "two" / "data"), num_output_shards=3,
                      input_chunk_bytes=16384, num_workers=2)
    names = [os.path.basename(p) for p in one["stats"]["output_files"]]
    assert names == ["data-00000-of-00003", "data-00001-of-00003", "data-00002-of-00003"]
    assert file_bytes(one["stats"]["output_files"]) == file_bytes(two["stats"]["output_files"])
    assert all(len(data) > 1000 for data in file_bytes(one["stats"]["output_files"]))
    assert {k: v for k, v in one["stats"].items() if k != "output_files"} == \
        {k: v for k, v in two["stats"].items() if k != "output_files"}


def test_the_set_of_instances_does_not_depend_on_the_number_of_shards(tmp_path, small_corpus):
    records = []
    for num_shards in (1, 3):
        result = build_small(small_corpus, str(tmp_path / f"n{num_shards}"), num_output_shards=num_shards,
                             input_chunk_bytes=16384)
        records.append(sorted(r for path in result["stats"]["output_files"] for r in tfrecord.read_records(path)))
    assert len(records[0]) > 100 and records[0] == records[1]


def test_a_corpus_smaller_than_one_chunk_per_shard_fills_every_shard(tmp_path, small_corpus):
    """120 KB is one default (1 MiB) chunk: the chunks are made smaller, not three shards left empty."""
    result = build_small(small_corpus, str(tmp_path / "data"), num_output_shards=4)
    assert all(len(data) > 1000 for data in file_bytes(result["stats"]["output_files"]))


def test_rerun_skips_complete_shards_and_rebuilds_missing_ones(tmp_path, small_corpus):
    output = str(tmp_path / "data")
    first = build_small(small_corpus, output, num_output_shards=2, input_chunk_bytes=16384)
    shards = first["stats"]["output_files"]
    original = file_bytes(shards)
    os.remove(shards[1])
    stale = tmp_path / ".data-00001-of-00002.tmp-deadbeef"
    stale.write_bytes(b"left by a crash")
    second = build_small(small_corpus, output, num_output_shards=2, input_chunk_bytes=16384)
    assert second["skipped_shards"] == [0] and second["built_shards"] == [1]
    assert file_bytes(shards) == original
    assert not stale.exists()
    assert second["stats"] == first["stats"]
    third = build_small(small_corpus, output, num_output_shards=2, input_chunk_bytes=16384, random_seed=7)
    assert third["built_shards"] == [0, 1]  # other settings: nothing is reused
    assert file_bytes(shards) != original


def test_seed_changes_the_data_and_the_same_seed_repeats_it(tmp_path, small_corpus):
    first = file_bytes([build_small(small_corpus, str(tmp_path / "a"))["stats"]["output_files"][0]])
    again = file_bytes([build_small(small_corpus, str(tmp_path / "b"))["stats"]["output_files"][0]])
    other = file_bytes([build_small(small_corpus, str(tmp_path / "c"), random_seed=1)["stats"]["output_files"][0]])
    assert first == again != other


def test_one_output_file_mixes_the_whole_corpus_not_chunk_after_chunk(tmp_path, small_corpus):
    """As the original (all instances shuffled): the records of the corpus's last file are spread
    over the whole output, not written after the first file's (a reader's shuffle buffer would
    then show a short run the first books only)."""
    first = tmp_path / "first.txt"
    first.write_bytes(open(small_corpus, "rb").read())
    marked = tmp_path / "marked.txt"  # the same text with "zebra" after every word
    marked.write_text("".join(" ".join(f"{word} zebra" for word in line.split()) + "\n"
                              for line in open(small_corpus, encoding="utf-8")))
    result = build_small(f"{first},{marked}", str(tmp_path / "train.tfrecord"), input_chunk_bytes=16384)
    zebra_id = 25011  # "▁zebra" in the bundled SentencePiece model
    examples = read_examples(result["stats"]["output_files"][0])
    positions = [i / len(examples) for i, example in enumerate(examples)
                 if zebra_id in feature_values(example, "input_ids")]
    assert len(examples) > 200 and 0.4 < len(positions) / len(examples) < 0.85
    assert 0.4 < sum(positions) / len(positions) < 0.6  # chunk after chunk: about 0.75
    assert min(positions) < 0.05 and max(positions) > 0.95


def test_comma_list_of_outputs_gets_chunks_round_robin(tmp_path, small_corpus):
    outputs = [str(tmp_path / "x.tfrecord"), str(tmp_path / "y.tfrecord")]
    result = build_small(small_corpus, ",".join(outputs), input_chunk_bytes=16384)
    counts = [len(read_examples(path)) for path in outputs]
    assert sum(counts) == result["stats"]["instances"] and min(counts) > 0
    assert result["stats_file"] == outputs[0] + ".stats.json"


def test_paragraph_per_line_input_is_reported_with_a_count_and_its_first_long_line(small_corpus, tmp_path, caplog):
    """sample.txt holds a paragraph per line: at 64 tokens a third of its lines are truncated."""
    tokenizer = AlbertTokenizer(spm_model_file=SPM_MODEL)
    with open(small_corpus, "rb") as handle:
        raw_lines = handle.read().splitlines(keepends=True)
    starts = [sum(map(len, raw_lines[:index])) for index in range(len(raw_lines))]
    long_lines = [(start, line.decode("utf-8").strip()) for start, line in zip(starts, raw_lines)
                  if len(tokenizer.tokenize(line.decode("utf-8"))) > SMALL["max_seq_length"] - 3]
    outputs = [str(tmp_path / "x.tfrecord"), str(tmp_path / "y.tfrecord")]
    with caplog.at_level("WARNING"):
        result = build_small(small_corpus, ",".join(outputs), input_chunk_bytes=16384)  # chunks in both shards
    assert result["stats"]["long_lines"] == len(long_lines) > 0.25 * len(raw_lines)
    first_start, first_text = long_lines[0]
    assert result["stats"]["long_line_example"] == {"chunk": 0, "file": small_corpus, "byte": first_start,
                                                    "text": first_text[:120]}
    (warning,) = [record.getMessage() for record in caplog.records if "paragraph per line" in record.getMessage()]
    assert f"{len(long_lines)} of {len(raw_lines)} lines have more than 61 tokens" in warning
    assert f"{small_corpus} at byte {first_start}: {first_text[:60]!r}" in warning


def test_sentence_per_line_input_with_some_long_sentences_builds_without_the_warning(tmp_path, caplog):
    with open(os.path.join(REPO, "data/corpus/pretraining_sample.txt"), "rb") as handle:
        text = handle.read(120_000)
    corpus = tmp_path / "sentences.txt"
    corpus.write_bytes(text[:text.rindex(b"\n") + 1])
    with caplog.at_level("WARNING"):
        result = build_small(str(corpus), str(tmp_path / "out"))
    assert 0 < result["stats"]["long_lines"] < 0.25 * result["stats"]["lines"]
    assert not any("paragraph per line" in record.getMessage() for record in caplog.records)


def test_non_utf8_lines_are_replaced_and_counted(tmp_path):
    corpus_path = tmp_path / "latin1.txt"
    corpus_path.write_bytes("Caf\u00e9 au lait is served here every morning.\nIt is hot.\n\n".encode("latin-1")
                            + b"Another document starts here.\nIt has two lines of text.\n")
    result = build_small(str(corpus_path), str(tmp_path / "out"), dupe_factor=3)
    assert result["stats"]["non_utf8_lines"] == 1
    assert result["stats"]["lines"] == 5 and result["stats"]["documents"] == 2
    assert result["stats"]["instances"] > 0


@pytest.fixture
def bad_inputs(tmp_path):
    blank = tmp_path / "blank.txt"
    blank.write_text("\n  \n\t\n")
    not_a_model = tmp_path / "bad.model"
    not_a_model.write_bytes(b"this is not a sentencepiece model")
    config = tmp_path / "albert_config.json"
    config.write_text(json.dumps({"vocab_size": 30001, "hidden_size": 768}))
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    return {
        "missing_input": ({"input_file": str(tmp_path / "nope*.txt")}, "--input_file: .* matches no file"),
        "blank_input": ({"input_file": str(blank)}, "--input_file: no text in"),
        "bad_model": ({"spm_model_file": str(not_a_model)}, "not a loadable SentencePiece model"),
        "missing_model": ({"spm_model_file": str(tmp_path / "none.model")}, "--spm_model_file: .* does not exist"),
        "vocab_mismatch": ({"albert_config_file": str(config)}, "has vocab_size 30001, but .* has 30000"),
        "unwritable_output": ({"output_file": str(a_file / "sub" / "data")}, "--output_file: cannot write to"),
        "bad_option": ({"max_seq_length": 3}, "--max_seq_length must be >= 5"),
        "shards_with_list": ({"output_file": f"{tmp_path}/a,{tmp_path}/b", "num_output_shards": 2},
                             "must be one prefix"),
        "more_shards_than_text": ({"num_output_shards": 200},
                                  r"--num_output_shards: 200 output files, but the input is only 1\d\d chunk"),
    }


@pytest.mark.parametrize("case", ["missing_input", "blank_input", "bad_model", "missing_model",
                                  "vocab_mismatch", "unwritable_output", "bad_option", "shards_with_list",
                                  "more_shards_than_text"])
def test_bad_input_raises_an_error_naming_the_flag(tmp_path, small_corpus, bad_inputs, case):
    changes, message = bad_inputs[case]
    settings = {"input_file": small_corpus, "output_file": str(tmp_path / "out" / "data"), **changes}
    with pytest.raises((ValueError, FileNotFoundError), match=message):
        build_small(settings.pop("input_file"), settings.pop("output_file"), **settings)


@pytest.mark.slow
def test_cli_reports_bad_input_in_one_line_with_exit_code_2(tmp_path, small_corpus, bad_inputs):
    (changes, _) = bad_inputs["vocab_mismatch"]
    result = run_cli(f"--input_file={small_corpus}", f"--output_file={tmp_path / 'data'}",
                     f"--spm_model_file={SPM_MODEL}", f"--albert_config_file={changes['albert_config_file']}")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1].startswith("error: --albert_config_file")
    assert "vocab_size 30001" in result.stderr and "Traceback" not in result.stderr
