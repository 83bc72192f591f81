"""bench/vocab_coverage.py: the share of a task's tokens the pretraining corpus never (or rarely) shows."""

import os
import subprocess
import sys

import pytest

from glue_test_data import REPO, SPM_MODEL, head_of_shipped, load_bench_script, write_glue_file

SCRIPT = os.path.join(REPO, "bench", "vocab_coverage.py")


@pytest.fixture(scope="module")
def coverage():
    return load_bench_script("vocab_coverage")


@pytest.fixture(scope="module")
def tokenizer(coverage):
    return coverage.AlbertTokenizer(SPM_MODEL)


def test_a_corpus_of_the_tasks_own_text_leaves_nothing_unseen(coverage, tokenizer, tmp_path):
    data_dir = head_of_shipped(str(tmp_path / "glue"), "CoLA", rows_per_split=5, splits=("train",))
    with open(os.path.join(data_dir, "CoLA", "train.tsv"), encoding="utf-8") as handle:
        sentences = [line.split("\t")[3] for line in handle.read().splitlines()]
    corpus = write_glue_file(str(tmp_path), "books", "train.txt", sentences)
    row = coverage.task_coverage(tokenizer, coverage.corpus_counts(tokenizer, corpus), "CoLA", data_dir)
    assert row["tokens"] == sum(len(tokenizer.encode(s)) for s in sentences)
    assert row["unseen"] == 0.0
    assert row["rare"] == 1.0  # six sentences: no piece occurs 10 times


def test_shares_count_tokens_and_the_median_counts_both_segments(coverage, tokenizer, tmp_path):
    data_dir = str(tmp_path / "glue")
    write_glue_file(data_dir, "MRPC", "train.tsv", [
        "Quality\t#1 ID\t#2 ID\t#1 String\t#2 String",
        "1\t1\t2\tthe the the\tthe cat",
        "0\t3\t4\tthe\tthe"])
    corpus = write_glue_file(str(tmp_path), "books", "train.txt", ["the " * 12])
    row = coverage.task_coverage(tokenizer, coverage.corpus_counts(tokenizer, corpus), "MRPC", data_dir)
    cat = len(tokenizer.encode("cat"))
    assert row["tokens"] == 6 + cat
    assert row["unseen"] == pytest.approx(cat / (6 + cat))
    assert row["rare"] == row["unseen"]  # "the" occurs 12 times
    assert row["median_tokens"] == (4 + cat + 2) / 2


def test_a_missing_corpus_is_a_one_line_error(tmp_path):
    result = subprocess.run([sys.executable, SCRIPT, f"--spm_model_file={SPM_MODEL}",
                             f"--corpus={tmp_path / 'absent.txt'}", f"--data_dir={tmp_path}"],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 2
    assert result.stderr.startswith("error: ") and "absent.txt" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
