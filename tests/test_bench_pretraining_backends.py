"""bench/bench_pretraining_backends.py keeps working: every backend's trainer runs a tiny config side by
side in one run, and the table's ratio is steps/s over TensorFlow's."""

import json

from glue_test_data import load_bench_script

bench = load_bench_script("bench_pretraining_backends")

TINY = {"vocab_size": 500, "embedding_size": 16, "hidden_size": 32, "intermediate_size": 64,
        "num_attention_heads": 2, "num_hidden_layers": 2, "num_hidden_groups": 1, "inner_group_num": 1,
        "max_position_embeddings": 64, "type_vocab_size": 2, "hidden_act": "gelu", "initializer_range": 0.02,
        "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1}


def test_every_backend_trains_the_tiny_config_and_is_reported(tmp_path, capsys):
    config = tmp_path / "albert_config.json"
    config.write_text(json.dumps(TINY))
    results = tmp_path / "results.json"
    bench.main(["--config", str(config), "--batch", "4", "--seq", "16", "--masked", "3", "--steps_per_loop", "2",
                "--rounds", "2", "--json", str(results)])
    reports = json.loads(results.read_text())
    assert [report["backend"] for report in reports] == ["tensorflow", "jax", "torch"]
    for report in reports:
        assert "error" not in report, report
        assert report["device"].startswith(report["backend"])
        assert report["kernels"] == {"tensorflow": "cpu", "jax": "reference", "torch": "eager"}[report["backend"]]  # auto
        assert len(report["wall_seconds"]) == len(report["cpu_seconds"]) == 2
        assert report["steps_per_second"] == 2 / bench.median(report["wall_seconds"]) > 0  # 2 steps a loop
        assert report["first_loop_seconds"] > 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[-3].startswith("| tensorflow ") and rows[-3].endswith(" | 1.00 |")
    assert rows[-2].startswith("| jax ") and rows[-1].startswith("| torch ")


def report(backend, steps_per_second, error=None):
    if error:
        return {"backend": backend, "error": error}
    return {"backend": backend, "device": f"{backend}: cpu", "kernels": "reference", "first_loop_seconds": 3.0,
            "steps_per_second": steps_per_second, "cpu_seconds_per_step": 0.5}


def test_the_table_gives_examples_per_second_the_ratio_to_tensorflow_and_failures_below():
    lines = bench.table([report("tensorflow", 2.0), report("jax", 3.0), report("torch", 0, "ValueError: no")],
                        batch=8).splitlines()
    assert lines[2] == "| tensorflow: cpu | reference | 3.0 | 2.00 | 16.0 | 0.50 | 1.00 |"
    assert lines[3] == "| jax: cpu | reference | 3.0 | 3.00 | 24.0 | 0.50 | 1.50 |"
    assert lines[-1] == "torch: failed: ValueError: no"
    assert bench.table([report("jax", 3.0)], batch=8).splitlines()[2].endswith("| - |")  # no TensorFlow: no ratio
