"""Reads SQuAD's official JSON (v1.1 and v2.0) into one `SquadExample` per question."""

import dataclasses

import tensorflow as tf
from absl import logging

from albert_tf.json_fields import json_field, json_object, read_utf8

from albert_tf.error_text import SettingError
from albert_tf.json_text import parse_json


@dataclasses.dataclass(frozen=True)
class SquadExample:
    """One question on one paragraph.

    `answer_text`/`start_position` (a character offset in `paragraph_text`) are the single
    training answer, None when predicting; `is_impossible` marks v2.0's unanswerable questions.
    """

    qas_id: str
    question_text: str
    paragraph_text: str
    answer_text: str = None
    start_position: int = None
    is_impossible: bool = False


def load_squad_json(path):
    """The `data` list of a SQuAD file (raises FileNotFoundError / ValueError naming the file)."""
    if not tf.io.gfile.exists(path):
        raise FileNotFoundError(f"{path}: no such SQuAD file")
    text = read_utf8(path, "SQuAD")
    try:
        dataset = parse_json(text)
    except ValueError as error:
        raise ValueError(f"{path}: not a JSON file ({error})") from None
    if not isinstance(dataset, dict) or not isinstance(dataset.get("data"), list):
        raise ValueError(f'{path}: expected the official SQuAD layout {{"version": ..., "data": [...]}}')
    return dataset["data"]


def read_squad_examples(path, is_training, version_2_with_negative):
    """Every question of `path`, in file order, as the original's `read_squad_examples` reads them.

    For training each answerable question must have exactly one answer (the official train
    files do); dev files keep all their answers for the metrics, which read the JSON itself.
    Without `version_2_with_negative` an unanswerable question is an error, not a silent skip.
    A training answer whose text is not the context's at its `answer_start` is skipped, as the
    original skips it ("Could not find answer"), with one warning giving the count. A field of the
    wrong JSON type is a ValueError naming the file, the question and the field; so is a question
    id that is not unique (the predictions would keep one answer for both).
    """
    examples, mismatched, first_article = [], [], {}
    for article_number, article in enumerate(load_squad_json(path)):
        where = f"{path}: article {article_number}"
        for paragraph in json_field(json_object(article, where), "paragraphs", list, where):
            where = f"{path}: a paragraph of article {article_number}"
            context = json_field(json_object(paragraph, where), "context", str, where)
            for qa in json_field(paragraph, "qas", list, where):
                qas_id = json_field(json_object(qa, f"{where}: a question"), "id", str, f"{where}: a question")
                where_qa = f"{path}: question {qas_id}"
                if qas_id in first_article:
                    raise ValueError(f"{where_qa} appears twice (articles {first_article[qas_id]} and "
                                     f"{article_number}); question ids must be unique, predictions are keyed by them")
                first_article[qas_id] = article_number
                is_impossible = json_field(qa, "is_impossible", bool, where_qa, default=False)
                if is_impossible and not version_2_with_negative:
                    raise SettingError("{where} is unanswerable (is_impossible): a SQuAD 2.0 file needs "
                                       "{version_2_with_negative}", where=where_qa)
                question = json_field(qa, "question", str, where_qa)
                answers = [_answer(answer, context, where_qa)
                           for answer in json_field(qa, "answers", list, where_qa, default=None) or []]
                answer_text, start_position = None, None
                if is_training:
                    json_field(qa, "answers", list, where_qa)
                    if not is_impossible and len(answers) != 1:
                        raise ValueError(f"{where_qa}: a training question needs exactly 1 answer, "
                                         f"got {len(answers)}")
                    answer_text, start_position = ("", -1) if is_impossible else answers[0]
                    if not is_impossible and context[start_position:start_position + len(answer_text)] != answer_text:
                        mismatched.append(qas_id)
                        continue
                examples.append(SquadExample(qas_id, question, context, answer_text, start_position, is_impossible))
    if mismatched:
        logging.warning("%s: %d training answers skipped, their text is not the context's at answer_start "
                        "(first: question %s)", path, len(mismatched), mismatched[0])
    return examples


def _answer(answer, context, where):
    """(text, answer_start) of an answer object, checked to lie inside `context`."""
    where = f"{where}: an answer"
    text = json_field(json_object(answer, where), "text", str, where)
    start = json_field(answer, "answer_start", int, where)
    if not text or start < 0 or start + len(text) > len(context):
        raise ValueError(f"{where}: answer_start {start} / text {text!r} is not a span of its context "
                         f"({len(context)} characters)")
    return text, start
