"""bench/bench_serving.py: each case timed in a fresh process of its own (the default), or all in
this one (`--in_process`), both reporting per-case times and the logits' distance to the in-process model."""

import os

import pytest

from glue_test_data import TINY_CONFIG, load_bench_script

TINY_ONE_CASE = ["--config", TINY_CONFIG, "--shapes", "1x8", "--rounds", "2", "--warmup", "1",
                 "--batch1_calls", "2", "--no_onnx", "--no_tflite", "--no_text", "--export_kernels", "reference"]


@pytest.fixture(scope="module")
def bench_serving():
    return load_bench_script("bench_serving")


def test_each_case_and_round_runs_in_a_fresh_process(bench_serving, capsys):
    results = bench_serving.main(TINY_ONE_CASE + ["--cases", "export_reference"])
    case = results["1x8"]["export_reference"]
    assert list(results["1x8"]) == ["export_reference"]
    assert len(set(case["pids"])) == 2 and os.getpid() not in case["pids"]  # one process per round
    assert case["wall_ms"] > 0 and case["cpu_ms"] > 0
    assert case["max_difference"] < 1e-5
    printed = capsys.readouterr().out
    assert "cpu: " in printed and "a fresh process per case and round" in printed
    assert "load before: (" in printed and "load after: (" in printed


def test_in_process_mode_times_every_case_in_this_process(bench_serving):
    results = bench_serving.main(TINY_ONE_CASE + ["--in_process"])
    assert set(results["1x8"]) == {"in_process", "export_reference"}
    for case in results["1x8"].values():
        assert case["pids"] == [os.getpid()] and case["wall_ms"] > 0
        assert case["max_difference"] < 1e-5


def test_an_unknown_case_is_refused_before_anything_is_built(bench_serving, capsys):
    with pytest.raises(SystemExit) as exit_info:
        bench_serving.main(TINY_ONE_CASE + ["--cases", "export_reference,ort_fp32"])
    assert exit_info.value.code == 2
    assert "--cases: no case named ort_fp32; with these flags the cases are in_process, export_reference" in (
        capsys.readouterr().err)
