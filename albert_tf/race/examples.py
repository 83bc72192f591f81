"""Reads RACE passages into one `RaceExample` per question, as the original's `RaceProcessor`.

Layout: `<data_dir>/RACE/{train,dev,test}/{middle,high}/`, each passage a JSON object with
`article`, `questions`, `options` (four per question), `answers` ("A".."D") and `id`. The
official download has one passage per `.txt` file; the original read an `all.txt` of the same
objects, one per line. Both are read: `all.txt` when present, else every `*.txt` file.
"""

import dataclasses
import os

import tensorflow as tf

from albert_tf.json_fields import json_field, json_object, json_strings, json_type, read_utf8
from albert_tf.json_text import parse_json
from albert_tf.preprocessors.option_text import question_with_options

LEVELS = ("middle", "high")
NUM_CHOICES = 4


@dataclasses.dataclass(frozen=True)
class RaceExample:
    """One question: the article, the four question + option texts, the answer index, the level."""

    example_id: str
    article: str
    qa_texts: tuple
    label: int
    level: str


def _passages(level_dir):
    """(file name, passage dict) of a level directory, in file-name order."""
    all_txt = os.path.join(level_dir, "all.txt")
    if tf.io.gfile.exists(all_txt):
        for number, line in enumerate(read_utf8(all_txt, "RACE").splitlines(), 1):
            if line.strip():
                yield f"{all_txt}:{number}", _parse(line, f"{all_txt} line {number}")
        return
    for path in sorted(tf.io.gfile.glob(os.path.join(level_dir, "*.txt"))):
        yield path, _parse(read_utf8(path, "RACE"), path)


def _parse(text, where):
    try:
        passage = parse_json(text)
    except ValueError as error:
        raise ValueError(f"{where}: not a RACE JSON passage ({error})") from None
    json_object(passage, f"{where}: the passage")
    missing = [key for key in ("article", "questions", "options", "answers") if key not in passage]
    if missing:
        raise ValueError(f"{where}: a RACE passage needs the fields {', '.join(missing)}")
    json_field(passage, "article", str, where)
    for name in ("questions", "answers"):
        json_strings(json_field(passage, name, list, where, expected="a list of strings"), where, name)
    per_question = f"a list of {NUM_CHOICES} strings per question"
    for choices in json_field(passage, "options", list, where, expected=f"a list holding {per_question}"):
        if not isinstance(choices, list):
            raise ValueError(f"{where}: field 'options' holds {json_type(choices)}, expected {per_question}")
        json_strings(choices, where, "options")
    return passage


def _questions(where, passage):
    """(example id, question, its options, answer) of each question of a passage, checked."""
    questions, options, answers = passage["questions"], passage["options"], passage["answers"]
    if not len(questions) == len(options) == len(answers):
        raise ValueError(f"{where}: {len(questions)} questions, {len(options)} option lists and "
                         f"{len(answers)} answers (expected as many of each)")
    for index, (question, choices, answer) in enumerate(zip(questions, options, answers)):
        if len(choices) != NUM_CHOICES or answer not in "ABCD" or len(answer) != 1:
            raise ValueError(f"{where}: question {index} needs 4 options and an answer in A-D, got "
                             f"{len(choices)} options and answer {answer!r}")
        yield f"{passage.get('id', os.path.basename(where))}-{index}", question, choices, answer


def read_race_examples(data_dir, split, levels=LEVELS):
    """Every question of `split` at `levels`; raises FileNotFoundError when a level has no files."""
    examples = []
    for level in levels:
        level_dir = os.path.join(data_dir, "RACE", split, level)
        passages = list(_passages(level_dir)) if tf.io.gfile.isdir(level_dir) else []
        if not passages:
            raise FileNotFoundError(f"{level_dir}: no RACE passages (expected all.txt or one JSON .txt per passage)")
        rows = [(passage["article"], *question) for where, passage in passages
                for question in _questions(where, passage)]
        # The level's question + option texts in one call of the rule the exports use too.
        qa_texts = question_with_options(
            tf.constant([question for _, _, question, _, _ in rows], tf.string),
            tf.constant([choices for _, _, _, choices, _ in rows], tf.string, shape=[len(rows), NUM_CHOICES]))
        qa_texts = [text.decode("utf-8") for text in qa_texts.numpy()]
        for index, (article, example_id, _, _, answer) in enumerate(rows):
            examples.append(RaceExample(
                example_id=example_id,
                article=article,
                qa_texts=tuple(qa_texts[index * NUM_CHOICES:(index + 1) * NUM_CHOICES]),
                label=ord(answer) - ord("A"),
                level=level,
            ))
    return examples
