"""run_classifier.py end to end on the shipped GLUE TSVs: train, evaluate, predict, export; and bad input."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the SentencePiece ops of the export)

from glue_test_data import REPO, head_of_shipped, write_glue_file

SCRIPT = os.path.join(REPO, "run_classifier.py")


def run_classifier(*args):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, env=env, cwd=REPO)


@pytest.mark.slow
@pytest.mark.parametrize(
    "task_name, task_dir, text_inputs",
    [("SST-2", "SST-2", ("sentence",)), ("MRPC", "MRPC", ("sentence1", "sentence2")),
     ("STS-B", "STS-B", ("sentence1", "sentence2"))],
)
def test_fine_tune_evaluate_predict_export(tmp_path, task_name, task_dir, text_inputs):
    data_dir = head_of_shipped(str(tmp_path / "glue"), task_dir, rows_per_split=48)
    output_dir, export_dir = str(tmp_path / "out"), str(tmp_path / "export")
    result = run_classifier(
        f"--task_name={task_name}", f"--data_dir={data_dir}", f"--output_dir={output_dir}",
        f"--export_dir={export_dir}", "--do_train", "--do_eval", "--do_predict", "--train_step=4",
        "--save_checkpoints_steps=2", "--train_batch_size=8", "--max_seq_length=64", "--learning_rate=1e-3",
    )
    assert result.returncode == 0, result.stderr[-3000:]
    with open(os.path.join(output_dir, "eval_history.json")) as handle:
        assert [record["step"] for record in json.load(handle)] == [2, 4]
    with open(os.path.join(output_dir, "best_metrics.json")) as handle:
        best = json.load(handle)
    with open(os.path.join(output_dir, "eval_results.json")) as handle:
        evaluated = json.load(handle)
    # The restored best checkpoint scores exactly what it scored during training.
    assert {k: v for k, v in evaluated.items() if k in best["metrics"]} == pytest.approx(best["metrics"], abs=1e-6)
    assert set(evaluated) == set(best["metrics"]) | {f"majority_baseline_{k}" for k in best["metrics"]}

    with open(os.path.join(output_dir, "submission", f"{task_name}.tsv")) as handle:
        rows = [line.split("\t") for line in handle.read().splitlines()]
    assert rows[0] == ["index", "prediction"] and len(rows) == 49
    test_rows = [line.split("\t") for line in open(os.path.join(data_dir, task_dir, "test.tsv")).read().splitlines()]
    assert [row[0] for row in rows[1:]] == [row[0] for row in test_rows[1:]]

    (version,) = os.listdir(export_dir)
    served = tf.saved_model.load(os.path.join(export_dir, version)).signatures["serving_default"]
    columns = {"SST-2": (1,), "MRPC": (3, 4), "STS-B": (7, 8)}[task_name]
    texts = {name: tf.constant([row[c] for row in test_rows[1:]]) for name, c in zip(text_inputs, columns)}
    outputs = served(**texts)
    if task_name == "STS-B":
        np.testing.assert_allclose(np.clip(outputs["score"].numpy(), 0, 5), [float(r[1]) for r in rows[1:]], atol=2e-3)
    else:
        assert [label.decode() for label in outputs["label"].numpy()] == [r[1] for r in rows[1:]]


@pytest.mark.slow
def test_bad_input_is_one_line_with_exit_code_2(tmp_path):
    result = run_classifier("--task_name=squad", "--do_train")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1].startswith("error: --task_name: unknown GLUE task 'squad'; known")
    write_glue_file(str(tmp_path), "CoLA", "dev.tsv", ["src\t1\t\tfine.", "src\tmaybe\t\tbad label."])
    result = run_classifier("--task_name=cola", "--do_eval", f"--data_dir={tmp_path}",
                            f"--output_dir={tmp_path / 'out'}")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        f"error: {tmp_path}/CoLA/dev.tsv:2: expected a label in ['0', '1'], got 'maybe'")
