"""The SQuAD `.tflite` files in the TFLite Task Library's `BertQuestionAnswerer` (tflite-support,
in its own environment: bench/install_task_library.sh) against our model on the same tokens.

Our side builds the inputs as the Task Library does (bench/task_library_reference.py) with our
training tokenizer, runs the Keras model and applies the Task Library's top-5 rule: the answers'
spans, texts and scores must match. The contexts are the bundled SQuAD dev paragraphs (one has
"Hervé", which the tokenizer file must fold as training did; one is longer than 384 tokens), four
of them joined, and a question longer than 64 pieces. And `run_squad.py --export_tflite` end to end: the two files, answers
from both, and a second run refused without touching them. And bench/task_library_squad.py on the two
files, its tokenizer the SentencePiece model inside them."""

import json
import os

import keras
import numpy as np
import pytest

from albert_tf.models.question_answering_model import AlbertQuestionAnswering
from albert_tf.serving.litert.publish import export_tflite_question_answerer
from albert_tf.text.tokenization import AlbertTokenizer
from data_prep.train_sentencepiece import train as train_sentencepiece
from glue_test_data import REPO, load_bench_script
from model_test_data import tiny
import script_process
from squad_test_data import SPM_MODEL, SQUAD_DEV, SQUAD_TRAIN, answerable_subset, write_squad
from task_library_env import run_task_library_qa, task_library_python, write_fake_task_library_models

# Float32 through the Task Library's runtime (XNNPACK) against TensorFlow: summation order only.
FLOAT_TOLERANCE = 1e-4
# Dynamic-range int8 (per-tensor dense weights) against float32 TensorFlow: largest score change
# measured on these questions 0.051, on scores of 10 to 12.4; the budget is three times that.
INT8_SCORE_BUDGET = 0.15
# The length of the untrained head's weights (`aim_head_at_context`).
HEAD_SCALE = 1.0

reference = load_bench_script("task_library_reference")


def squad_questions():
    """(context, question) of the dev sample's first question per paragraph, a context longer
    than 384 tokens and a question longer than 64 pieces."""
    with open(SQUAD_DEV, encoding="utf-8") as handle:
        paragraphs = [p for article in json.load(handle)["data"] for p in article["paragraphs"]]
    items = [{"context": p["context"], "question": p["qas"][0]["question"]} for p in paragraphs]
    long_context = "  ".join(p["context"] for p in paragraphs[:4])  # runs of spaces, too
    items.append({"context": long_context, "question": "Who was the leader of the Franks?"})
    items.append({"context": paragraphs[2]["context"],
                  "question": " ".join(q["question"] for q in paragraphs[2]["qas"])})
    return items


def task_library(model_path, items, tmp_path):
    """The Task Library's answers, from bench/task_library_qa.py in the Task Library's environment."""
    (tmp_path / "questions.json").write_text(json.dumps(items))
    out = tmp_path / "answers.json"
    result = run_task_library_qa(model_path, tmp_path / "questions.json", out)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(out.read_text())["answers"]


def ours(model, items):
    """For each item, our model's answers by the Task Library's rule, a function scoring any span
    (start + end logit) and its answer text, and whether the context was truncated."""
    tokenizer = AlbertTokenizer(SPM_MODEL)
    results = []
    for item in items:
        inputs, words, piece_words, cut = reference.task_library_inputs(
            item["context"], item["question"], tokenizer.encode, tokenizer.cls_id, tokenizer.sep_id)
        outputs = model({**inputs, "p_mask": np.zeros_like(inputs["input_mask"])}, training=False)
        start_logits, end_logits = outputs["start_logits"].numpy()[0], outputs["end_logits"].numpy()[0]
        answers = reference.task_library_answers(start_logits, end_logits, words, piece_words)
        spans = {(a["start"], a["end"]): a for a in reference.task_library_answers(
            start_logits, end_logits, words, piece_words, predicted_answers=None)}
        results.append((answers, spans, cut))
    return results


def aim_head_at_context(model, items):
    """Sets the untrained head's start and end weights to the direction from the other positions'
    mean last-layer output to the context pieces' mean (over `items`), plus each its own random
    part: the top-5 starts and ends then fall in the context, apart by more than int8's error."""
    tokenizer = AlbertTokenizer(SPM_MODEL)
    context, other = [], []
    for item in items:
        inputs, _, piece_words, _ = reference.task_library_inputs(
            item["context"], item["question"], tokenizer.encode, tokenizer.cls_id, tokenizer.sep_id)
        sequence = model.albert(inputs, training=False)["sequence_output"].numpy()[0]
        in_context = np.isin(np.arange(len(sequence)), list(piece_words))
        context.append(sequence[in_context])
        other.append(sequence[~in_context])
    direction = np.concatenate(context).mean(0) - np.concatenate(other).mean(0)
    direction /= np.linalg.norm(direction)
    noise = np.random.default_rng(0).normal(size=(2, direction.size))
    noise /= np.linalg.norm(noise, axis=1, keepdims=True)
    model.qa_head.output_weights.assign((HEAD_SCALE * (direction + 0.5 * noise)).astype("float32"))


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    keras.utils.set_random_seed(3)
    model = AlbertQuestionAnswering(tiny())
    model(model.example_inputs(), training=False)
    aim_head_at_context(model, squad_questions())
    export_dir = tmp_path_factory.mktemp("tflite")
    paths = export_tflite_question_answerer(model, str(export_dir), SPM_MODEL)
    return model, dict(zip(("float32", "dynamic_int8"), paths))


@pytest.mark.parametrize("quantization, tolerance", [("float32", FLOAT_TOLERANCE),
                                                      ("dynamic_int8", INT8_SCORE_BUDGET)])
def test_task_library_answers_as_our_model_on_the_same_tokens(exported, quantization, tolerance, tmp_path):
    model, paths = exported
    items = squad_questions()
    expected = ours(model, items)
    got = task_library(paths[quantization], items, tmp_path)
    assert [cut for _, _, cut in expected] == [False] * 5 + [True, True, False]  # the 279-word paragraph, four joined
    assert sum(len(answers) for answers, _, _ in expected) >= 3 * len(items)  # spans to compare, not empty lists
    for item, (want, spans, _), have in zip(items, expected, got):
        assert len(have) == len(want), item["question"]
        for answer in have:  # a context span of ours, its words, its score
            ours_there = spans[(answer["start"], answer["end"])]
            assert answer["text"] == ours_there["text"]
            assert abs(answer["logit"] - ours_there["logit"]) <= tolerance
        np.testing.assert_allclose([a["logit"] for a in have], [a["logit"] for a in want], atol=tolerance)
        if quantization == "float32":  # int8 may swap two answers whose scores are closer than its error
            assert [(a["start"], a["end"]) for a in have] == [(a["start"], a["end"]) for a in want], item["question"]


def test_long_question_keeps_64_pieces_and_context_follows():
    tokenizer = AlbertTokenizer(SPM_MODEL)
    item = squad_questions()[-1]
    inputs, _, piece_words, _ = reference.task_library_inputs(item["context"], item["question"], tokenizer.encode,
                                                              tokenizer.cls_id, tokenizer.sep_id)
    assert len(tokenizer.encode(item["question"])) > reference.MAX_QUERY_LENGTH
    type_ids = inputs["input_type_ids"][0]
    assert min(piece_words) == reference.MAX_QUERY_LENGTH + 2 == int(np.argmax(type_ids))
    assert inputs["input_word_ids"][0][reference.MAX_QUERY_LENGTH + 1] == tokenizer.sep_id


def test_run_squad_export_tflite_writes_what_the_task_library_answers_with_and_never_replaces_it(tmp_path):
    train_file = answerable_subset(SQUAD_TRAIN, tmp_path / "train-v1.1.json")
    tflite_dir = tmp_path / "tflite"
    run = ["run_squad.py", "--max_seq_length=384", "--train_batch_size=4",  # the Task Library reads 384 tokens
           "--learning_rate=1e-3",
           f"--predict_file={train_file}", f"--output_dir={tmp_path / 'out'}", f"--export_tflite={tflite_dir}"]
    result = script_process.run_python([*run, "--do_train", f"--train_file={train_file}", "--num_train_epochs=3",
                                        "--save_checkpoints_steps=4"], cwd=REPO,
                                       env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    assert result.returncode == 0, result.stderr[-3000:]
    files = {name: (tflite_dir / name).read_bytes() for name in os.listdir(tflite_dir)}
    assert sorted(files) == ["question_answerer_dynamic_int8.tflite", "question_answerer_float32.tflite"]
    items = squad_questions()[:5]
    for name in files:
        got = task_library(tflite_dir / name, items, tmp_path)
        assert sum(map(len, got)) >= len(items)  # a model barely trained: some lists are empty
        for item, answers in zip(items, got):
            words = " ".join(word for word in item["context"].split(" ") if word)
            assert len(answers) <= 5 and all(answer["text"] in words for answer in answers)
            assert [a["logit"] for a in answers] == sorted((a["logit"] for a in answers), reverse=True)
    again = script_process.run_python(run, cwd=REPO, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))
    assert again.returncode == 2 and "--export_tflite" in again.stderr and "never replaced" in again.stderr
    assert files == {name: (tflite_dir / name).read_bytes() for name in os.listdir(tflite_dir)}


def test_the_bench_counts_agreement_on_one_window_questions_and_names_each_difference():
    bench = load_bench_script("task_library_squad")
    assert bench.difference_kind("Trebizond", "Treb") == "whole_words"
    assert bench.difference_kind("1038.", "10") == "whole_words"
    assert bench.difference_kind("Reconquista", "quist") == "whole_words"  # widened on both sides
    assert bench.difference_kind("customaries in Latin: ancien coutumier", "aries in Latin: ancien coutu") == "whole_words"
    assert bench.difference_kind("Reconquista", "") == "other_span"
    assert bench.difference_kind("far", "1074, 8,000 of the") == "other_span"
    assert bench.difference_kind("the far east", "far") == "other_span"  # more words than run_squad's
    questions = [{"id": str(i), "question": "q", "answers": ["The Normans"], "is_impossible": impossible}
                 for i, impossible in enumerate([False, False, False, True])]
    result = bench.compare(questions, truncated=[False, False, True, False],
                           best_texts=["the Normans", "Treb", "Normans", "a span"],
                           predictions={"0": "Normans", "1": "Trebizond", "2": "x"})
    assert (result["answerable_one_window"], result["same_best_answer"]) == (2, 1)
    assert [d["id"] for d in result["disagreements"]] == ["1"]
    assert result["task_library_gold"]["exact_match"] == pytest.approx(100 * 2 / 3)
    assert result["run_squad_gold"]["exact_match"] == pytest.approx(100 * 1 / 3)
    assert result["unanswerable_given_a_span"] == 1


def test_the_bench_runs_both_files_and_writes_its_record_whole(exported, tmp_path, capsys):
    task_library_python()
    _, paths = exported
    items = squad_questions()
    paragraphs = [{"context": item["context"], "qas": [{"id": f"q{i}", "question": item["question"],
                                                        "answers": [{"text": item["context"].split()[0],
                                                                     "answer_start": 0}]}]}
                  for i, item in enumerate(items)]
    paragraphs[0]["qas"].append({"id": "none", "question": "Who left?", "is_impossible": True, "answers": []})
    (tmp_path / "predictions.json").write_text(json.dumps({f"q{i}": item["context"].split()[1]
                                                           for i, item in enumerate(items)}))
    os.makedirs(tmp_path / "out")
    bench = load_bench_script("task_library_squad")
    status = bench.main([f"--squad_file={write_squad(tmp_path / 'squad.json', paragraphs)}",
                         f"--predictions={tmp_path / 'predictions.json'}",
                         f"--tflite_dir={os.path.dirname(paths['float32'])}", f"--json={tmp_path / 'out' / 'r.json'}"])
    printed = capsys.readouterr()
    assert status == 0, printed.err
    record = json.loads((tmp_path / "out" / "r.json").read_text())
    assert record == json.loads(printed.out) and os.listdir(tmp_path / "out") == ["r.json"]  # no temporary left
    # Two contexts cut (the 279-word paragraph, four joined), as the exported tokenizer cuts them.
    assert (record["questions"], record["answerable"], record["contexts"], record["contexts_truncated"]) == (9, 8, 7, 2)
    for quantization, path in paths.items():
        form = record["forms"][quantization]
        assert form["answerable_one_window"] == 6 == form["same_best_answer"] + len(form["disagreements"])
        assert form["file_bytes"] == os.path.getsize(path) and form["median_ms_per_question"] > 0


def test_the_bench_tokenizes_with_the_sentencepiece_model_inside_the_tflite_files(tmp_path):
    (tmp_path / "other.model").write_bytes(train_sentencepiece([os.path.join(REPO, "data", "corpus", "sample.txt")],
                                                               300, input_sentence_size=2000))
    write_fake_task_library_models(tmp_path / "tflite", tmp_path / "other.model")
    bench = load_bench_script("task_library_squad")
    files = [tmp_path / "tflite" / f"question_answerer_{quantization}.tflite" for quantization in bench.QUANTIZATIONS]
    text = squad_questions()[0]["context"]
    other = AlbertTokenizer(str(tmp_path / "other.model"))
    assert bench.tflite_tokenizer(files).encode(text) == other.encode(text) != AlbertTokenizer(SPM_MODEL).encode(text)
    write_fake_task_library_models(tmp_path / "mixed", SPM_MODEL)
    os.replace(files[0], tmp_path / "mixed" / files[0].name)
    with pytest.raises(bench.BadInput, match="hold different SentencePiece models; give the files of one export"):
        bench.tflite_tokenizer([tmp_path / "mixed" / file.name for file in files])
