"""Fine-tuning on JAX and PyTorch: `run_classifier.py`, `run_squad.py` and `run_race.py` with
KERAS_BACKEND=jax or torch (each run a fresh interpreter on that backend), from a portable
pretraining checkpoint written with the library; a SIGTERM and a resume that end bit-identical to
an uninterrupted run; and the model fine-tuned there exported on TensorFlow, its raw-text
SavedModel giving the training backend's outputs."""

import glob
import json
import os

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the SentencePiece ops of the export)

from albert_tf.glue import features
from albert_tf.glue.tasks import get_task
from backend_process import completed_on_backend, script_code
from glue_test_data import REPO, TINY_CONFIG, head_of_shipped
from race_test_data import write_race
import pretraining_test_data
import script_process
from squad_test_data import SQUAD_DEV, SQUAD_TRAIN

BACKENDS = ("jax", "torch")
TIMEOUT = 900  # a JAX run compiles its steps first: a minute on a loaded 2-core machine
GLUE_RUN = ("--task_name=SST-2", "--max_seq_length=32", "--train_batch_size=4", "--eval_batch_size=8",
            f"--albert_config_file={TINY_CONFIG}", "--learning_rate=1e-3")
# The same raw text through the SavedModel on TensorFlow as through the model on the training backend.
SERVING_TOLERANCE = 1e-5

# A pretraining checkpoint as `run_pretraining.py` writes it off TensorFlow: the trainer's own
# checkpoint manager (model, LAMB's slots, batches drawn), at step 0 (a step's compilation saved).
PRETRAINING_CHECKPOINT = r"""
import keras
from albert_tf import AlbertConfig
from albert_tf.pretraining.keras_trainer import KerasPretrainingTrainer
from albert_tf.pretraining.trainer import TrainerSettings

keras.utils.set_random_seed(1)
trainer = KerasPretrainingTrainer(AlbertConfig.from_json_file(sys.argv[2]),
                                  TrainerSettings(train_batch_size=2, num_train_steps=10))
trainer.checkpoint_manager(sys.argv[1], 1).save(checkpoint_number=trainer.step)
"""

# The script, stopped by signal {signal} right after it saves training checkpoint {step}: before
# `best/` and the JSON records of that step are written, which the resumed run repairs.
STOPPED_AFTER_SAVE = r"""
import os, signal
from albert_tf.training.portable_checkpoints import PortableCheckpointManager
save = PortableCheckpointManager.save
def save_then_stop(self, checkpoint_number):
    path = save(self, checkpoint_number)
    if checkpoint_number == {step}:
        os.kill(os.getpid(), signal.{signal})
    return path
PortableCheckpointManager.save = save_then_stop
"""

# The best fine-tuned classifier's logits on the dev split, on the training backend.
BACKEND_LOGITS = r"""
import glob, json, os
import numpy as np
from albert_tf import AlbertClassifier, AlbertConfig
from albert_tf.checkpoints import load
from albert_tf.glue import features
from albert_tf.glue.tasks import get_task
from albert_tf.glue.training import logits_model, predict_logits

output_dir = sys.argv[1]
model = AlbertClassifier(AlbertConfig.from_json_file(os.path.join(output_dir, "albert_config.json")), num_labels=2)
load(model, os.path.join(output_dir, "best", "model"))
[path] = glob.glob(os.path.join(output_dir, "features", "SST-2_dev_32_*.tf_record"))
logits = predict_logits(logits_model(model), features.make_dataset(get_task("SST-2"), path, 8, 32))
print(json.dumps(np.asarray(logits, np.float64).tolist()))
"""


def run_script(backend, script, *args, stop_after_save=None):
    """`python script args` on `backend` (a subprocess); with `stop_after_save=(N, signal name)`, that
    signal after checkpoint N."""
    code = script_code(os.path.join(REPO, script), *args)
    if stop_after_save is not None:
        step, signal = stop_after_save
        code = STOPPED_AFTER_SAVE.format(step=step, signal=signal) + code
    return completed_on_backend(backend, code, tensorflow=True, timeout=TIMEOUT)


def read_json(*path):
    with open(os.path.join(*path), encoding="utf-8") as handle:
        return json.load(handle)


def portable_contents(path):
    """Every array and value of the portable checkpoint at `path`, as bytes and JSON, to compare."""
    from safetensors.numpy import load_file

    arrays = {f"{name}:{key}": value.tobytes() for name in ("weights", "training_state")
              for key, value in load_file(os.path.join(path, f"{name}.safetensors")).items()}
    return arrays, read_json(path, "state.json")


@pytest.fixture(scope="module", params=BACKENDS)
def glue_run(request, tmp_path_factory):
    """SST-2 fine-tuned on one backend from a pretraining checkpoint (made there with the library on
    JAX; by `run_pretraining.py` on JAX for PyTorch): (backend, dirs, result)."""
    backend, root = request.param, tmp_path_factory.mktemp(f"glue_{request.param}")
    pretrained = root / "pretraining"
    if backend == "torch":  # the chain: pretrained by the command on JAX, fine-tuned on PyTorch, exported on TensorFlow
        flags = pretraining_test_data.small_run_flags(str(root), str(pretrained), albert_config_file=TINY_CONFIG,
                                                      num_train_steps=2, save_checkpoints_steps=2)
        made = run_script("jax", "run_pretraining.py", *flags)
    else:
        made = completed_on_backend(backend, PRETRAINING_CHECKPOINT, str(pretrained), TINY_CONFIG, tensorflow=True,
                                    timeout=TIMEOUT)
    assert made.returncode == 0, made.stderr[-3000:]
    data_dir = head_of_shipped(str(root / "glue"), "SST-2", rows_per_split=16, splits=("train", "dev"))
    output_dir = root / "out"
    result = run_script(backend, "run_classifier.py", *GLUE_RUN, f"--data_dir={data_dir}", f"--output_dir={output_dir}",
                        f"--init_checkpoint={pretrained}", "--do_train", "--do_eval", "--train_step=4",
                        "--save_checkpoints_steps=2")
    return backend, {"pretrained": pretrained, "data": data_dir, "out": output_dir}, result


@pytest.mark.slow
def test_glue_fine_tunes_from_a_pretraining_checkpoint_and_writes_the_dev_metric(glue_run):
    backend, dirs, result = glue_run
    assert result.returncode == 0, result.stderr[-3000:]
    output_dir = dirs["out"]
    [loaded] = [line for line in result.stderr.splitlines() if "init_checkpoint:" in line]
    step = 2 if backend == "torch" else 0  # the JAX command's last step, or the library's step 0
    assert f"from {dirs['pretrained'] / f'ckpt-{step}'} (portable checkpoint" in loaded, loaded
    assert [record["step"] for record in read_json(output_dir, "eval_history.json")] == [2, 4]
    best = read_json(output_dir, "best_metrics.json")
    evaluated = read_json(output_dir, "eval_results.json")
    assert 0 <= evaluated["accuracy"] <= 1
    assert evaluated["accuracy"] == pytest.approx(best["metrics"]["accuracy"], abs=1e-6)  # best/ restored
    assert sorted(os.listdir(output_dir / "checkpoints")) == ["ckpt-2", "ckpt-4"]
    for path in (output_dir / "checkpoints" / "ckpt-4", output_dir / "best" / "model"):
        assert read_json(path, "state.json")["backend"] == backend
    assert glob.glob(str(output_dir / "logs" / "dev" / "events.out.tfevents.*"))
    assert read_json(output_dir, "run_settings.json")


@pytest.mark.slow
def test_a_model_fine_tuned_off_tensorflow_exports_on_tensorflow_with_its_outputs(glue_run):
    """The same command on TensorFlow with --do_train=false exports the raw-text SavedModel; it
    gives the logits the training backend's model gives on the same text. On PyTorch this is the
    chain of three backends: pretrained on JAX (`run_pretraining.py`), fine-tuned on PyTorch,
    exported and served from raw text on TensorFlow."""
    backend, dirs, result = glue_run
    assert result.returncode == 0, result.stderr[-3000:]
    export_dir = dirs["out"].parent / "export"
    exported = script_process.run_python(
        [os.path.join(REPO, "run_classifier.py"), *GLUE_RUN, f"--data_dir={dirs['data']}",
         f"--output_dir={dirs['out']}", "--do_train=false", f"--export_dir={export_dir}", "--export_version=1",
         f"--export_tflite={export_dir}_litert"],
        cwd=REPO, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", KERAS_BACKEND="tensorflow"))
    assert exported.returncode == 0, exported.stderr[-3000:]
    on_backend = completed_on_backend(backend, BACKEND_LOGITS, str(dirs["out"]), tensorflow=True, timeout=TIMEOUT)
    assert on_backend.returncode == 0, on_backend.stderr[-3000:]
    expected = np.array(json.loads(on_backend.stdout.strip().splitlines()[-1]))
    with open(os.path.join(dirs["data"], "SST-2", "dev.tsv"), encoding="utf-8") as handle:
        sentences = [line.split("\t")[0] for line in handle.read().splitlines()[1:]]
    served = tf.saved_model.load(str(export_dir / "1")).signatures["serving_default"]
    logits = served(sentence=tf.constant(sentences))["logits"].numpy()
    assert logits.shape == expected.shape == (16, 2)
    np.testing.assert_allclose(logits, expected, atol=SERVING_TOLERANCE, rtol=0)
    # The LiteRT file of the same command: the training backend's probabilities on the dev features.
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_path=f"{export_dir}_litert/classifier_float32.tflite")
    length = interpreter.get_input_details()[0]["shape"][1]  # the file's own sequence length: padded to it
    runner = interpreter.get_signature_runner()
    [path] = glob.glob(str(dirs["out"] / "features" / "SST-2_dev_32_*.tf_record"))
    rows = [{name: np.pad(value.numpy(), (0, length - 32))[None].astype(np.int32) for name, value in inputs.items()}
            for inputs, _ in features.make_dataset(get_task("SST-2"), path, 8, 32).unbatch()]  # (inputs, label)
    probabilities = np.concatenate([runner(**row)["probabilities"] for row in rows])
    expected_probabilities = np.exp(expected) / np.exp(expected).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(probabilities, expected_probabilities, atol=SERVING_TOLERANCE, rtol=0)


@pytest.mark.slow
@pytest.mark.parametrize("backend, signal, status", [("jax", "SIGTERM", 143), ("torch", "SIGTERM", 143),
                                                     ("torch", "SIGKILL", -9)])
def test_a_stopped_run_resumed_ends_bit_identical_to_an_uninterrupted_one(tmp_path, backend, signal, status):
    """Stopped right after checkpoint 4 (before its best/ and JSON records), the rerun repairs the
    records and continues with the batches, dropout masks and optimizer state the stopped run had:
    its later checkpoints and records equal the uninterrupted run's bit for bit."""
    data_dir = head_of_shipped(str(tmp_path / "glue"), "SST-2", rows_per_split=16, splits=("train", "dev"))

    def run(name, stop_after_save=None):
        return run_script(backend, "run_classifier.py", *GLUE_RUN, f"--data_dir={data_dir}",
                          f"--output_dir={tmp_path / name}", "--do_train", "--train_step=8", "--warmup_step=2",
                          "--save_checkpoints_steps=2", "--keep_checkpoint_max=10", "--deterministic",
                          stop_after_save=stop_after_save)

    uninterrupted = run("uninterrupted")
    assert uninterrupted.returncode == 0, uninterrupted.stderr[-3000:]
    stopped = run("stopped", stop_after_save=(4, signal))
    assert stopped.returncode == status, stopped.stderr[-3000:]
    if signal == "SIGTERM":
        assert stopped.stderr.strip().splitlines()[-1].startswith("stopped by SIGTERM"), stopped.stderr[-3000:]
    assert [record["step"] for record in read_json(tmp_path / "stopped", "eval_history.json")] == [2]
    resumed = run("stopped")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"resuming from ckpt-4 (step 4) in {tmp_path / 'stopped'}" in resumed.stderr
    for step in (6, 8):
        left, right = (portable_contents(tmp_path / name / "checkpoints" / f"ckpt-{step}")
                       for name in ("uninterrupted", "stopped"))
        different = [key for key in left[0] if left[0][key] != right[0].get(key)]
        assert left[0].keys() == right[0].keys() and not different, f"ckpt-{step}: {different[:3]}"
        assert left[1] == right[1]
    for name in ("eval_history.json", "best_metrics.json"):
        assert read_json(tmp_path / "uninterrupted", name) == read_json(tmp_path / "stopped", name)
    assert (portable_contents(tmp_path / "uninterrupted" / "best" / "model")
            == portable_contents(tmp_path / "stopped" / "best" / "model"))


@pytest.mark.slow
def test_squad_v2_trains_and_answers_on_torch(tmp_path):
    output_dir = tmp_path / "out"
    result = run_script("torch", "run_squad.py", "--max_seq_length=96", "--doc_stride=48", "--max_query_length=24",
                        "--train_batch_size=4", "--predict_batch_size=16", "--learning_rate=1e-3",
                        "--version_2_with_negative", "--do_train", "--do_predict", f"--train_file={SQUAD_TRAIN}",
                        f"--predict_file={SQUAD_DEV}", f"--output_dir={output_dir}", "--num_train_epochs=0.5",
                        "--save_checkpoints_steps=2")
    assert result.returncode == 0, result.stderr[-3000:]
    assert [record["step"] for record in read_json(output_dir, "eval_history.json")] == [2, 4]
    # The restored best portable checkpoint answers as it did when it was evaluated in training.
    assert read_json(output_dir, "eval_results.json") == pytest.approx(read_json(output_dir, "best_metrics.json")["metrics"])
    questions = {qa["id"] for article in read_json(SQUAD_DEV)["data"] for paragraph in article["paragraphs"]
                 for qa in paragraph["qas"]}
    assert set(read_json(output_dir, "predictions.json")) == set(read_json(output_dir, "null_odds.json")) == questions


@pytest.mark.slow
def test_race_trains_evaluates_and_predicts_on_jax(tmp_path):
    data_dir = write_race(tmp_path / "data")
    output_dir = tmp_path / "out"
    result = run_script("jax", "run_race.py", f"--data_dir={data_dir}", f"--output_dir={output_dir}", "--do_train",
                        "--do_eval", "--do_predict", "--max_seq_length=48", "--max_qa_length=16", "--train_step=4",
                        "--warmup_step=1", "--save_checkpoints_steps=2", "--train_batch_size=2", "--learning_rate=1e-3")
    assert result.returncode == 0, result.stderr[-3000:]
    assert [record["step"] for record in read_json(output_dir, "eval_history.json")] == [2, 4]
    assert read_json(output_dir, "eval_results.json") == pytest.approx(read_json(output_dir, "best_metrics.json")["metrics"])
    predictions = read_json(output_dir, "test_predictions.json")
    assert len(predictions) == 5 and set(predictions.values()) <= set("ABCD")


def test_a_tensorflow_best_model_is_named_off_tensorflow_not_called_damaged(tmp_path):
    (tmp_path / "best").mkdir()
    (tmp_path / "best" / "model.index").write_bytes(b"")
    result = completed_on_backend("torch", r"""
from albert_tf.error_text import SettingError
from albert_tf.training import run_checkpoints
try:
    run_checkpoints.holding(sys.argv[1])
except SettingError as error:
    print(error.worded(lambda name: "--" + name))
""", str(tmp_path / "best" / "model"), tensorflow=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "is a TensorFlow checkpoint, which the torch backend does not restore: run the same command with " \
           "KERAS_BACKEND=tensorflow" in result.stdout, result.stdout
