"""The data commands run under both names, `python -m albert_cli.<name>` and `python -m data_prep.<name>`,
with the same flags and the same outputs; importing the `data_prep` library loads no `albert_cli`."""

import os
import subprocess
import sys

import pytest

from test_create_pretraining_data import REPO, SPM_MODEL, small_corpus  # noqa: F401  (a fixture)

PACKAGES = ("albert_cli", "data_prep")
DATA_MODULES = ("create_pretraining_data", "split_corpus", "train_sentencepiece", "beam_pipeline")


def run(package, name, *args):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    return subprocess.run([sys.executable, "-m", f"{package}.{name}", *args], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=600)


def test_importing_the_library_loads_no_command():
    imports = "; ".join(f"import data_prep.{name}" for name in DATA_MODULES)
    result = subprocess.run([sys.executable, "-c", f"{imports}; import sys; "
                             "print(sorted(m for m in sys.modules if m.split('.')[0] == 'albert_cli'))"],
                            cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "[]"


@pytest.mark.slow
def test_create_pretraining_data_in_parallel_writes_the_same_bytes_under_both_names(tmp_path, small_corpus):
    outputs = {}
    for package in PACKAGES:
        prefix = str(tmp_path / package / "train")
        result = run(package, "create_pretraining_data", f"--input_file={small_corpus}", f"--output_file={prefix}",
                     "--num_output_shards=2", "--num_workers=2", "--input_chunk_bytes=16384",
                     f"--spm_model_file={SPM_MODEL}", "--max_seq_length=64", "--max_predictions_per_seq=10",
                     "--dupe_factor=1")
        assert result.returncode == 0, result.stderr[-3000:]
        assert "instances to 2 file(s)" in result.stderr
        outputs[package] = [open(f"{prefix}-0000{i}-of-00002", "rb").read() for i in range(2)]
    assert all(outputs["albert_cli"]) and outputs["albert_cli"] == outputs["data_prep"]


@pytest.mark.parametrize("package", PACKAGES)
def test_split_corpus(tmp_path, small_corpus, package):
    result = run(package, "split_corpus", f"--input_file={small_corpus}", f"--output_dir={tmp_path}",
                 "--heldout_fraction=0.1")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "held-out sentences in" in result.stdout
    assert (tmp_path / "train.txt").stat().st_size > (tmp_path / "heldout.txt").stat().st_size > 0


@pytest.mark.slow
@pytest.mark.parametrize("package", PACKAGES)
def test_train_sentencepiece(tmp_path, small_corpus, package):
    prefix = str(tmp_path / "tiny")
    result = run(package, "train_sentencepiece", f"--input={small_corpus}", f"--model_prefix={prefix}",
                 "--vocab_size=300", "--num_threads=1")
    assert result.returncode == 0, result.stderr[-3000:]
    with open(prefix + ".vocab", encoding="utf-8") as handle:
        assert len(handle.readlines()) == 300


@pytest.mark.slow
@pytest.mark.parametrize("package", PACKAGES)
def test_beam_pipeline(tmp_path, small_corpus, package):
    prefix = str(tmp_path / "train")
    result = run(package, "beam_pipeline", f"--input_file={small_corpus}", f"--output_file={prefix}",
                 "--num_output_shards=1", f"--spm_model_file={SPM_MODEL}", "--max_seq_length=64",
                 "--max_predictions_per_seq=10", "--dupe_factor=1")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "instances to 1 file(s)" in result.stderr
    assert os.path.getsize(f"{prefix}-00000-of-00001") > 0


@pytest.mark.parametrize("package", PACKAGES)
def test_bad_flag_is_one_line_under_both_names(tmp_path, package):
    result = run(package, "split_corpus", f"--input_file={tmp_path / 'missing.txt'}", f"--output_dir={tmp_path}")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"error: --input_file: {str(tmp_path / 'missing.txt')!r} matches no file"]
