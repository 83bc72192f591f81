"""bench/accelerator_step.py keeps working: a tiny config on CPU, ours and keras-hub on each Keras
backend; on JAX and PyTorch with TensorFlow unimportable (the script needs none)."""

import json

import pytest

from backend_process import run_script_on_backend

TINY = {"vocab_size": 500, "embedding_size": 16, "hidden_size": 32, "intermediate_size": 64,
        "num_attention_heads": 2, "num_hidden_layers": 2, "num_hidden_groups": 1, "inner_group_num": 1,
        "max_position_embeddings": 64, "type_vocab_size": 2, "hidden_act": "gelu", "initializer_range": 0.02,
        "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1}
TRAIN_BATCH, INFER_BATCH, SEQ, MASKED = 2, 3, 16, 3
# What --kernels=auto picks on each backend's CPU, as the commands do.
AUTO_KERNELS = {"tensorflow": "cpu", "jax": "reference", "torch": "eager"}


@pytest.mark.parametrize("backend", ["tensorflow", "jax", "torch"])
def test_runs_on_the_backend_and_reports_every_case(tmp_path, backend):
    config = tmp_path / "albert_config.json"
    config.write_text(json.dumps(TINY))
    results = tmp_path / "results.json"
    stdout = run_script_on_backend(
        backend, "bench/accelerator_step.py", "--config", str(config), "--train_batch", str(TRAIN_BATCH),
        "--infer_batch", str(INFER_BATCH), "--seq", str(SEQ), "--masked", str(MASKED), "--steps", "1",
        "--kernels", "auto", "--json", str(results), tensorflow=backend == "tensorflow")
    report = json.loads(results.read_text())
    assert report["backend"] == backend and report["device"].startswith(backend)
    assert report["kernels"] == AUTO_KERNELS[backend]
    assert stdout.startswith(f"device: {backend}")
    expected = {(system, kind) for system in ("ours", "keras_hub") for kind in ("train", "infer")}
    assert {(row["system"], row["kind"]) for row in report["rows"]} == expected
    for row in report["rows"]:
        assert row["batch"] == (TRAIN_BATCH if row["kind"] == "train" else INFER_BATCH) and row["seq"] == SEQ
        assert row["seconds_per_step"] > 0 and row["tflops_per_second"] > 0
        assert f"{row['system']:10s} {row['kind']:5s} batch" in stdout
