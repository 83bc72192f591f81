"""bench/bench_long_documents.py at a tiny scale: its cases, the memory guard, out-of-memory records, the ratios."""

import json
import os
import subprocess
import sys

import pytest

from glue_test_data import REPO, load_bench_script

LONG_CONFIG = os.path.join(REPO, "configs", "albert_tiny_long.json")


@pytest.fixture(scope="module")
def bench():
    return load_bench_script("bench_long_documents")


def test_two_lengths_run_skip_past_the_memory_limit_and_report_the_ratio(tmp_path, bench):
    from albert_tf import AlbertConfig

    dense = AlbertConfig.from_json_file(LONG_CONFIG).replace(attention_type="dense", block_size=None,
                                                            num_random_blocks=None)
    short_gb = bench.dense_attention_gb(dense, "train", 2, 128)
    long_gb = bench.dense_attention_gb(dense, "train", 1, 256)
    assert long_gb == pytest.approx(2 * short_gb)  # the square law at the same tokens per step
    output = tmp_path / "bench.json"
    result = subprocess.run(
        [sys.executable, os.path.join(REPO, "bench", "bench_long_documents.py"), f"--config={LONG_CONFIG}",
         "--lengths=128,256", "--tokens_per_step=256", "--kernels=reference", "--modes=train",
         "--attention=dense,block_sparse", "--steps=1", "--warmup=0", f"--oom_limit_gb={(short_gb + long_gb) / 2}",
         f"--json={output}"],
        capture_output=True, text=True, cwd=str(tmp_path), env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"), timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.startswith("processor: ") and "load average: (" in result.stdout
    report = json.loads(output.read_text())
    by_case = {(r["attention"], r["seq"]): r for r in report["records"]}
    assert set(by_case) == {("dense", 128), ("dense", 256), ("block_sparse", 128), ("block_sparse", 256)}
    assert by_case["dense", 256]["status"] == f"not run: estimated {long_gb:.1f} GB"
    for key in (("dense", 128), ("block_sparse", 128), ("block_sparse", 256)):
        record = by_case[key]
        assert record["status"] == "ok" and record["batch"] * record["seq"] == 256
        assert record["peak_rss_mib"] > record["peak_above_runtime_mib"] > 0 and record["microseconds_per_token"] > 0
        # 128 tokens are past the tiny long config's (5 + 2) x 16 = 112: the block-sparse path runs.
        assert record["attention_path"] == key[0]
    (speed,) = [t for t in report["targets"]
                if t["ratio"] == "train: block-sparse 256 / dense 128, microseconds_per_token"]
    assert speed["value"] == pytest.approx(by_case["block_sparse", 256]["microseconds_per_token"]
                                           / by_case["dense", 128]["microseconds_per_token"])
    (cpu,) = [t for t in report["targets"]
              if t["ratio"] == "train: block-sparse 256 / dense 128, cpu_microseconds_per_token"]
    assert cpu["value"] == pytest.approx(by_case["block_sparse", 256]["cpu_microseconds_per_token"]
                                         / by_case["dense", 128]["cpu_microseconds_per_token"])
    assert "| train | dense | reference | 1 x 256 | not run: estimated" in result.stdout


def test_a_dense_config_is_refused_before_any_case_runs(tmp_path):
    result = subprocess.run(
        [sys.executable, os.path.join(REPO, "bench", "bench_long_documents.py"),
         f"--config={os.path.join(REPO, 'configs', 'albert_tiny.json')}", "--lengths=128", "--tokens_per_step=128"],
        capture_output=True, text=True, cwd=str(tmp_path), env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"), timeout=300)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "albert_tiny.json is not block-sparse" in result.stderr.strip().splitlines()[-1]
    assert "processor:" not in result.stdout


def test_a_case_whose_process_dies_is_recorded_as_out_of_memory(bench, monkeypatch):
    killed = subprocess.CompletedProcess([], returncode=-9, stdout="", stderr="")
    monkeypatch.setattr(bench.subprocess, "run", lambda *args, **kwargs: killed)
    case = {"mode": "train", "attention": "block_sparse", "kernels": "reference", "seq": 256, "batch": 1,
            "config": LONG_CONFIG, "steps": 1, "warmup": 0}
    assert bench.run_case(case, limit_gb=1000)["status"] == "out of memory"
    failed = subprocess.CompletedProcess([], returncode=1, stdout="", stderr="ValueError: something else")
    monkeypatch.setattr(bench.subprocess, "run", lambda *args, **kwargs: failed)
    with pytest.raises(RuntimeError, match="something else"):
        bench.run_case(case, limit_gb=1000)


def test_recompute_ratios_compare_the_longest_length(bench):
    def record(attention, seq, rss, time):
        return {"mode": "train", "attention": attention, "seq": seq, "kernels": "reference", "status": "ok",
                "peak_rss_mib": rss, "peak_above_runtime_mib": rss - 300, "microseconds_per_token": time}

    records = [record("block_sparse", 4096, 1000.0, 10.0), record("block_sparse_recompute", 4096, 400.0, 13.0),
               record("block_sparse", 512, 1.0, 1.0)]
    targets = {t["ratio"]: t for t in bench.target_ratios(records, [512, 4096], ["reference"])}
    memory = targets["train at 4096: recompute / not, peak_rss_mib"]
    assert (memory["value"], memory["at_most"]) == (pytest.approx(0.4), 0.5)
    assert targets["train at 4096: recompute / not, peak_above_runtime_mib"]["value"] == pytest.approx(100 / 700)
    assert targets["train at 4096: recompute / not, microseconds_per_token"]["value"] == pytest.approx(1.3)
    assert targets["infer: block-sparse 4096 / dense 512, peak_rss_mib"]["value"] is None
    assert "| infer: block-sparse 4096 / dense 512, peak_rss_mib (at most 1.5) | reference | not measured |  |" in (
        bench.table([], list(targets.values())))
