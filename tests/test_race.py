"""RACE: reading both layouts, the original's row building, the multiple-choice model, run_race.py end to end."""

import json
import os

import numpy as np
import pytest
import tensorflow as tf

from albert_tf.config import AlbertConfig
from albert_tf.models import AlbertMultipleChoice
from albert_tf.preprocessors.option_text import question_with_options
from albert_tf.race import features
from albert_tf.race.examples import read_race_examples
from albert_tf.text.tokenization import AlbertTokenizer
from race_test_data import write_race
import script_process
from squad_test_data import REPO, SPM_MODEL, TINY_CONFIG


@pytest.fixture(scope="module")
def tokenizer():
    return AlbertTokenizer(SPM_MODEL)


def test_reads_both_layouts_the_same(tmp_path):
    files = read_race_examples(write_race(tmp_path / "a"), "dev")
    lines = read_race_examples(write_race(tmp_path / "b", layout="all.txt"), "dev")
    assert [(e.article, e.qa_texts, e.label, e.level) for e in files] == [
        (e.article, e.qa_texts, e.label, e.level) for e in lines]
    assert [e.label for e in files] == [1, 2, 1, 0, 1] and [e.level for e in files] == ["middle"] * 3 + ["high"] * 2
    assert files[1].qa_texts[2] == "Tom rides to school with his sister ."  # the option fills the blank
    assert files[0].qa_texts[1] == "What colour is Tom's bike? Red"  # else it follows the question
    assert len(read_race_examples(str(tmp_path / "a"), "test", levels=("high",))) == 2


def question_with_option(question, option):
    """`question_with_options` on one question and one option."""
    return question_with_options(tf.constant([question]), tf.constant([[option]])).numpy()[0].decode()


def test_question_with_option():
    assert question_with_option("A _ is a bird.", "robin") == "A robin is a bird."
    assert question_with_option("Which is a bird?", "A robin") == "Which is a bird? A robin"


def test_reading_errors_name_the_place(tmp_path):
    with pytest.raises(FileNotFoundError, match="RACE/dev/middle: no RACE passages"):
        read_race_examples(str(tmp_path), "dev")
    level_dir = tmp_path / "RACE" / "dev" / "middle"
    level_dir.mkdir(parents=True)
    (level_dir / "1.txt").write_text(json.dumps({"article": "a", "questions": ["q"], "options": [["x", "y"]],
                                                 "answers": ["A"]}))
    with pytest.raises(ValueError, match="1.txt: question 0 needs 4 options"):
        read_race_examples(str(tmp_path), "dev", levels=("middle",))


def test_rows_keep_the_end_of_the_question_and_the_start_of_the_article(tokenizer, tmp_path):
    example = read_race_examples(write_race(tmp_path), "train")[0]
    article = tokenizer.encode(example.article)
    rows = features.choice_rows(example, tokenizer, max_seq_length=16, max_qa_length=4)
    for (input_ids, segment_ids), qa_text in zip(rows, example.qa_texts):
        qa = tokenizer.encode(qa_text)[-4:]
        assert input_ids == [tokenizer.cls_id] + article[:16 - len(qa) - 3] + [tokenizer.sep_id] + qa + [
            tokenizer.sep_id]
        assert len(input_ids) == 16 and segment_ids == [0] * (16 - len(qa) - 1) + [1] * (len(qa) + 1)
    # Short enough: nothing is cut.
    (input_ids, _), *_ = features.choice_rows(example, tokenizer, max_seq_length=128, max_qa_length=64)
    assert input_ids[1:len(article) + 1] == article


def test_feature_file_and_dataset(tokenizer, tmp_path):
    examples = read_race_examples(write_race(tmp_path), "dev")
    path = features.cached_features(examples, "dev", tokenizer, str(tmp_path / "cache"), 32, 8)
    inputs, labels = next(iter(features.make_dataset(path, 8, 32)))
    assert inputs["input_word_ids"].shape == (5, 4, 32) and labels.numpy().tolist() == [1, 2, 1, 0, 1]
    ids, _ = features.choice_rows(examples[0], tokenizer, 32, 8)[3]
    assert inputs["input_word_ids"][0, 3].numpy().tolist() == ids + [0] * (32 - len(ids))
    assert inputs["input_mask"][0, 3].numpy().sum() == len(ids)


def test_model_scores_each_option_on_its_own():
    model = AlbertMultipleChoice(AlbertConfig.from_json_file(TINY_CONFIG))
    rng = np.random.default_rng(0)
    inputs = {"input_word_ids": tf.constant(rng.integers(5, 1000, (2, 4, 8)), tf.int32),
              "input_mask": tf.ones((2, 4, 8), tf.int32), "input_type_ids": tf.zeros((2, 4, 8), tf.int32)}
    logits = model(inputs, training=False).numpy()
    assert logits.shape == (2, 4)
    # Option 2 of example 1 alone gives the same score as in the batch.
    single = {name: value[1:2, 2:3] for name, value in inputs.items()}
    alone = model.classification_head(model.albert({k: v[:, 0] for k, v in single.items()})["pooled_output"])
    np.testing.assert_allclose(alone.numpy()[0, 0], logits[1, 2], rtol=1e-5, atol=1e-6)
    rebuilt = AlbertMultipleChoice.from_config(model.get_config())
    assert rebuilt.num_choices == 4 and rebuilt.config.to_dict() == model.config.to_dict()


def run_race(*args):
    return script_process.run_python([os.path.join(REPO, "run_race.py"), *args], cwd=REPO,
                                     env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"))


@pytest.mark.slow
def test_run_race_trains_evaluates_and_predicts(tmp_path):
    data_dir = write_race(tmp_path / "data")
    output_dir = str(tmp_path / "out")
    result = run_race(f"--data_dir={data_dir}", f"--output_dir={output_dir}", "--do_train", "--do_eval",
                      "--do_predict", "--max_seq_length=48", "--max_qa_length=16", "--train_step=4",
                      "--warmup_step=1", "--save_checkpoints_steps=2", "--train_batch_size=2",
                      "--learning_rate=1e-3", f"--export_dir={tmp_path / 'export'}")
    assert result.returncode == 0, result.stderr[-3000:]
    (version,) = os.listdir(tmp_path / "export")  # served in tests/test_race_serving.py
    assert os.path.exists(tmp_path / "export" / version / "saved_model.pb")

    def read(name):
        with open(os.path.join(output_dir, name)) as handle:
            return json.load(handle)

    assert [record["step"] for record in read("eval_history.json")] == [2, 4]
    evaluated = read("eval_results.json")
    assert evaluated == pytest.approx(read("best_metrics.json")["metrics"])  # the restored best checkpoint
    # "all" counts questions: 3 middle and 2 high.
    assert evaluated["accuracy"] == pytest.approx(
        (3 * evaluated["accuracy_middle"] + 2 * evaluated["accuracy_high"]) / 5)
    predictions = read("test_predictions.json")
    assert len(predictions) == 5 and set(predictions.values()) <= set("ABCD")
    test = read("test_results.json")
    answers = {"middle1.txt-0": "B", "middle1.txt-1": "C", "middle2.txt-0": "B", "high1.txt-0": "A", "high1.txt-1": "B"}
    assert test["accuracy"] == pytest.approx(np.mean([predictions[k] == v for k, v in answers.items()]))


@pytest.mark.parametrize("args, message", [
    (("--do_eval",), "--data_dir is needed"),
    (("--export_dir=/tmp/never",), "holds no fine-tuned"),
    (("--do_train", "--data_dir=/nonexistent"), "/nonexistent/RACE/dev/middle: no RACE passages"),
    (("--do_eval", "--data_dir=/nonexistent"), "holds no fine-tuned"),
    (("--do_eval", "--data_dir=.", "--high_only", "--middle_only"), "exclude each other"),
    (("--do_eval", "--data_dir=.", "--max_seq_length=64", "--max_qa_length=62"), "leaves no room"),
    (("--flagfile=configs/race_readme.flags", "--data_dir=/nonexistent"), "/nonexistent/RACE/dev/middle"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, args, message):
    result = run_race(f"--output_dir={tmp_path / 'out'}", *args)
    assert result.returncode == 2, result.stderr[-2000:]
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and message in errors[0], result.stderr[-2000:]


@pytest.mark.slow
def test_a_run_killed_after_a_checkpoint_and_rerun_ends_bit_identical_to_an_uninterrupted_one(tmp_path):
    from fine_tuning_resume_test_data import assert_resume_is_exact, run_script

    data_dir = write_race(tmp_path / "data", splits=("train", "dev"))

    def run(output_dir, killed_after_save=None):
        return run_script("run_race.py", [
            f"--data_dir={data_dir}", f"--output_dir={output_dir}", "--do_train", "--max_seq_length=48",
            "--max_qa_length=16", "--train_step=12", "--warmup_step=1", "--save_checkpoints_steps=3",
            "--keep_checkpoint_max=10", "--train_batch_size=2", "--learning_rate=1e-3"], killed_after_save)

    assert_resume_is_exact(run, tmp_path, 6, (9, 12))
