"""Paths and writers shared by the SQuAD and RACE tests."""

import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPM_MODEL = os.path.join(REPO, "data", "albert_spm", "30k-clean.model")
TINY_CONFIG = os.path.join(REPO, "configs", "albert_tiny.json")
SQUAD_TRAIN = os.path.join(REPO, "data", "squad", "train-v2.0-sample.json")
SQUAD_DEV = os.path.join(REPO, "data", "squad", "dev-v2.0-sample.json")


def write_squad(path, paragraphs, version="v2.0"):
    """Writes `paragraphs` ([{"context", "qas"}]) as an official-format SQuAD file; returns `path`."""
    with open(path, "w", encoding="utf-8") as handle:
        json.dump({"version": version, "data": [{"title": "t", "paragraphs": paragraphs}]}, handle)
    return str(path)


def answerable_subset(source, path):
    """A v1.1 file: `source` without its unanswerable questions (and without `is_impossible`)."""
    with open(source, encoding="utf-8") as handle:
        dataset = json.load(handle)
    for article in dataset["data"]:
        for paragraph in article["paragraphs"]:
            paragraph["qas"] = [{k: v for k, v in qa.items() if k not in ("is_impossible", "plausible_answers")}
                                for qa in paragraph["qas"] if not qa.get("is_impossible")]
    dataset["version"] = "1.1"
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(dataset, handle)
    return str(path)


_SERVE = """
import json, sys
import tensorflow as tf
import tensorflow_text  # noqa: F401
served = tf.saved_model.load(sys.argv[1])
questions, contexts = json.loads(sys.stdin.read())
out = served.signatures["serving_default"](question=tf.constant(questions), context=tf.constant(contexts))
empty = served.signatures["serving_default"](question=tf.constant([], tf.string), context=tf.constant([], tf.string))
# One row of 16 tokens (serve_token_ids refuses a row without any).
ids = served.signatures["serve_token_ids"](**{name: (tf.ones if name == "input_mask" else tf.zeros)([1, 16], tf.int32)
                                              for name in ("input_word_ids", "input_mask", "input_type_ids", "p_mask")})
print(json.dumps({"text": [t.decode("utf-8") for t in out["answer_text"].numpy()],
                  "start": out["answer_start"].numpy().tolist(), "end": out["answer_end"].numpy().tolist(),
                  "token_ids_outputs": sorted(ids), "albert_tf_loaded": "albert_tf" in sys.modules,
                  "empty_batch": {name: value.shape.as_list() for name, value in empty.items()}}))
"""


def serve_squad(export_path, questions, contexts):
    """The export's answers, from a fresh process that imports only tensorflow and tensorflow_text."""
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run([sys.executable, "-c", _SERVE, export_path], input=json.dumps([questions, contexts]),
                            capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])
