"""bench/bench_backends.py's bookkeeping: a backend where our model fails is measured for keras-hub
alone, the table names our kernel set and its ratio is keras-hub's time over ours (the runs themselves:
test_accelerator_step)."""

from glue_test_data import load_bench_script

bench_backends = load_bench_script("bench_backends")


def rows(system, train_seconds, infer_seconds):
    return [{"system": system, "kind": kind, "batch": batch, "seq": 16, "seconds_per_step": seconds,
             "tflops_per_second": 1e-3 / seconds}
            for kind, batch, seconds in (("train", 2, train_seconds), ("infer", 4, infer_seconds))]


def test_a_failing_backend_is_measured_for_keras_hub_alone_and_its_error_shown(monkeypatch):
    calls = []

    def run_backend(backend, args, directory, systems):
        calls.append((backend, systems))
        if backend == "torch" and "ours" in systems:
            return {"backend": backend, "device": backend, "rows": [], "error": "AttributeError: no"}
        both = rows("ours", 0.5, 0.1) + rows("keras_hub", 1.0, 0.1) if "ours" in systems else []
        return {"backend": backend, "device": f"{backend}: cpu", "kernels": "reference",
                "rows": both or rows("keras_hub", 2.0, 0.4)}

    monkeypatch.setattr(bench_backends, "run_backend", run_backend)
    reports = [bench_backends.measure(backend, None, "unused") for backend in ("jax", "torch")]
    assert calls == [("jax", "ours,keras_hub"), ("torch", "ours,keras_hub"), ("torch", "keras_hub")]
    table = bench_backends.table(reports).splitlines()
    assert table[2] == "| jax: cpu | train 2 x 16 | reference | 500.0 | 1000.0 | 2.00 | 1.00 | 2.00 |"
    assert table[3] == "| jax: cpu | infer 4 x 16 | reference | 100.0 | 100.0 | 10.00 | 10.00 | 1.00 |"
    assert table[4] == "| torch: cpu | train 2 x 16 | - | - | 2000.0 | - | 0.50 | - |"
    assert table[-1] == "torch: failed: AttributeError: no"


def test_ours_runs_with_what_the_commands_pick_unless_one_set_is_named():
    assert bench_backends.parse_args([]).kernels == "auto"
    assert bench_backends.parse_args(["--kernels", "reference"]).kernels == "reference"
