"""run_squad.py end to end on the shipped SQuAD sample (tiny model): train, predict, score; bad input."""

import json
import os

import pytest

from albert_tf.squad import evaluation
import script_process
from squad_test_data import REPO, SQUAD_DEV, SQUAD_TRAIN, answerable_subset, serve_squad

SCRIPT = os.path.join(REPO, "run_squad.py")
TINY_RUN = ("--max_seq_length=96", "--doc_stride=48", "--max_query_length=24", "--train_batch_size=4",
            "--predict_batch_size=16", "--learning_rate=1e-3")


def run_squad(*args):
    return script_process.run_python([SCRIPT, *TINY_RUN, *args], cwd=REPO, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))


def read_json(*path):
    with open(os.path.join(*path), encoding="utf-8") as handle:
        return json.load(handle)


@pytest.mark.slow
def test_squad_v2_train_predict_and_score(tmp_path):
    output_dir = str(tmp_path / "out")
    result = run_squad("--version_2_with_negative", "--do_train", "--do_predict", f"--train_file={SQUAD_TRAIN}",
                       f"--predict_file={SQUAD_DEV}", f"--output_dir={output_dir}", "--num_train_epochs=0.5",
                       "--save_checkpoints_steps=2", f"--export_dir={tmp_path / 'export'}", "--export_version=3")
    assert result.returncode == 0, result.stderr[-3000:]
    # Keras' warnings that read as trouble: the unused pooler's missing gradients, retracing.
    assert "Gradients do not exist" not in result.stderr and "retracing" not in result.stderr, result.stderr
    assert [record["step"] for record in read_json(output_dir, "eval_history.json")] == [2, 4]
    best = read_json(output_dir, "best_metrics.json")
    metrics = read_json(output_dir, "eval_results.json")
    # The restored best checkpoint answers exactly as it did when it was evaluated in training.
    assert metrics == pytest.approx(best["metrics"])
    predictions = read_json(output_dir, "predictions.json")
    null_odds = read_json(output_dir, "null_odds.json")
    nbest = read_json(output_dir, "nbest_predictions.json")
    dataset = read_json(SQUAD_DEV)["data"]
    qids = {qa["id"] for paragraph in dataset[0]["paragraphs"] for qa in paragraph["qas"]}
    assert set(predictions) == set(null_odds) == set(nbest) == qids
    # The written files score what eval_results.json says under the official v2.0 definitions.
    rescored = evaluation.evaluate_v2(dataset, predictions, null_odds)
    assert {k: metrics[k] for k in rescored} == pytest.approx(rescored)
    threshold = metrics["null_score_diff_threshold"]
    for qid, text in predictions.items():
        assert text == ("" if null_odds[qid] >= threshold else nbest[qid][0]["text"])
        assert 1 <= len(nbest[qid]) <= 20
        assert sum(entry["probability"] for entry in nbest[qid]) == pytest.approx(1.0)
    assert "SQuAD 2.0" in result.stdout
    # The export answers raw text with the threshold found on the dev file.
    (version,) = os.listdir(tmp_path / "export")
    assert version == "3" and f"exported the serving SavedModel to {tmp_path / 'export' / '3'}" in result.stdout
    questions = [qa for paragraph in dataset[0]["paragraphs"] for qa in paragraph["qas"]][:4]
    contexts = [paragraph["context"] for paragraph in dataset[0]["paragraphs"] for _ in paragraph["qas"]][:4]
    served = serve_squad(str(tmp_path / "export" / version), [qa["question"] for qa in questions], contexts)
    assert not served["albert_tf_loaded"] and "cls_logits" in served["token_ids_outputs"]
    for context, text, start, end in zip(contexts, served["text"], served["start"], served["end"]):
        assert (context[start:end] if text else "") == text


@pytest.mark.slow
def test_squad_v1_train_predict_and_score(tmp_path):
    train_file = answerable_subset(SQUAD_TRAIN, tmp_path / "train-v1.1.json")
    dev_file = answerable_subset(SQUAD_DEV, tmp_path / "dev-v1.1.json")
    output_dir = str(tmp_path / "out")
    result = run_squad("--do_train", "--do_predict", f"--train_file={train_file}", f"--predict_file={dev_file}",
                       f"--output_dir={output_dir}", "--num_train_epochs=1", "--save_checkpoints_steps=2",
                       "--mixed_precision=mixed_bfloat16")
    assert result.returncode == 0, result.stderr[-3000:]
    predictions = read_json(output_dir, "predictions.json")
    assert len(predictions) == 12 and all(predictions.values())  # v1.1 always answers
    assert not os.path.exists(os.path.join(output_dir, "null_odds.json"))
    metrics = read_json(output_dir, "eval_results.json")
    assert metrics == pytest.approx(evaluation.evaluate_v1(read_json(dev_file)["data"], predictions))
    paragraphs = {p["context"] for p in read_json(dev_file)["data"][0]["paragraphs"]}
    assert all(any(text in context for context in paragraphs) for text in predictions.values())


@pytest.mark.parametrize("args, message", [
    (("--do_predict",), "--do_predict needs --predict_file (the questions to answer)"),
    (("--do_train", f"--predict_file={SQUAD_DEV}"), "--do_train needs --train_file"),
    (("--do_train", f"--train_file={SQUAD_DEV}"), "--do_train needs --predict_file (training evaluates on it"),
    (("--do_predict", "--version_2_with_negative", f"--predict_file={SQUAD_DEV}",
      "--init_checkpoint=/nonexistent/ckpt"), "--init_checkpoint"),
    (("--do_train", f"--train_file={SQUAD_DEV}", f"--predict_file={SQUAD_DEV}"), "--version_2_with_negative"),
    (("--do_train", f"--train_file={SQUAD_DEV}", "--predict_file=/nonexistent.json"),
     "--predict_file: /nonexistent.json: no such SQuAD file"),
    (("--do_predict", f"--predict_file={SQUAD_DEV}", "--max_query_length=100"), "leaves no room"),
    # The README recipes parse (every flag in them is known) and reach the data check.
    (("--flagfile=configs/squad_v1_readme.flags", "--train_file=/nonexistent.json", "--predict_file=/nonexistent.json"),
     "no such SQuAD file"),
    (("--flagfile=configs/squad_v2_readme.flags", "--train_file=/nonexistent.json", "--predict_file=/nonexistent.json"),
     "no such SQuAD file"),
    (("--export_dir=/tmp/never", "--version_2_with_negative", f"--predict_file={SQUAD_DEV}"), "holds no fine-tuned"),
    # Nothing to evaluate with: refused before --output_dir is made; an export alone needs no --predict_file.
    (("--do_predict", f"--predict_file={SQUAD_DEV}"), "holds no fine-tuned"),
    (("--export_tflite=/tmp/never", "--max_seq_length=384", "--max_query_length=64"), "holds no fine-tuned"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, message):
    result = run_squad(f"--output_dir={tmp_path / 'out'}", *args)
    assert result.returncode == 2, result.stderr[-2000:]
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and message in errors[0], result.stderr[-2000:]
    assert "Traceback" not in result.stderr
    assert not os.path.exists(tmp_path / "out" / "predictions.json")
    if message == "holds no fine-tuned":
        assert not os.path.exists(tmp_path / "out")


@pytest.mark.slow
def test_a_run_killed_after_a_checkpoint_and_rerun_ends_bit_identical_to_an_uninterrupted_one(tmp_path):
    from fine_tuning_resume_test_data import assert_resume_is_exact, run_script

    def run(output_dir, killed_after_save=None):  # 36 questions / 4 * 0.9 epochs: 8 steps
        return run_script("run_squad.py", [
            *TINY_RUN, "--version_2_with_negative", "--do_train", f"--train_file={SQUAD_TRAIN}",
            f"--predict_file={SQUAD_DEV}", f"--output_dir={output_dir}", "--num_train_epochs=0.9",
            "--save_checkpoints_steps=2", "--keep_checkpoint_max=10"], killed_after_save)

    assert_resume_is_exact(run, tmp_path, 4, (6, 8))
