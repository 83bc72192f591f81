"""run_classifier.py (albert_cli/classify.py) end to end on the shipped GLUE TSVs: train, evaluate, predict, export; and bad input."""

import collections
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the SentencePiece ops of the export)

from albert_tf.glue.tasks import get_task
from glue_test_data import (
    MNLI_LABELS,
    REPO,
    SPM_MODEL,
    TINY_CONFIG,
    build_tfds_glue,
    head_of_shipped,
    write_glue_file,
    write_mnli,
)
import script_process

SCRIPT = os.path.join(REPO, "run_classifier.py")
EXPORT_ENCODER_SCRIPT = os.path.join(REPO, "export_encoder.py")
# Small enough for a few seconds of CPU per run.
TINY_RUN = ("--max_seq_length=32", "--train_batch_size=4", "--eval_batch_size=8")


def run_classifier(*args):
    return script_process.run_python([SCRIPT, *args], cwd=REPO, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))


def run_export_encoder(*args):
    return script_process.run_python([EXPORT_ENCODER_SCRIPT, *args], cwd=REPO,
                                     env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))


def read_json(*path):
    with open(os.path.join(*path)) as handle:
        return json.load(handle)


def read_tsv(*path):
    with open(os.path.join(*path), encoding="utf-8") as handle:
        return [line.split("\t") for line in handle.read().splitlines()]


def log_lines(stderr, marker):
    """The log messages of stderr that contain `marker`, each from `marker` on (the scripts print
    absl's INFO lines plain, without absl's prefix)."""
    return [line[line.index(marker):] for line in stderr.splitlines() if marker in line]


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
        f"--export_dir={export_dir}", "--export_version=1", "--do_train", "--do_eval", "--do_predict", "--train_step=4",
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
    label_names = os.path.join(output_dir, "label_names.json")  # what albert-convert makes HF's id2label
    if task_name == "STS-B":
        assert not os.path.exists(label_names)
    else:
        with open(label_names) as handle:
            assert json.load(handle) == list(get_task(task_name).label_names)

    with open(os.path.join(output_dir, "submission", f"{task_name}.tsv")) as handle:
        rows = [line.split("\t") for line in handle.read().splitlines()]
    assert rows[0] == ["index", "prediction"] and len(rows) == 49
    test_rows = [line.split("\t") for line in open(os.path.join(data_dir, task_dir, "test.tsv")).read().splitlines()]
    assert [row[0] for row in rows[1:]] == [row[0] for row in test_rows[1:]]

    assert os.listdir(export_dir) == ["1"]  # the path the docs' commands name
    assert f"exported the serving SavedModel to {os.path.join(export_dir, '1')}" in result.stdout.splitlines()
    served = tf.saved_model.load(os.path.join(export_dir, "1")).signatures["serving_default"]
    columns = {"SST-2": (1,), "MRPC": (3, 4), "STS-B": (7, 8)}[task_name]
    texts = {name: tf.constant([row[c] for row in test_rows[1:]]) for name, c in zip(text_inputs, columns)}
    outputs = served(**texts)
    if task_name == "STS-B":
        np.testing.assert_allclose(np.clip(outputs["score"].numpy(), 0, 5), [float(r[1]) for r in rows[1:]], atol=2e-3)
    else:
        # The submission has GLUE's labels, the SavedModel the task's names for them (SST-2's 0: negative).
        names = dict(zip(get_task(task_name).labels, get_task(task_name).label_names))
        assert [label.decode() for label in outputs["label"].numpy()] == [names[r[1]] for r in rows[1:]]


@pytest.mark.slow
def test_bad_input_is_one_line_with_exit_code_2(tmp_path):
    result = run_classifier("--task_name=squad", "--do_train")
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1].startswith("error: --task_name: unknown GLUE task 'squad'; known")
    write_glue_file(str(tmp_path), "CoLA", "train.tsv", ["src\t1\t\tfine.", "src\t0\t\tbad."])
    write_glue_file(str(tmp_path), "CoLA", "dev.tsv", ["src\t1\t\tfine.", "src\tmaybe\t\tbad label."])
    result = run_classifier("--task_name=cola", "--do_train", "--do_eval", f"--data_dir={tmp_path}",
                            f"--output_dir={tmp_path / 'out'}")  # both splits are read before training
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1] == (
        f"error: {tmp_path}/CoLA/dev.tsv:2: expected a label in ['0', '1'], got 'maybe'")
    result = run_classifier("--task_name=cola", "--do_eval", f"--data_dir={tmp_path}", f"--output_dir={tmp_path / 'new'}")
    assert result.returncode == 2 and result.stderr.strip().splitlines()[-1] == (
        f"error: --output_dir {tmp_path / 'new'} holds no fine-tuned model (run with --do_train) and no "
        "--init_checkpoint was given")
    assert not os.path.exists(tmp_path / "new")  # refused before it is made


@pytest.mark.slow
def test_seeds_write_mean_std_and_best_over_the_runs(tmp_path):
    # STS-B: a regression head's Pearson differs from seed to seed, so the statistics are not trivial.
    data_dir = head_of_shipped(str(tmp_path / "glue"), "STS-B", rows_per_split=12, splits=("train", "dev"))
    output_dir = str(tmp_path / "out")
    result = run_classifier(
        "--task_name=STS-B", f"--data_dir={data_dir}", f"--output_dir={output_dir}", "--do_train", "--do_eval",
        "--seeds=2", "--seed=7", "--train_step=2", "--save_checkpoints_steps=2", "--learning_rate=1e-3", *TINY_RUN,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    summary = read_json(output_dir, "seeds_summary.json")
    assert summary["num_seeds"] == 2 and summary["selection_metric"] == "pearson"
    assert [(run["seed"], run["output_dir"]) for run in summary["runs"]] == [
        (7, os.path.join(output_dir, "seed_7")), (8, os.path.join(output_dir, "seed_8"))]
    # Each seed trained on its own: its own checkpoints, evaluation history and best metrics.
    per_seed = []
    for run in summary["runs"]:
        assert [record["step"] for record in read_json(run["output_dir"], "eval_history.json")] == [2]
        assert os.path.exists(os.path.join(run["output_dir"], "best", "model.index"))
        best = read_json(run["output_dir"], "best_metrics.json")
        assert best == {"step": run["step"], "metrics": run["metrics"]}
        per_seed.append(best["metrics"])
    assert per_seed[0]["pearson"] != per_seed[1]["pearson"]
    for name in ("pearson", "spearman", "mse"):
        values = np.array([metrics[name] for metrics in per_seed])
        best = values.min() if name == "mse" else values.max()
        assert summary[name] == pytest.approx({"mean": values.mean(), "std": values.std(), "best": best}, abs=1e-9)
    # --do_eval reports the best seed's best checkpoint.
    winner = max(per_seed, key=lambda metrics: metrics["pearson"])
    evaluated = read_json(output_dir, "eval_results.json")
    assert {name: evaluated[name] for name in winner} == pytest.approx(winner, abs=1e-6)
    # So does a later --do_eval on the directory, without --do_train.
    os.remove(os.path.join(output_dir, "eval_results.json"))
    again = run_classifier("--task_name=STS-B", f"--data_dir={data_dir}", f"--output_dir={output_dir}", "--do_eval",
                           *TINY_RUN)
    assert again.returncode == 0, again.stderr[-3000:]
    evaluated = read_json(output_dir, "eval_results.json")
    assert {name: evaluated[name] for name in winner} == pytest.approx(winner, abs=1e-6)



def test_seed_0_with_deterministic_trains(tmp_path):
    # --deterministic sets the global seed to --seed; 0 once made building the training order fail.
    data_dir = head_of_shipped(str(tmp_path / "glue"), "MRPC", rows_per_split=8, splits=("train", "dev"))
    result = run_classifier("--task_name=MRPC", f"--data_dir={data_dir}", f"--output_dir={tmp_path / 'out'}",
                            "--do_train", "--deterministic", "--seed=0", "--train_step=2",
                            "--save_checkpoints_steps=2", *TINY_RUN)
    assert result.returncode == 0, result.stderr[-3000:]
    assert [record["step"] for record in read_json(tmp_path / "out", "eval_history.json")] == [2]

# google-research/albert run_glue.sh: run_task <task> <warmup> <lr> <steps> <save every> <batch>, all
# with --max_seq_length=512 --optimizer=adamw.
RUN_GLUE_SH = {
    "SST-2": (1256, 1e-5, 20935, 100, 32), "MNLI": (1000, 3e-5, 10000, 100, 128),
    "CoLA": (320, 1e-5, 5336, 100, 16), "QNLI": (1986, 1e-5, 33112, 200, 32),
    "QQP": (1000, 5e-5, 14000, 100, 128), "RTE": (200, 3e-5, 800, 100, 32),
    "STS-B": (214, 2e-5, 3598, 100, 16), "MRPC": (200, 2e-5, 800, 100, 32),
}
RECIPE_FLAGS = ("warmup_step", "learning_rate", "train_step", "save_checkpoints_steps", "train_batch_size",
                "max_seq_length", "optimizer")
RESOLVE_FLAGS_SCRIPT = """
import json, sys
from absl import flags
from albert_cli import classify as run_classifier
from albert_tf.glue.tasks import get_task
resolved = []
for argv in json.loads(sys.argv[1]):
    flags.FLAGS.unparse_flags()
    flags.FLAGS(["run_classifier", *argv])
    run_classifier.apply_recipe(get_task(flags.FLAGS.task_name))
    resolved.append({name: flags.FLAGS[name].value for name in json.loads(sys.argv[2])})
print(json.dumps(resolved))
"""


def test_paper_recipe_resolves_each_tasks_hyperparameters_and_explicit_flags_win():
    cases = [["--recipe=paper", f"--task_name={task}", "--do_train"] for task in RUN_GLUE_SH]
    cases.append(["--recipe=paper", "--task_name=mrpc", "--do_train", "--learning_rate=1e-3", "--train_step=3",
                  "--max_seq_length=64", "--optimizer=lamb"])
    cases.append(["--task_name=MRPC", "--do_train"])  # no recipe: the flags' defaults
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run([sys.executable, "-c", RESOLVE_FLAGS_SCRIPT, json.dumps(cases), json.dumps(RECIPE_FLAGS)],
                            capture_output=True, text=True, env=env, cwd=REPO)
    assert result.returncode == 0, result.stderr[-3000:]
    resolved = json.loads(result.stdout.strip().splitlines()[-1])
    for task, values in zip(RUN_GLUE_SH, resolved):
        warmup, learning_rate, steps, save_every, batch_size = RUN_GLUE_SH[task]
        assert values == {"warmup_step": warmup, "learning_rate": learning_rate, "train_step": steps,
                          "save_checkpoints_steps": save_every, "train_batch_size": batch_size,
                          "max_seq_length": 512, "optimizer": "adamw"}, task
    assert resolved[-2] == {"warmup_step": 200, "learning_rate": 1e-3, "train_step": 3, "save_checkpoints_steps": 100,
                            "train_batch_size": 32, "max_seq_length": 64, "optimizer": "lamb"}
    assert resolved[-1] == {"warmup_step": 0, "learning_rate": 5e-5, "train_step": 1000,
                            "save_checkpoints_steps": 1000, "train_batch_size": 32, "max_seq_length": 512,
                            "optimizer": "adamw"}


@pytest.mark.slow
def test_paper_recipe_run_uses_the_recipe_where_no_flag_overrides_it(tmp_path):
    data_dir = head_of_shipped(str(tmp_path / "glue"), "MRPC", rows_per_split=8, splits=("train", "dev"))
    output_dir = str(tmp_path / "out")
    # Size flags are given (the recipe's 800 steps of 32 x 512 are no test); the rest comes from the recipe.
    result = run_classifier("--task_name=MRPC", "--recipe=paper", f"--data_dir={data_dir}",
                            f"--output_dir={output_dir}", "--do_train", "--train_step=2", "--save_checkpoints_steps=1",
                            "--train_batch_size=4", "--max_seq_length=32")
    assert result.returncode == 0, result.stderr[-3000:]
    assert log_lines(result.stderr, "recipe paper for MRPC") == [
        "recipe paper for MRPC: learning_rate=2e-05, train_step=2 (flag), warmup_step=200, "
        "save_checkpoints_steps=1 (flag), train_batch_size=4 (flag), max_seq_length=32 (flag), optimizer=adamw"]
    assert [record["step"] for record in read_json(output_dir, "eval_history.json")] == [1, 2]
    assert sorted(name.split("_32_")[0] for name in os.listdir(os.path.join(output_dir, "features"))
                  if name.endswith(".tf_record")) == ["MRPC_dev", "MRPC_train"]


@pytest.mark.slow
def test_tfds_data_dir_trains_evaluates_and_predicts_without_tsv_files(tmp_path):
    sentences = ["a gripping , funny film", "dull and far too long", "the best thing this year",
                 "i walked out", "warm , wise and moving", "a waste of a good cast", "pure joy", "tedious"]
    train = [{"idx": i, "sentence": sentences[i % 8], "label": int(i % 8 in (0, 2, 4, 6) or i < 4)} for i in range(16)]
    validation = [{"idx": i, "sentence": sentences[i], "label": int(i < 4)} for i in range(6)]
    test = [{"idx": 500 + i, "sentence": sentences[7 - i], "label": -1} for i in range(5)]
    tfds_dir = build_tfds_glue(str(tmp_path / "tfds"), "sst2", {"train": train, "validation": validation, "test": test})
    output_dir = str(tmp_path / "out")
    result = run_classifier(
        "--task_name=SST-2", f"--tfds_data_dir={tfds_dir}", f"--data_dir={tmp_path / 'no_tsv_here'}",
        f"--output_dir={output_dir}", "--do_train", "--do_eval", "--do_predict", "--train_step=2",
        "--save_checkpoints_steps=2", "--learning_rate=1e-3", *TINY_RUN,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    features = [read_json(output_dir, "features", name) for name in os.listdir(os.path.join(output_dir, "features"))
                if name.endswith(".json")]
    sources = {meta["source"]: meta["num_examples"] for meta in features}
    assert sources == {f"{tfds_dir}/glue/sst2:train": 16, f"{tfds_dir}/glue/sst2:validation": 6,
                       f"{tfds_dir}/glue/sst2:test": 5}
    assert [record["step"] for record in read_json(output_dir, "eval_history.json")] == [2]
    evaluated = read_json(output_dir, "eval_results.json")
    assert evaluated["accuracy"] == pytest.approx(read_json(output_dir, "best_metrics.json")["metrics"]["accuracy"])
    # TFDS labels reached the metrics: train's majority is "1" (10 of 16), which is right on 4 of 6 dev rows.
    assert evaluated["majority_baseline_accuracy"] == pytest.approx(4 / 6)
    rows = read_tsv(output_dir, "submission", "SST-2.tsv")
    assert rows[0] == ["index", "prediction"]
    assert [row[0] for row in rows[1:]] == [str(500 + i) for i in range(5)]
    assert {row[1] for row in rows[1:]} <= {"0", "1"}


@pytest.mark.slow
def test_mnli_predict_writes_matched_mismatched_and_ax_when_present(tmp_path):
    data_dir = str(tmp_path / "glue")
    written = write_mnli(data_dir, {"train.tsv": 8, "dev_matched.tsv": 6, "dev_mismatched.tsv": 5,
                                    "test_matched.tsv": 7, "test_mismatched.tsv": 4})
    output_dir = str(tmp_path / "out")
    submission = os.path.join(output_dir, "submission")
    result = run_classifier("--task_name=MNLI", f"--data_dir={data_dir}", f"--output_dir={output_dir}", "--do_train",
                            "--do_eval", "--do_predict", "--train_step=2", "--save_checkpoints_steps=2",
                            "--learning_rate=1e-3", *TINY_RUN)
    assert result.returncode == 0, result.stderr[-3000:]
    features = [read_json(output_dir, "features", name) for name in os.listdir(os.path.join(output_dir, "features"))
                if name.endswith(".json")]
    assert {os.path.basename(meta["source"]): meta["num_examples"] for meta in features} == {
        name: len(rows) for name, rows in written.items()}
    evaluated = read_json(output_dir, "eval_results.json")
    assert set(evaluated) == {
        "accuracy", "mismatched_accuracy", "majority_baseline_accuracy", "majority_baseline_mismatched_accuracy"}
    # Train's majority class is "contradiction" (3 of 8, first of the tie): 2 of 6 matched and 2 of 5
    # mismatched dev rows, so each dev file is scored under its own name.
    assert evaluated["majority_baseline_accuracy"] == pytest.approx(2 / 6)
    assert evaluated["majority_baseline_mismatched_accuracy"] == pytest.approx(2 / 5)
    expected = {"MNLI-m.tsv": "test_matched.tsv", "MNLI-mm.tsv": "test_mismatched.tsv"}
    predictions = {}
    for name, source in expected.items():
        rows = read_tsv(submission, name)
        assert rows[0] == ["index", "prediction"]
        assert [row[0] for row in rows[1:]] == [index for index, _ in written[source]]
        assert {row[1] for row in rows[1:]} <= set(MNLI_LABELS)
        predictions[name] = rows
    # No diagnostic set under --data_dir: AX is skipped with a warning, not an error.
    assert sorted(os.listdir(submission)) == ["MNLI-m.tsv", "MNLI-mm.tsv"]
    assert log_lines(result.stderr, "AX diagnostic set not written")

    # Once diagnostic/diagnostic.tsv exists, predicting again with the fine-tuned model writes AX.tsv too.
    written.update(write_mnli(data_dir, {}, diagnostic_rows=3))
    result = run_classifier("--task_name=MNLI", f"--data_dir={data_dir}", f"--output_dir={output_dir}",
                            "--do_predict", *TINY_RUN)
    assert result.returncode == 0, result.stderr[-3000:]
    assert sorted(os.listdir(submission)) == ["AX.tsv", "MNLI-m.tsv", "MNLI-mm.tsv"]
    rows = read_tsv(submission, "AX.tsv")
    assert rows[0] == ["index", "prediction"]
    assert [row[0] for row in rows[1:]] == [index for index, _ in written["diagnostic.tsv"]] == ["0", "1", "2"]
    assert {row[1] for row in rows[1:]} <= set(MNLI_LABELS)
    # Predicting again from the saved best checkpoint gives the same predictions.
    for name, rows in predictions.items():
        assert read_tsv(submission, name) == rows


def classifier_after_first_step(output_dir, num_labels, config_file=TINY_CONFIG):
    """The fine-tuned classifier of `output_dir`'s best checkpoint (taken after step 1)."""
    from albert_tf import AlbertClassifier, AlbertConfig

    classifier = AlbertClassifier(AlbertConfig.from_json_file(config_file), num_labels)
    tf.train.Checkpoint(model=classifier).read(os.path.join(output_dir, "best", "model")).expect_partial()
    return classifier


# One step with warmup: the learning rate of step 0 is 0, so the checkpoint after it holds the initial weights.
FIRST_STEP_UNCHANGED = ("--do_train", "--train_step=1", "--save_checkpoints_steps=1", "--warmup_step=10")


@pytest.mark.slow
def test_init_checkpoint_from_an_original_tf1_checkpoint(tmp_path):
    import keras

    from albert_tf import AlbertConfig, AlbertPretrainingModel
    from albert_tf.checkpoints import backbone_variables
    from albert_tf.checkpoints import save_tf1_checkpoint

    keras.utils.set_random_seed(3)
    pretrained = AlbertPretrainingModel(AlbertConfig.from_json_file(TINY_CONFIG))
    prefix = save_tf1_checkpoint(pretrained, str(tmp_path / "albert_tiny" / "model.ckpt-best"))
    data_dir = head_of_shipped(str(tmp_path / "glue"), "SST-2", rows_per_split=8, splits=("train", "dev"))
    output_dir = str(tmp_path / "out")
    result = run_classifier("--task_name=SST-2", f"--data_dir={data_dir}", f"--output_dir={output_dir}",
                            f"--init_checkpoint={tmp_path / 'albert_tiny'}", *FIRST_STEP_UNCHANGED, *TINY_RUN)
    assert result.returncode == 0, result.stderr[-3000:]
    encoder_names = sorted(backbone_variables(pretrained.albert))
    # Every encoder variable loaded; only the new head is missing; only the pretraining heads unused.
    assert log_lines(result.stderr, "init_checkpoint:") == [
        f"init_checkpoint: Loaded {len(encoder_names)} of {len(encoder_names) + 2} variables from {prefix} "
        "(TF1 checkpoint)."]
    assert "\nNew (not loaded): classification_head.\nNot used by this model: masked_lm_head, sentence_order_head.\n" in result.stderr
    assert "Missing from" not in result.stderr and "Unused checkpoint" not in result.stderr

    reader = tf.train.load_checkpoint(prefix)
    fine_tuned = backbone_variables(classifier_after_first_step(output_dir, 2).albert)
    assert sorted(fine_tuned) == encoder_names
    for name in encoder_names:
        np.testing.assert_array_equal(fine_tuned[name].numpy(), reader.get_tensor(name), err_msg=name)


PretrainingOutput = collections.namedtuple("PretrainingOutput", ["output_dir", "config_file"])


@pytest.fixture(scope="module")
def pretraining_output(tmp_path_factory):
    """run_pretraining.py output of the tiny config (positions cut to 64, which makes export_encoder's
    preprocessing model, traced for every supported length, quicker), two steps on random records."""
    from pretraining_test_data import run_script, small_run_flags

    directory = tmp_path_factory.mktemp("pretraining")
    config_file = str(directory / "albert_tiny_64_positions.json")
    with open(config_file, "w") as handle:
        json.dump(dict(read_json(TINY_CONFIG), max_position_embeddings=64), handle)
    output_dir = str(directory / "out")
    result = run_script(small_run_flags(str(directory), output_dir, albert_config_file=config_file, num_train_steps=2,
                                        iterations_per_loop=1, save_checkpoints_steps=2, num_warmup_steps=0))
    assert result.returncode == 0, result.stderr[-3000:]
    assert tf.train.latest_checkpoint(output_dir).endswith("ckpt-2")
    return PretrainingOutput(output_dir, config_file)


def pretraining_encoder_weights(prefix, config_file):
    """{TF1 name: value} of the encoder run_pretraining.py stored at `prefix`, read back through
    the pretraining model's own restore."""
    from albert_tf import AlbertConfig, AlbertPretrainingModel
    from albert_tf.checkpoints import tf1_variables

    model = AlbertPretrainingModel(AlbertConfig.from_json_file(config_file))
    tf.train.Checkpoint(model=model).read(prefix).expect_partial().assert_existing_objects_matched()
    return {name: variable.numpy() for name, variable in tf1_variables(model.albert).items()}


@pytest.mark.slow
@pytest.mark.parametrize("reinit_pooler", [False, True])
def test_init_checkpoint_from_run_pretraining_output(tmp_path, pretraining_output, reinit_pooler):
    """Every encoder weight is the checkpoint's; with --reinit_pooler all but the pooler's, whose
    kernel is drawn afresh (std ~ initializer_range 0.02) and bias zeroed."""
    data_dir = head_of_shipped(str(tmp_path / "glue"), "MRPC", rows_per_split=8, splits=("train", "dev"))
    output_dir = str(tmp_path / "out")
    result = run_classifier("--task_name=MRPC", f"--data_dir={data_dir}", f"--output_dir={output_dir}",
                            f"--init_checkpoint={pretraining_output.output_dir}", f"--reinit_pooler={reinit_pooler}",
                            f"--albert_config_file={pretraining_output.config_file}", *FIRST_STEP_UNCHANGED, *TINY_RUN)
    assert result.returncode == 0, result.stderr[-3000:]
    albert = classifier_after_first_step(output_dir, 2, pretraining_output.config_file).albert
    prefix = tf.train.latest_checkpoint(pretraining_output.output_dir)
    assert log_lines(result.stderr, "init_checkpoint:") == [
        f"init_checkpoint: Loaded {len(albert.variables)} of {len(albert.variables) + 2} variables from {prefix} "
        "(TF2 checkpoint)."]
    from albert_tf.checkpoints import tf1_variables

    stored = pretraining_encoder_weights(prefix, pretraining_output.config_file)
    assert len(stored) == len(albert.variables) > 20
    for name, variable in tf1_variables(albert).items():
        if reinit_pooler and name.startswith("bert/pooler/"):
            assert not np.array_equal(variable.numpy(), stored[name]), name
            continue
        np.testing.assert_array_equal(variable.numpy(), stored[name], err_msg=name)
    if reinit_pooler:
        np.testing.assert_array_equal(albert.pooler.bias.numpy(), 0.0)
        assert 0.015 < float(np.std(albert.pooler.kernel.numpy())) < 0.02  # truncated normal(0.02)


@pytest.mark.slow
def test_export_encoder_script_writes_servable_encoder_and_preprocessing(tmp_path, pretraining_output):
    from albert_tf import AlbertConfig, AlbertModel, checkpoints

    export_dir = str(tmp_path / "hub")
    result = run_export_encoder(f"--init_checkpoint={pretraining_output.output_dir}", f"--export_dir={export_dir}",
                                f"--albert_config_file={pretraining_output.config_file}", "--seq_length=32",
                                "--export_kernels=cpu_serving")
    assert result.returncode == 0, result.stderr[-3000:]
    assert sorted(os.listdir(export_dir)) == ["encoder", "preprocessing"]
    (version,) = os.listdir(os.path.join(export_dir, "encoder"))
    assert version.isdigit() and os.listdir(os.path.join(export_dir, "preprocessing")) == [version]
    assert result.stdout.splitlines()[-1] == (f"exported {os.path.join(export_dir, 'encoder', version)} and "
                                              f"{os.path.join(export_dir, 'preprocessing', version)}")

    preprocessing = tf.saved_model.load(os.path.join(export_dir, "preprocessing", version))
    encoder = tf.saved_model.load(os.path.join(export_dir, "encoder", version))
    assert encoder.export_kernels.numpy() == b"cpu_serving"
    texts = tf.constant(["The quick brown fox.", "hello"])
    inputs = preprocessing.signatures["serving_default"](texts)
    assert {name: (value.dtype, value.shape.as_list()) for name, value in inputs.items()} == {
        name: (tf.int32, [2, 32]) for name in ("input_word_ids", "input_mask", "input_type_ids")}
    outputs = encoder.signatures["serving_default"](**inputs)
    config = AlbertConfig.from_json_file(pretraining_output.config_file)
    expected_shapes = {"sequence_output": [2, 32, config.hidden_size], "pooled_output": [2, config.hidden_size],
                       "default": [2, config.hidden_size]}
    assert {name: value.shape.as_list() for name, value in outputs.items()} == expected_shapes
    expected_shapes.update({f"encoder_outputs_{i}": [2, 32, config.hidden_size]
                            for i in range(config.num_hidden_layers)})
    every_layer = encoder.signatures["serve_encoder_outputs"](**inputs)
    assert {name: value.shape.as_list() for name, value in every_layer.items()} == expected_shapes
    # The exported encoder is the pretrained one, not a fresh initialisation.
    reference = AlbertModel(config)
    checkpoints.load(reference, pretraining_output.output_dir)
    expected = reference(dict(inputs), training=False)
    for name in ("sequence_output", "pooled_output"):
        np.testing.assert_allclose(outputs[name].numpy(), expected[name].numpy(), atol=1e-5, err_msg=name)


@pytest.mark.slow
def test_bad_checkpoint_config_or_vocabulary_is_one_line_with_exit_code_2(tmp_path):
    tf.train.Checkpoint(step=tf.Variable(1)).write(str(tmp_path / "other" / "ckpt-1"))
    write_glue_file(str(tmp_path / "glue"), "SST-2", "dev.tsv", ["sentence\tlabel", "fine .\t1"])
    common = ("--task_name=SST-2", "--do_eval", f"--data_dir={tmp_path / 'glue'}", f"--output_dir={tmp_path / 'out'}")
    cases = [
        (run_classifier(*common, f"--init_checkpoint={tmp_path / 'other' / 'ckpt-1'}"),
         f"error: --init_checkpoint: cannot initialise from {tmp_path / 'other' / 'ckpt-1'}: "
         f"{tmp_path / 'other' / 'ckpt-1'} is an object-based checkpoint without a `model` object"),
        (run_classifier(*common, f"--albert_config_file={SPM_MODEL}"), "error: --albert_config_file: "),
        (run_export_encoder(f"--export_dir={tmp_path / 'hub'}", "--init_checkpoint=unused",
                            f"--spm_model_file={TINY_CONFIG}"),
         f"error: spm_model_file {TINY_CONFIG!r} is not a loadable SentencePiece model"),
    ]
    small_vocabulary = str(tmp_path / "albert_config.json")
    with open(small_vocabulary, "w") as handle:
        json.dump(dict(read_json(TINY_CONFIG), vocab_size=64), handle)
    cases.append((run_export_encoder(f"--export_dir={tmp_path / 'hub'}", "--init_checkpoint=unused",
                                     f"--albert_config_file={small_vocabulary}"),
                  "error: --albert_config_file: vocab_size 64 does not match --spm_model_file's 30000 pieces"))
    for result, expected in cases:
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-3000:]
        last = result.stderr.strip().splitlines()[-1]
        assert last.startswith(expected) and len(last) < 500, last
    assert not os.path.exists(tmp_path / "hub")


@pytest.mark.slow
def test_a_rerun_says_it_is_finished_and_a_resume_where_it_resumes(tmp_path):
    data_dir = head_of_shipped(str(tmp_path / "glue"), "MRPC", rows_per_split=8, splits=("train", "dev"))
    output_dir = tmp_path / "out"

    def run(train_step):
        result = run_classifier("--task_name=MRPC", f"--data_dir={data_dir}", f"--output_dir={output_dir}", "--do_train",
                                f"--train_step={train_step}", "--save_checkpoints_steps=2", *TINY_RUN)
        assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-3000:]
        return result.stderr

    assert f"no checkpoint in {output_dir}: fine-tuning from step 0 to step 2" in run(2)
    history = (output_dir / "eval_history.json").read_text()
    finished = run(2)
    assert f"finished run: ckpt-2 (step 2) in {output_dir} is the last step (--train_step=2); nothing to train" in finished
    assert (output_dir / "eval_history.json").read_text() == history  # nothing evaluated or recorded again
    resumed = run(4)
    assert f"resuming from ckpt-2 (step 2) in {output_dir}: fine-tuning to step 4" in resumed
    # One line says it: no second one from the library ("resumed from ...ckpt-2" after "nothing to train").
    assert "resumed from" not in finished + resumed and finished.count("ckpt-2") == 1, finished + resumed
    assert [record["step"] for record in read_json(output_dir, "eval_history.json")] == [2, 4]


@pytest.mark.slow
def test_recompute_fine_tunes_and_refuses_dropout(tmp_path):
    """--recompute fine-tunes (the encoder recomputes its blocks in the backward pass); with
    dropout in the encoder's config it stops with a one-line error naming the flag."""
    data_dir = head_of_shipped(str(tmp_path / "glue"), "SST-2", rows_per_split=16)
    common = ("--task_name=SST-2", f"--data_dir={data_dir}", "--do_train", "--train_step=2", "--recompute",
              "--save_checkpoints_steps=2", "--train_batch_size=8", "--max_seq_length=32")
    result = run_classifier(*common, f"--output_dir={tmp_path / 'out'}")
    assert result.returncode == 0, result.stderr[-3000:]
    with_dropout = str(tmp_path / "albert_config.json")
    with open(with_dropout, "w") as handle:
        json.dump(dict(read_json(TINY_CONFIG), attention_probs_dropout_prob=0.1), handle)
    result = run_classifier(*common, f"--output_dir={tmp_path / 'dropout'}", f"--albert_config_file={with_dropout}")
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-3000:]
    assert result.stderr.strip().splitlines()[-1].startswith("error: --recompute needs hidden_dropout_prob")


@pytest.mark.slow
def test_init_checkpoint_with_fewer_positions_is_extended_only_when_asked(tmp_path):
    """A 512-position checkpoint into a 1,024-position config: --extend_positions=repeat fills the
    new rows with the learned ones and the load report says so; without it, a one-line error."""
    import keras

    from albert_tf import AlbertConfig, AlbertModel
    from albert_tf.checkpoints import save_tf1_checkpoint

    keras.utils.set_random_seed(3)
    prefix = save_tf1_checkpoint(AlbertModel(AlbertConfig.from_json_file(TINY_CONFIG)),
                                 str(tmp_path / "albert_tiny" / "model.ckpt-1"))
    longer = str(tmp_path / "albert_config.json")
    with open(longer, "w") as handle:
        json.dump(dict(read_json(TINY_CONFIG), max_position_embeddings=1024), handle)
    data_dir = head_of_shipped(str(tmp_path / "glue"), "SST-2", rows_per_split=8, splits=("train", "dev"))
    common = ("--task_name=SST-2", f"--data_dir={data_dir}", f"--init_checkpoint={tmp_path / 'albert_tiny'}",
              f"--albert_config_file={longer}", "--do_eval", *TINY_RUN)
    result = run_classifier(*common, f"--output_dir={tmp_path / 'refused'}")
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr[-3000:]
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("error: --init_checkpoint: ") and 'pass extend_positions="repeat"' in last, last
    result = run_classifier(*common, "--extend_positions=repeat", f"--output_dir={tmp_path / 'out'}")
    assert result.returncode == 0, result.stderr[-3000:]
    [loaded] = log_lines(result.stderr, "init_checkpoint:")
    assert f"from {prefix} (TF1 checkpoint; position embeddings extended 512 -> 1024 (repeat))." in loaded


def test_a_run_killed_after_a_checkpoint_and_rerun_ends_bit_identical_to_an_uninterrupted_one(tmp_path):
    """The rerun continues with the batches and dropout masks the killed run would have drawn next
    (the shuffled data skips the batches already used; the checkpoint holds the dropout seeds)."""
    from fine_tuning_resume_test_data import assert_resume_is_exact, run_script

    data_dir = head_of_shipped(str(tmp_path / "glue"), "MRPC", rows_per_split=16, splits=("train", "dev"))

    def run(output_dir, killed_after_save=None):
        return run_script("run_classifier.py", [
            "--task_name=MRPC", f"--data_dir={data_dir}", f"--output_dir={output_dir}", "--do_train",
            "--train_step=30", "--warmup_step=3", "--save_checkpoints_steps=5", "--keep_checkpoint_max=10",
            "--learning_rate=1e-3", *TINY_RUN], killed_after_save)

    resumed = assert_resume_is_exact(run, tmp_path, 15, (20, 30))
    assert "resuming from ckpt-15 (step 15)" in resumed.stderr
