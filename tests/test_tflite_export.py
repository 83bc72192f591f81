"""LiteRT (TFLite) classifier exports: loaded by LiteRT's interpreter (`ai_edge_litert`, no TensorFlow)
in a fresh process, equal to the in-process model (float32 to float rounding; dynamic int8 within a stated
tolerance). What MediaPipe makes of the `--export_tflite` files on raw text: tests/test_mediapipe_export.py."""

import json
import os
import subprocess
import sys
import textwrap
import zipfile

import numpy as np
import pytest
import tensorflow as tf
from ai_edge_litert.interpreter import Interpreter

from albert_tf import AlbertClassifier
from albert_tf.serving.litert.publish import export_tflite
from albert_tf.serving.serving_tflite import tflite_classifier
from glue_test_data import REPO, SPM_MODEL, head_of_shipped
from model_test_data import batch_for, tiny
import script_process
from test_bad_inputs import assert_one_line_error, run_script

# The interpreter's float32 kernels (XNNPACK) sum in another order than TensorFlow's.
FLOAT_TOLERANCE = 1e-5
# Dynamic-range int8: weights and activations rounded to 8 bits per matmul; the logits move by
# at most this fraction of their own range.
INT8_RELATIVE_TOLERANCE = 0.1

INTERPRETER_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from ai_edge_litert.interpreter import Interpreter
    rows = [{k: np.array([v], np.int32) for k, v in row.items()} for row in json.loads(open(sys.argv[1]).read())]
    result = {}
    for path in sys.argv[3:]:
        runner = Interpreter(model_path=path).get_signature_runner("serving_default")
        result[path] = [runner(**row)["probabilities"][0].tolist() for row in rows]
    assert "albert_tf" not in sys.modules and "tensorflow" not in sys.modules
    open(sys.argv[2], "w").write(json.dumps(result))
    """
)


def small_classifier(num_labels=3, vocab_size=200):
    tf.keras.utils.set_random_seed(1)
    return AlbertClassifier(tiny(num_hidden_layers=2, vocab_size=vocab_size), num_labels=num_labels)


def ids_inputs(config):
    inputs = batch_for(config, batch=3, seq=11, seed=4)
    return {k: inputs[k] for k in ("input_word_ids", "input_mask", "input_type_ids")}


@pytest.mark.slow
def test_the_exports_load_in_a_fresh_process_and_match_the_model(tmp_path):
    """The --export_tflite files without MediaPipe: token ids int32 [1, 16] (padded) in, the
    model's softmax out."""
    classifier = small_classifier(vocab_size=30000)  # the SentencePiece model's: the export refuses another
    inputs = ids_inputs(classifier.albert.config)
    padded = {k: np.pad(v, [(0, 0), (0, 5)]) for k, v in inputs.items()}
    expected = tf.nn.softmax(classifier(inputs, training=False)["logits"]).numpy()
    paths = export_tflite(classifier, str(tmp_path / "tflite"), SPM_MODEL, ["a", "b", "c"], seq_length=16)
    assert [os.path.basename(path) for path in paths] == ["classifier_float32.tflite", "classifier_dynamic_int8.tflite"]
    model_bytes = [min(info.header_offset for info in zipfile.ZipFile(path).infolist()) for path in paths]
    assert model_bytes[1] < 0.4 * model_bytes[0]  # int8 weights (the SentencePiece model follows both)

    rows = [{k: v[i].tolist() for k, v in padded.items()} for i in range(len(expected))]
    (tmp_path / "inputs.json").write_text(json.dumps(rows))
    out = tmp_path / "out.json"
    subprocess.run([sys.executable, "-c", INTERPRETER_SCRIPT, str(tmp_path / "inputs.json"), str(out), *paths],
                   check=True, cwd=str(tmp_path))
    result = {path: np.array(probabilities) for path, probabilities in json.loads(out.read_text()).items()}
    np.testing.assert_allclose(result[paths[0]], expected, rtol=0, atol=FLOAT_TOLERANCE)
    int8_error = np.abs(result[paths[1]] - expected).max()
    assert 0 < int8_error <= INT8_RELATIVE_TOLERANCE * np.ptp(expected)


SERVING_TFLITE_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import numpy as np
    from ai_edge_litert.interpreter import Interpreter
    requests = json.loads(open(sys.argv[1]).read())
    runner = Interpreter(model_path=sys.argv[3]).get_signature_runner("serving_default")
    result = [runner(**{k: np.array(v, np.int32).reshape(shape) for k, (v, shape) in request.items()})["logits"].tolist()
              for request in requests]  # one interpreter, requests of other shapes one after another
    assert "albert_tf" not in sys.modules and "tensorflow" not in sys.modules
    open(sys.argv[2], "w").write(json.dumps(result))
    """
)


@pytest.mark.slow
def test_an_export_with_serving_tflite_holds_the_int8_model_that_a_fresh_process_serves(tmp_path):
    """`export_classifier(tflite_quantization=...)`: the SavedModel version directory also holds
    `model.tflite` (TF Serving's --prefer_tflite_model file); one interpreter answers ragged requests
    and an empty one in a fresh process that imports only LiteRT's interpreter."""
    from albert_tf.glue.tasks import get_task
    from albert_tf.serving.classifier_export import export_classifier
    from glue_test_data import SPM_MODEL

    classifier = small_classifier()
    path = export_classifier(classifier, get_task("mnli"), SPM_MODEL, str(tmp_path / "export"), max_seq_length=32,
                             version=3, tflite_quantization="dynamic_int8")
    assert sorted(os.listdir(path)) == ["assets", "fingerprint.pb", "model.tflite", "saved_model.pb", "variables"]
    config = classifier.albert.config
    batches = [ids_inputs(config), {k: v[:1, :5] for k, v in ids_inputs(config).items()},
               {k: v[:0, :7] for k, v in ids_inputs(config).items()}]
    requests = [{k: (v.ravel().tolist(), list(v.shape)) for k, v in batch.items()} for batch in batches]
    (tmp_path / "requests.json").write_text(json.dumps(requests))
    out = tmp_path / "out.json"
    subprocess.run([sys.executable, "-c", SERVING_TFLITE_SCRIPT, str(tmp_path / "requests.json"), str(out),
                    os.path.join(path, "model.tflite")], check=True, cwd=str(tmp_path),
                   env=dict(os.environ, PYTHONPATH=""))
    result = json.loads(out.read_text())
    for batch, logits in zip(batches[:2], result):
        expected = classifier(batch, training=False)["logits"].numpy()
        int8_error = np.abs(np.array(logits) - expected).max()
        assert 0 < int8_error <= INT8_RELATIVE_TOLERANCE * np.ptp(expected)
    assert np.array(result[2]).reshape(-1, 3).shape == (0, 3)


def test_a_block_sparse_classifier_exports_and_its_litert_model_answers_as_the_saved_model(tmp_path):
    """The random blocks are constants of the converted graph (LiteRT has no random ops): the LiteRT
    model gives the SavedModel's logits at lengths that run sparse, padded ones included, and dense."""
    from albert_tf.config import min_sparse_length
    from albert_tf.glue.tasks import get_task
    from albert_tf.serving.classifier_export import export_classifier
    from albert_tf.serving.export_module import TOKEN_IDS_SIGNATURE
    from glue_test_data import SPM_MODEL

    tf.keras.utils.set_random_seed(1)
    config = tiny(attention_type="block_sparse", block_size=8, num_random_blocks=1, max_position_embeddings=128,
                  num_hidden_layers=2, vocab_size=200)
    classifier = AlbertClassifier(config, num_labels=3)
    path = export_classifier(classifier, get_task("mnli"), SPM_MODEL, str(tmp_path / "export"), max_seq_length=128,
                             version=1, tflite_quantization="float32")
    served = tf.saved_model.load(path).signatures[TOKEN_IDS_SIGNATURE]
    runner = Interpreter(model_path=os.path.join(path, "model.tflite")).get_signature_runner()
    for length in (12, min_sparse_length(8, 1) + 1, 100, 128):
        inputs = {k: v[:2] for k, v in batch_for(config, batch=2, seq=length, seed=length).items()
                  if k != "masked_lm_positions"}
        expected = served(**{k: tf.constant(v) for k, v in inputs.items()})["logits"].numpy()
        np.testing.assert_allclose(runner(**inputs)["logits"], expected, rtol=0, atol=FLOAT_TOLERANCE)


def test_a_mixed_precision_classifier_converts_in_float32():
    classifier = small_classifier(num_labels=2)
    mixed = AlbertClassifier(classifier.albert.config, num_labels=2, dtype="mixed_bfloat16")
    mixed.set_weights(classifier.get_weights())
    inputs = ids_inputs(classifier.albert.config)
    runner = Interpreter(model_content=tflite_classifier(mixed, "float32")).get_signature_runner()
    np.testing.assert_allclose(runner(**inputs)["logits"], classifier(inputs, training=False)["logits"],
                               rtol=0, atol=FLOAT_TOLERANCE)


def test_an_unknown_quantization_is_named():
    with pytest.raises(ValueError, match="quantization must be one of .*float16"):
        tflite_classifier(small_classifier(), "float16")


@pytest.mark.slow
def test_run_classifier_writes_both_models_of_the_fine_tuned_classifier(tmp_path):
    data_dir = head_of_shipped(str(tmp_path / "glue"), "SST-2", rows_per_split=16)
    result = script_process.run_python(  # no time limit: training + two conversions, minutes on a busy machine
        [os.path.join(REPO, "run_classifier.py"), "--task_name=SST-2", f"--data_dir={data_dir}",
         f"--output_dir={tmp_path / 'out'}", f"--export_tflite={tmp_path / 'tflite'}", "--do_train",
         "--train_step=2", "--save_checkpoints_steps=2", "--train_batch_size=8", "--max_seq_length=32",
         f"--export_dir={tmp_path / 'export'}", "--export_version=1", "--export_serving_tflite=float32"],
        cwd=REPO, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    assert result.returncode == 0, result.stderr[-3000:]
    assert sorted(os.listdir(tmp_path / "tflite")) == ["classifier_dynamic_int8.tflite", "classifier_float32.tflite"]
    with open(tmp_path / "out" / "best_metrics.json") as handle:
        accuracy = json.load(handle)["metrics"]["accuracy"]
    # Which weights were converted, said before the files are named.
    assert (f"using the best fine-tuned model {tmp_path / 'out' / 'best' / 'model'} (step 2, dev accuracy={accuracy:.4f})"
            in result.stderr.splitlines()), result.stderr[-3000:]
    # Two forms: TF Serving's takes token ids of any shape and returns logits; the device's
    # (MediaPipe's) takes [1, --tflite_seq_length] and returns probabilities.
    serving = Interpreter(model_path=str(tmp_path / "export" / "1" / "model.tflite"))
    device = Interpreter(model_path=str(tmp_path / "tflite" / "classifier_float32.tflite"))
    assert [detail["shape_signature"].tolist() for detail in serving.get_input_details()] == [[-1, -1]] * 3
    assert [detail["shape_signature"].tolist() for detail in device.get_input_details()] == [[1, 128]] * 3
    assert list(serving.get_signature_runner().get_output_details()) == ["logits"]
    assert list(device.get_signature_runner().get_output_details()) == ["probabilities"]


def test_run_classifier_refuses_a_file_as_export_tflite(tmp_path):
    (tmp_path / "a_file").write_text("x")
    code, stderr = run_script(os.path.join(REPO, "run_classifier.py"), "--do_eval",
                              f"--output_dir={tmp_path / 'out'}", f"--export_tflite={tmp_path / 'a_file'}",
                              cwd=tmp_path)
    assert_one_line_error(code, stderr, "--export_tflite", "is a file")
    assert sorted(os.listdir(tmp_path)) == ["a_file"]


def test_run_classifier_refuses_serving_tflite_without_export_dir(tmp_path):
    code, stderr = run_script(os.path.join(REPO, "run_classifier.py"), "--do_eval",
                              f"--output_dir={tmp_path / 'out'}", "--export_serving_tflite=dynamic_int8", cwd=tmp_path)
    assert_one_line_error(code, stderr, "--export_serving_tflite", "give --export_dir too")
    assert os.listdir(tmp_path) == []
