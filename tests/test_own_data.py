"""Fine-tuning on one's own files (run_classifier.py --train_file): CSV, TSV and JSON Lines written here,
three named labels and a pair regression, evaluated, served from a fresh process, run by MediaPipe (in
Python and on web/'s page) and converted to Hugging Face, each with the label names;
docs/fine_tuning.md's Python lines as printed.
Bad files: tests/test_bad_task_inputs.py (_BAD_OWN_DATA)."""

import csv
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

from albert_tf.glue import own_data
import browser_page
from browser_page import FLOAT_TOLERANCE, bench_browser
from glue_test_data import REPO
import script_process

SCRIPT = os.path.join(REPO, "run_classifier.py")
TINY_RUN = ("--max_seq_length=32", "--train_batch_size=4", "--eval_batch_size=8", "--train_step=4",
            "--save_checkpoints_steps=2", "--learning_rate=1e-3")
browser = browser_page.browser
MOODS = {"happy": ["great fun", "loved every minute", "what a wonderful day"],
         "sad": ["a terrible loss", "it hurts so much", "cried all night"],
         "angry": ["furious about it", "so annoyed", "I hate this, really"]}
# Served in a fresh process, as TF Serving or an app would load the export.
SERVE = r"""
import json, sys
import tensorflow as tf, tensorflow_text
serve = tf.saved_model.load(sys.argv[1]).signatures["serving_default"]
outputs = serve(**{name: tf.constant(texts) for name, texts in json.loads(sys.argv[2]).items()})
print(json.dumps({name: value.numpy().tolist() for name, value in outputs.items()}, default=bytes.decode))
"""


def run_classifier(*args, cwd=REPO):
    return script_process.run_python([SCRIPT, *args], cwd=cwd, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))


def served(saved_model, texts):
    result = subprocess.run([sys.executable, "-c", SERVE, saved_model, json.dumps(texts)], capture_output=True,
                            text=True, check=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    return json.loads(result.stdout.strip().splitlines()[-1])


def predictions(output_dir):
    with open(os.path.join(output_dir, "predictions.tsv"), encoding="utf-8") as handle:
        return [line.split("\t") for line in handle.read().splitlines()]


def mood_rows(count, seed):
    rng = np.random.default_rng(seed)
    labels = [list(MOODS)[i % 3] for i in range(count)]
    return [(f"{MOODS[label][rng.integers(3)]}, number {i}", label) for i, label in enumerate(labels)]


def test_a_bom_quoted_newlines_and_numeric_labels_are_read_as_written(tmp_path):
    """A spreadsheet's UTF-8 BOM is no part of the first column's name; a quoted field may hold
    commas and newlines (the row keeps its first line); numbers sort by value, names after."""
    path = tmp_path / "train.csv"
    path.write_bytes(b"\xef\xbb\xbftext,label\n\"one, with a comma\",10\n\"two\nlines\",2\nthree,2\n")
    examples = own_data.read_split(str(path), "text", "label")
    assert [(e.guid, e.text_a, e.label) for e in examples.examples] == [
        ("2", "one, with a comma", "10"), ("3", "two\nlines", "2"), ("5", "three", "2")]
    assert own_data.label_names_of(examples, "label") == ("2", "10")
    jsonl = tmp_path / "train.jsonl"
    jsonl.write_text('{"text": "a", "label": 1}\n\n{"text": "b", "label": "neg"}\n')
    assert own_data.label_names_of(own_data.read_split(str(jsonl), "text", "label"), "label") == ("1", "neg")


def test_the_dev_split_is_carved_from_train_by_its_own_seed(tmp_path):
    path = tmp_path / "train.tsv"
    path.write_text("text\tlabel\n" + "".join(f"row {i}\t{i % 2}\n" for i in range(50)))
    examples = own_data.read_split(str(path), "text", "label")
    train, dev = own_data.carve_dev(examples, 0.1, seed=0)
    assert len(dev.examples) == 5 and len(train.examples) == 45
    assert sorted(e.guid for e in train.examples + dev.examples) == sorted(e.guid for e in examples.examples)
    assert own_data.carve_dev(examples, 0.1, seed=0)[1] == dev  # the same rows again
    assert own_data.carve_dev(examples, 0.1, seed=1)[1] != dev
    assert [e.guid for e in train.examples] == sorted((e.guid for e in train.examples), key=int)  # file order


def test_glue_tasks_name_their_labels_as_tfds_does_and_label_names_overrides_them():
    from albert_tf.tasks import ClassifierConfig, ConfigError
    from albert_tf.tasks.classifier import GlueFineTuning

    def task(name, label_names=None):
        return GlueFineTuning(ClassifierConfig(task_name=name, label_names=label_names)).glue_task

    assert (task("SST-2").labels, task("SST-2").label_names) == (("0", "1"), ("negative", "positive"))
    assert task("rte").label_names == ("entailment", "not_entailment")  # names already
    assert task("SST-2", ["bad", "good"]).label_names == ("bad", "good")
    assert task("SST-2", ["bad", "good"]).labels == ("0", "1")  # the submission files keep GLUE's
    with pytest.raises(ConfigError, match=r"label_names: SST-2 has 2 labels \(0, 1\), got 3 name") as error:
        task("SST-2", ["a", "b", "c"])
    assert error.value.worded(lambda name: f"--{name}").startswith("--label_names: SST-2 has 2 labels")


@pytest.mark.slow
def test_three_named_labels_from_csv_jsonl_and_tsv_reach_every_output(browser, tmp_path):
    """Train on a CSV, evaluate on JSON Lines, predict a TSV; the SavedModel (a fresh process), the
    MediaPipe model (in Python and on web/'s page in headless Chromium) and the Hugging Face
    conversion all say the label names."""
    with open(tmp_path / "train.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["review", "mood"])
        writer.writerows(mood_rows(36, seed=0))
    with open(tmp_path / "dev.jsonl", "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps({"review": text, "mood": label}) + "\n" for text, label in mood_rows(9, 1))
    texts = ["loved every minute of it", "so annoyed, really", "cried all night, number 3", "fun"]
    (tmp_path / "test.tsv").write_text("review\n" + "".join(f"{text}\n" for text in texts), encoding="utf-8")
    output_dir, export_dir = str(tmp_path / "out"), str(tmp_path / "export")
    result = run_classifier(
        f"--train_file={tmp_path / 'train.csv'}", f"--dev_file={tmp_path / 'dev.jsonl'}",
        f"--test_file={tmp_path / 'test.tsv'}", "--text_column=review", "--label_column=mood", "--metrics=accuracy,f1",
        f"--output_dir={output_dir}", "--do_train", "--do_eval", "--do_predict", f"--export_dir={export_dir}",
        "--export_version=1", f"--export_tflite={tmp_path / 'tflite'}", "--tflite_seq_length=32", *TINY_RUN)
    assert result.returncode == 0, result.stderr[-3000:]
    names = ["angry", "happy", "sad"]  # the train file's values, sorted
    with open(os.path.join(output_dir, "label_names.json")) as handle:
        assert json.load(handle) == names
    with open(os.path.join(output_dir, "eval_results.json")) as handle:
        assert set(json.load(handle)) == {"accuracy", "f1", "majority_baseline_accuracy", "majority_baseline_f1"}
    rows = predictions(output_dir)
    assert rows[0] == ["index", "prediction"] and [row[0] for row in rows[1:]] == ["2", "3", "4", "5"]  # the lines
    predicted = [row[1] for row in rows[1:]]
    assert set(predicted) <= set(names)

    outputs = served(os.path.join(export_dir, "1"), {"sentence": texts})
    assert outputs["label"] == predicted
    probabilities = np.array(outputs["probabilities"])

    mediapipe = tmp_path / "mediapipe.json"
    (tmp_path / "texts.json").write_text(json.dumps(texts))
    tflite = str(tmp_path / "tflite" / "classifier_float32.tflite")
    subprocess.run([sys.executable, os.path.join(REPO, "bench", "mediapipe_tasks.py"), "classify", tflite,
                    str(tmp_path / "texts.json"), str(mediapipe)],
                   check=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", GLOG_minloglevel="2"))
    scored = json.loads(mediapipe.read_text())
    assert scored["category_names"] == names  # what an app shows beside each score
    np.testing.assert_allclose(scored["outputs"], probabilities, atol=1e-5)
    page = bench_browser.page_results(tflite, texts)  # web/'s page, as typed into it
    assert [(result["text"], result["labels"]) for result in page["results"]] == [(text, names) for text in texts]
    np.testing.assert_allclose([result["scores"] for result in page["results"]], scored["outputs"], rtol=0,
                               atol=FLOAT_TOLERANCE)

    converted = subprocess.run([sys.executable, "-m", "albert_cli.convert", f"--from={output_dir}/best/model",
                                f"--to={tmp_path / 'hf'}", "--format=hf"], capture_output=True, text=True, cwd=REPO,
                               env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    assert converted.returncode == 0, converted.stderr[-3000:]
    from transformers import AutoConfig

    config = AutoConfig.from_pretrained(str(tmp_path / "hf"))
    assert config.id2label == dict(enumerate(names)) and config.label2id == {name: i for i, name in enumerate(names)}


@pytest.mark.slow
def test_a_pair_regression_from_tsv_with_a_carved_dev_split_serves_scores(tmp_path):
    rng = np.random.default_rng(0)
    pairs = [(f"a cat sat {i}", f"a cat sat {i}" if i % 2 else f"stocks fell {i}", rng.uniform(0, 5)) for i in range(30)]
    (tmp_path / "train.tsv").write_text("first\tsecond\tsimilarity\n" + "".join(
        f"{a}\t{b}\t{score:.2f}\n" for a, b, score in pairs))
    (tmp_path / "test.jsonl").write_text("".join(json.dumps({"first": a, "second": b}) + "\n" for a, b, _ in pairs[:3]))
    output_dir = str(tmp_path / "out")
    result = run_classifier(
        f"--train_file={tmp_path / 'train.tsv'}", f"--test_file={tmp_path / 'test.jsonl'}", "--text_column=first",
        "--text_pair_column=second", "--label_column=similarity", "--regression", f"--output_dir={output_dir}",
        "--do_train", "--do_eval", "--do_predict", f"--export_dir={tmp_path / 'export'}", "--export_version=1",
        *TINY_RUN)
    assert result.returncode == 0, result.stderr[-3000:]
    with open(os.path.join(output_dir, "eval_results.json")) as handle:
        assert {"pearson", "spearman", "mse"} <= set(json.load(handle))
    scores = [float(row[1]) for row in predictions(output_dir)[1:]]  # not clipped: no range is assumed
    outputs = served(str(tmp_path / "export" / "1"), {"sentence1": [a for a, _, _ in pairs[:3]],
                                                      "sentence2": [b for _, b, _ in pairs[:3]]})
    np.testing.assert_allclose(outputs["score"], scores, atol=1e-3)


def _python_lines():
    with open(os.path.join(REPO, "docs", "fine_tuning.md"), encoding="utf-8") as handle:
        return re.search(r"```python\n(.*?)```", handle.read(), re.DOTALL).group(1)


@pytest.mark.slow
def test_the_docs_python_lines_fine_tune_evaluate_and_export(tmp_path):
    """docs/fine_tuning.md's first Python block as printed, but for 2 training steps, on a reviews.csv."""
    code = _python_lines()
    assert "train_step=300" in code
    with open(tmp_path / "reviews.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["review", "sentiment"])
        writer.writerows((f"{text} {i}", label) for i in range(20) for text, label in
                         (("a joy to watch", "positive"), ("dull and far too long", "negative")))
    (tmp_path / "lines.py").write_text(code.replace("train_step=300", "train_step=2"))
    result = script_process.run_python([str(tmp_path / "lines.py")], cwd=str(tmp_path),
                                       env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    assert result.returncode == 0, result.stderr[-3000:]
    metrics, label = result.stdout.strip().splitlines()[-2:]
    assert "'accuracy':" in metrics
    assert label in ("[b'positive']", "[b'negative']"), result.stdout


@pytest.mark.slow
def test_seeds_resume_and_a_later_run_without_the_train_file_keep_the_label_names(tmp_path):
    """--seeds=2 records the labels in each seed's directory; a rerun resumes (nothing to train);
    predicting later from --output_dir alone labels the test rows with the recorded names."""
    with open(tmp_path / "train.csv", "w", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerows([("text", "label"), *mood_rows(24, seed=2)])
    (tmp_path / "test.jsonl").write_text('{"text": "so annoyed"}\n{"text": "what a wonderful day"}\n')
    output_dir = str(tmp_path / "out")
    train = (f"--train_file={tmp_path / 'train.csv'}", f"--output_dir={output_dir}", "--do_train", "--seeds=2",
             *TINY_RUN)
    first = run_classifier(*train)
    assert first.returncode == 0, first.stderr[-3000:]
    for seed in (12345, 12346):
        with open(os.path.join(output_dir, f"seed_{seed}", "label_names.json")) as handle:
            assert json.load(handle) == ["angry", "happy", "sad"]
    again = run_classifier(*train)
    assert again.returncode == 0 and again.stderr.count("nothing to train") == 2, again.stderr[-3000:]
    later = run_classifier(f"--test_file={tmp_path / 'test.jsonl'}", f"--output_dir={output_dir}", "--do_predict",
                           *TINY_RUN)
    assert later.returncode == 0, later.stderr[-3000:]
    rows = predictions(output_dir)
    assert [row[0] for row in rows[1:]] == ["1", "2"] and {row[1] for row in rows[1:]} <= {"angry", "happy", "sad"}
