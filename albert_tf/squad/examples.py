"""Reads SQuAD's official JSON (v1.1 and v2.0) into one `SquadExample` per question."""

import dataclasses
import json

import tensorflow as tf

from albert_tf.error_text import SettingError


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
    with tf.io.gfile.GFile(path, "r") as handle:
        try:
            dataset = json.load(handle)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}: not a JSON file ({error})") from None
    if not isinstance(dataset, dict) or not isinstance(dataset.get("data"), list):
        raise ValueError(f'{path}: expected the official SQuAD layout {{"version": ..., "data": [...]}}')
    return dataset["data"]


def read_squad_examples(path, is_training, version_2_with_negative):
    """Every question of `path`, in file order, as the original's `read_squad_examples` reads them.

    For training each answerable question must have exactly one answer (the official train
    files do); dev files keep all their answers for the metrics, which read the JSON itself.
    Without `version_2_with_negative` an unanswerable question is an error, not a silent skip.
    """
    examples = []
    for article in load_squad_json(path):
        for paragraph in article.get("paragraphs", []):
            context = _field(paragraph, "context", path, "paragraph")
            for qa in _field(paragraph, "qas", path, "paragraph"):
                qas_id = _field(qa, "id", path, "question")
                where = f"{path}: question {qas_id}"
                is_impossible = bool(qa.get("is_impossible", False))
                if is_impossible and not version_2_with_negative:
                    raise SettingError("{where} is unanswerable (is_impossible): a SQuAD 2.0 file needs "
                                       "{version_2_with_negative}", where=where)
                answer_text, start_position = None, None
                if is_training:
                    answers = _field(qa, "answers", path, f"question {qas_id}")
                    if not is_impossible and len(answers) != 1:
                        raise ValueError(f"{where}: a training question needs exactly 1 answer, "
                                         f"got {len(answers)}")
                    answer_text, start_position = "", -1
                    if not is_impossible:
                        answer_text = answers[0]["text"]
                        start_position = answers[0]["answer_start"]
                        if not 0 <= start_position < len(context) or not answer_text:
                            raise ValueError(f"{where}: answer_start {start_position} / text "
                                             f"{answer_text!r} is not a span of its context")
                examples.append(SquadExample(qas_id, _field(qa, "question", path, f"question {qas_id}"),
                                             context, answer_text, start_position, is_impossible))
    return examples


def _field(record, name, path, what):
    if name not in record:
        raise ValueError(f"{path}: a {what} lacks the field {name!r}")
    return record[name]
