"""The RACE SavedModel picks options from raw text in a fresh process (TensorFlow and tensorflow-text
only) exactly as the in-process model scores the rows `race.features` builds."""

import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_tf.config import AlbertConfig
from albert_tf.models.multiple_choice_model import AlbertMultipleChoice
from albert_tf.preprocessors.option_text import question_with_options
from albert_tf.race.examples import RaceExample
from albert_tf.race.features import choice_rows
from albert_tf.serving.race_export import export_race
from albert_tf.text.tokenization import AlbertTokenizer
from race_test_data import PASSAGES
from squad_test_data import SPM_MODEL, TINY_CONFIG

MAX_SEQ_LENGTH, MAX_QA_LENGTH = 40, 12

_SERVE = """
import json, sys
import tensorflow as tf
import tensorflow_text  # noqa: F401
served = tf.saved_model.load(sys.argv[1])
articles, questions, options = json.loads(sys.stdin.read())
out = served.signatures["serving_default"](article=tf.constant(articles), question=tf.constant(questions),
                                           options=tf.constant(options))
empty = served.signatures["serving_default"](article=tf.constant([], tf.string), question=tf.constant([], tf.string),
                                             options=tf.zeros([0, 4], tf.string))
# Rows of 8 tokens (serve_token_ids refuses a row without any).
ids = served.signatures["serve_token_ids"](**{name: (tf.ones if name == "input_mask" else tf.zeros)([2, 4, 8], tf.int32)
                                              for name in ("input_word_ids", "input_mask", "input_type_ids")})
print(json.dumps({"logits": out["logits"].numpy().tolist(), "probabilities": out["probabilities"].numpy().tolist(),
                  "choice": out["choice"].numpy().tolist(), "token_ids_logits": ids["logits"].shape.as_list(),
                  "empty": {name: value.shape.as_list() for name, value in empty.items()},
                  "albert_tf_loaded": "albert_tf" in sys.modules}))
"""


def question_with_option(question, option):
    """The original's second segment (`RaceProcessor`): the reference of the graph rule."""
    return question.replace("_", option) if "_" in question else " ".join([question, option])


def _questions():
    """(article, question, options) of every test passage, plus a long article cut to fit and a blank question."""
    rows = [(p["article"], q, o) for p in PASSAGES for q, o in zip(p["questions"], p["options"])]
    long_article = " ".join(p["article"] for p in PASSAGES) * 3
    rows.append((long_article, "Which is true of _ and of the rest of this very long question about it?",
                 ["the bike", "the library", "the glaciers", "sea levels"]))
    return rows


def test_blanks_are_filled_as_in_python():
    questions = ["Tom rides to _ .", "No blank here?", "_a_b_", "two__blanks"]
    options = [["x", "y\\1", "z$0", "w"]] * len(questions)
    served = question_with_options(tf.constant(questions), tf.constant(options)).numpy().tolist()
    assert [text.decode() for text in served] == [question_with_option(q, o) for q, row in zip(questions, options)
                                                  for o in row]


@pytest.mark.slow
def test_served_choices_equal_the_in_process_model(tmp_path):
    keras.utils.set_random_seed(3)
    model = AlbertMultipleChoice(AlbertConfig.from_json_file(TINY_CONFIG))
    model(model.example_inputs(), training=False)
    tokenizer = AlbertTokenizer(SPM_MODEL)
    rows = _questions()
    inputs = {name: [] for name in ("input_word_ids", "input_mask", "input_type_ids")}
    for article, question, options in rows:
        example = RaceExample("q", article, tuple(question_with_option(question, o) for o in options), 0, "middle")
        for ids, segments in choice_rows(example, tokenizer, MAX_SEQ_LENGTH, MAX_QA_LENGTH):
            pad = [0] * (MAX_SEQ_LENGTH - len(ids))
            inputs["input_word_ids"].append(ids + pad)
            inputs["input_mask"].append([1] * len(ids) + pad)
            inputs["input_type_ids"].append(segments + pad)
    assert max(sum(mask) for mask in inputs["input_mask"]) == MAX_SEQ_LENGTH  # the long article was cut
    expected = model({name: tf.reshape(tf.constant(value), [len(rows), 4, MAX_SEQ_LENGTH])
                      for name, value in inputs.items()}, training=False).numpy()

    export_path = export_race(model, SPM_MODEL, str(tmp_path / "export"), max_seq_length=MAX_SEQ_LENGTH,
                              max_qa_length=MAX_QA_LENGTH)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run([sys.executable, "-c", _SERVE, export_path], input=json.dumps([list(r) for r in zip(*rows)]),
                            capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    served = json.loads(result.stdout.strip().splitlines()[-1])
    assert not served["albert_tf_loaded"]
    np.testing.assert_allclose(served["logits"], expected, atol=1e-5)
    np.testing.assert_allclose(served["probabilities"], tf.nn.softmax(expected).numpy(), atol=1e-6)
    assert served["choice"] == np.argmax(expected, axis=-1).tolist()
    assert served["token_ids_logits"] == [2, 4]
    assert served["empty"] == {"logits": [0, 4], "probabilities": [0, 4], "choice": [0]}
