"""bench/profile_torch_step.py keeps working: a tiny config, ours and keras-hub profiled op by op
on PyTorch with TensorFlow unimportable; on another backend a one-line error."""

import json

from backend_process import completed_on_backend, run_script_on_backend, script_code
from test_accelerator_step import INFER_BATCH, MASKED, SEQ, TINY, TRAIN_BATCH

SCRIPT = "bench/profile_torch_step.py"


def test_profiles_every_case_with_its_ops_matmul_calls_and_layer_calls(tmp_path):
    config = tmp_path / "albert_config.json"
    config.write_text(json.dumps(TINY))
    stdout = run_script_on_backend(
        "torch", SCRIPT, "--config", str(config), "--train_batch", str(TRAIN_BATCH), "--infer_batch",
        str(INFER_BATCH), "--seq", str(SEQ), "--masked", str(MASKED), "--steps", "1", "--threads", "1", "--top", "5")
    assert stdout.startswith("device: torch") and "; 1 thread(s);" in stdout.splitlines()[0]
    for system in ("ours", "keras_hub"):
        for kind in ("train", "infer"):
            header = next(line for line in stdout.splitlines() if line.startswith(f"{system} {kind}: "))
            assert "ms/step wall" in header and "ms CPU" in header
            matmuls, layers = header.split("; ")[-1].split(", ")
            assert matmuls.endswith(" matmul calls") and int(matmuls.split()[0]) > 0, header
            assert layers.endswith(" Keras layer calls") and int(layers.split()[0]) > 0, header
    assert stdout.count("Self CPU time total") == 4  # one op table per case


def test_refuses_another_backend_in_one_line():
    result = completed_on_backend("jax", script_code(SCRIPT, "--steps", "1"))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1].endswith(
        "error: needs KERAS_BACKEND=torch (it profiles PyTorch's ops); Keras runs on 'jax'")
