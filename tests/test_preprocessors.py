"""The preprocessors: one packing rule for the Python features and the graph, `ClassifierPreprocessor`'s
ids equal to `glue.features.example_ids` on the bundled GLUE samples (and the classifier SavedModel's
raw-text signature built on it), `MultipleChoicePreprocessor`'s rows equal to `race.features`', and
SQuAD's windows packed alike in Python and in graph."""

import itertools
import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_tf import AlbertClassifier, AlbertConfig
from albert_tf.glue.features import example_ids
from albert_tf.glue.tasks import get_task
from albert_tf.glue.tsv_reader import read_tsv_split
from albert_tf.preprocessors import ClassifierPreprocessor, MultipleChoicePreprocessor, SquadWindowing
from albert_tf.preprocessors.graph_packing import packed_rows
from albert_tf.preprocessors.option_text import question_with_options
from albert_tf.preprocessors.packing import pair_kept_lengths
from albert_tf.race.examples import RaceExample
from albert_tf.race.features import choice_rows
from albert_tf.serving.classifier_export import export_classifier
from albert_tf.text.preprocessing import AlbertInputPacker, AlbertTextTokenizer
from albert_tf.text.tokenization import AlbertTokenizer
from glue_test_data import REPO, SPM_MODEL, TINY_CONFIG
from race_test_data import PASSAGES

BUNDLED_GLUE = os.path.join(REPO, "albert_cli", "data", "glue")


def _originals_truncation(length_a, length_b, budget):
    """The original GLUE code's `_truncate_seq_pair` loop, on lengths: the reference of the closed form."""
    while length_a + length_b > budget:
        if length_a > length_b:
            length_a -= 1
        else:
            length_b -= 1
    return length_a, length_b


def test_pair_kept_lengths_is_the_originals_loop():
    for length_a, length_b, budget in itertools.product(range(14), range(14), range(27)):
        assert pair_kept_lengths(length_a, length_b, budget) == _originals_truncation(length_a, length_b, budget)


def _python_rows(examples, sequence_length):
    """`example_ids` of each example, padded to `sequence_length` as the model's three inputs."""
    tokenizer = AlbertTokenizer(SPM_MODEL)
    rows = [example_ids(example, tokenizer, sequence_length) for example in examples]

    def padded(values):
        return [value + [0] * (sequence_length - len(value)) for value in values]

    return {"input_word_ids": padded([ids for ids, _ in rows]),
            "input_mask": padded([[1] * len(ids) for ids, _ in rows]),
            "input_type_ids": padded([types for _, types in rows])}


@pytest.mark.parametrize("task_name, sequence_length", [("SST-2", 128), ("SST-2", 12), ("MRPC", 128),
                                                        ("MRPC", 24), ("MRPC", 3)])
def test_ids_equal_the_training_features_on_the_bundled_glue_samples(task_name, sequence_length):
    task = get_task(task_name)
    examples = read_tsv_split(task, "dev", BUNDLED_GLUE).examples
    first = [example.text_a for example in examples]
    segments = first if examples[0].text_b is None else (first, [example.text_b for example in examples])
    expected = _python_rows(examples, sequence_length)
    truncated = sum(1 for mask in expected["input_mask"] if mask[-1] == 1)
    assert truncated > 0 if sequence_length < 128 else truncated < len(examples)  # both cases are exercised

    inputs = ClassifierPreprocessor(SPM_MODEL, sequence_length=sequence_length)(segments)
    assert {name: value.numpy().tolist() for name, value in inputs.items()} == expected
    assert all(value.dtype == tf.int32 for value in inputs.values())


def test_one_string_labels_and_dynamic_padding():
    fixed = ClassifierPreprocessor(SPM_MODEL, sequence_length=16)
    one = fixed("it 's a charming journey .")
    assert one["input_word_ids"].shape == [16]
    x, y, weight = fixed(["it 's a charming journey .", "bleak"], [1, 0], [1.0, 2.0])
    assert (y, weight) == ([1, 0], [1.0, 2.0])
    assert x["input_word_ids"].numpy()[0].tolist() == one["input_word_ids"].numpy().tolist()
    dynamic = ClassifierPreprocessor(SPM_MODEL, sequence_length=16, padding="dynamic")(["a b", "a"])
    assert dynamic["input_mask"].numpy().tolist() == [[1, 1, 1, 1], [1, 1, 1, 0]]
    with pytest.raises(ValueError, match="padding must be one of"):
        ClassifierPreprocessor(SPM_MODEL, padding="bucketed")


def test_get_config_round_trip_and_a_dataset_map():
    preprocessor = ClassifierPreprocessor(SPM_MODEL, sequence_length=20, do_lower_case=False, padding="dynamic")
    clone = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(preprocessor))
    assert isinstance(clone, ClassifierPreprocessor)
    assert clone.get_config() == preprocessor.get_config()
    assert (clone.sequence_length, clone.do_lower_case, clone.padding) == (20, False, "dynamic")
    pairs = (["The Cat sat .", "Dogs bark"], ["on the mat", "loudly !"])
    dataset = tf.data.Dataset.from_tensor_slices((pairs, [1, 0])).batch(2).map(clone)
    features, labels = next(iter(dataset))
    direct = preprocessor(pairs)
    for name, value in direct.items():
        np.testing.assert_array_equal(features[name].numpy(), value.numpy())
    assert labels.numpy().tolist() == [1, 0]


def test_the_text_signature_gives_the_outputs_of_the_former_wiring(tmp_path):
    task = get_task("mrpc")
    classifier = AlbertClassifier(AlbertConfig.from_json_file(TINY_CONFIG), task.num_labels)
    served = tf.saved_model.load(export_classifier(classifier, task, SPM_MODEL, str(tmp_path), max_seq_length=24,
                                                   version=1))
    first = ["Hello, World!", "", "in 1990, the Café Müller " * 4, "x 10, 20, 30"]
    second = ["this is a test", "", "short", "한국어 ﬁ " * 9]
    outputs = served.signatures["serving_default"](sentence1=tf.constant(first), sentence2=tf.constant(second))
    # The wiring the export had before the preprocessor: the tokenizer and a dynamic packer.
    tokenizer = AlbertTextTokenizer(SPM_MODEL)
    packer = AlbertInputPacker(None, cls_id=tokenizer.cls_id, sep_id=tokenizer.sep_id, pad_id=tokenizer.pad_id,
                               max_seq_length=24)
    before = classifier(packer([tokenizer(tf.constant(first)), tokenizer(tf.constant(second))]))["logits"].numpy()
    np.testing.assert_allclose(outputs["logits"].numpy(), before, atol=1e-5)
    assert [label.decode() for label in outputs["label"].numpy()] == [task.label_names[i]
                                                                      for i in before.argmax(-1)]


BACKEND_SCRIPT = """
import json, sys
import tensorflow as tf
from albert_tf.preprocessors import ClassifierPreprocessor, MultipleChoicePreprocessor, SquadWindowing
from albert_tf.preprocessors.graph_packing import packed_rows
from albert_tf.preprocessors.option_text import question_with_options
preprocessor = ClassifierPreprocessor(sys.argv[1], sequence_length=12)
dataset = tf.data.Dataset.from_tensor_slices(((["a b c", "in 1990, d e"], ["f", "g h"]), [0, 1])).batch(2)
features, _ = next(iter(dataset.map(preprocessor)))
print(json.dumps({name: value.numpy().tolist() for name, value in features.items()}))
"""


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_a_dataset_map_on_the_other_backends(backend):
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="2")
    result = subprocess.run([sys.executable, "-c", BACKEND_SCRIPT, SPM_MODEL], capture_output=True, text=True,
                            cwd=REPO, env=env, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    expected = ClassifierPreprocessor(SPM_MODEL, sequence_length=12)((["a b c", "in 1990, d e"], ["f", "g h"]))
    assert json.loads(result.stdout.splitlines()[-1]) == {name: value.numpy().tolist()
                                                          for name, value in expected.items()}


def _race_rows(sequence_length, max_qa_length):
    """(article, question, options) of the test passages and `race.features.choice_rows` of each, padded."""
    tokenizer = AlbertTokenizer(SPM_MODEL)
    rows, expected = [], {"input_word_ids": [], "input_mask": [], "input_type_ids": []}
    for passage in PASSAGES:
        for question, options in zip(passage["questions"], passage["options"]):
            rows.append((passage["article"], question, options))
            texts = tuple(question_with_options(tf.constant([question]), tf.constant([options])).numpy())
            example = RaceExample("q", passage["article"], tuple(text.decode() for text in texts), 0, "middle")
            choices = choice_rows(example, tokenizer, sequence_length, max_qa_length)
            pad = [[0] * (sequence_length - len(ids)) for ids, _ in choices]
            expected["input_word_ids"].append([ids + p for (ids, _), p in zip(choices, pad)])
            expected["input_mask"].append([[1] * len(ids) + p for (ids, _), p in zip(choices, pad)])
            expected["input_type_ids"].append([types + p for (_, types), p in zip(choices, pad)])
    return rows, expected


@pytest.mark.parametrize("sequence_length, max_qa_length", [(64, 32), (16, 5), (12, 9)])
def test_multiple_choice_rows_equal_the_training_features(sequence_length, max_qa_length):
    rows, expected = _race_rows(sequence_length, max_qa_length)
    assert any(mask[-1] == 1 for question in expected["input_mask"] for mask in question) == (sequence_length < 64)
    preprocessor = MultipleChoicePreprocessor(SPM_MODEL, sequence_length=sequence_length, max_qa_length=max_qa_length)
    inputs = preprocessor(tuple(map(list, zip(*rows))))
    assert {name: value.numpy().tolist() for name, value in inputs.items()} == expected
    one = preprocessor(rows[1])
    assert {name: value.numpy().tolist() for name, value in one.items()} == {
        name: value[1] for name, value in expected.items()}


def test_multiple_choice_config_round_trip_and_checks():
    preprocessor = MultipleChoicePreprocessor(SPM_MODEL, sequence_length=40, max_qa_length=12, padding="dynamic")
    clone = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(preprocessor))
    assert clone.get_config() == preprocessor.get_config()
    assert (clone.sequence_length, clone.max_qa_length, clone.padding) == (40, 12, "dynamic")
    article, question, options = PASSAGES[0]["article"], PASSAGES[0]["questions"][0], PASSAGES[0]["options"][0]
    x, label = clone(([article], [question], [options]), [1])
    assert x["input_word_ids"].shape[:2] == [1, 4] and x["input_word_ids"].shape[2] < 40 and label == [1]
    with pytest.raises(ValueError, match="max_qa_length <= sequence_length - 3"):
        MultipleChoicePreprocessor(SPM_MODEL, sequence_length=16, max_qa_length=14)


def test_squad_windows_pack_alike_in_python_and_in_graph():
    windowing = SquadWindowing(max_seq_length=12, doc_stride=3, max_query_length=4)
    assert windowing.packed_window([5, 6], [7, 8, 9], 2, 3) == (
        [2, 5, 6, 3, 7, 8, 9, 3], [0, 0, 0, 0, 1, 1, 1, 1], [0, 1, 1, 1, 0, 0, 0, 1])
    assert (windowing.doc_budget(4), windowing.stride(5), windowing.stride(2), windowing.doc_offset(4)) == (5, 3, 2, 6)
    lengths = list(itertools.product(range(5), range(6)))
    query = tf.ragged.constant([list(range(100, 100 + q)) for q, _ in lengths], tf.int32, ragged_rank=1)
    window = tf.ragged.constant([list(range(200, 200 + w)) for _, w in lengths], tf.int32, ragged_rank=1)
    graph = packed_rows([query, window], 2, 3, *windowing.part_values())
    python = [windowing.packed_window(list(range(100, 100 + q)), list(range(200, 200 + w)), 2, 3) for q, w in lengths]
    assert tuple(rows.to_list() for rows in graph) == tuple(list(rows) for rows in zip(*python))
    windowing.check_room(4)
    with pytest.raises(ValueError, match="leaves no room for the paragraph after a 9-piece question"):
        windowing.check_room(9)
    with pytest.raises(ValueError, match="positive integer doc_stride"):
        SquadWindowing(max_seq_length=12, doc_stride=0, max_query_length=4)


def test_the_packing_rules_load_without_tensorflow():
    # The data builder's worker processes import the Python tokenizer, and with it the packing rules.
    script = ("import sys\nimport albert_tf.text.tokenization, albert_tf.preprocessors.packing\n"
              "print(sorted(name for name in ('tensorflow', 'keras') if name in sys.modules))")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "[]"
