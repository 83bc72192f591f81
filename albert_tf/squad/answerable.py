"""A SQuAD 2.0 file's answerable questions alone, as a SQuAD 1.1 file.

Why: the question-answering exports (LiteRT, the Task Library's BertQuestionAnswerer) always give
a span, as SQuAD 1.1 models do; the bundled data is a SQuAD 2.0 slice (`data/squad/`), whose
unanswerable questions a v1.1 run refuses. The command is `albert_cli.squad_answerable`.
"""

import os

from albert_tf.io_utils import write_json
from albert_tf.json_fields import json_field, json_object
from albert_tf.squad.examples import load_squad_json


def answerable_only(input_file, output_file):
    """Writes `input_file`'s questions without `is_impossible` (paragraphs and articles left with
    none are dropped) to `output_file` as `{"version": "1.1", "data": [...]}`; returns the counts
    {"questions", "kept"}."""
    if os.path.realpath(input_file) == os.path.realpath(output_file):
        raise ValueError(f"{output_file}: the output would replace its input; give another file")
    articles, questions, kept = [], 0, 0
    for number, article in enumerate(load_squad_json(input_file)):
        where = f"{input_file}: article {number}"
        paragraphs = []
        for paragraph in json_field(json_object(article, where), "paragraphs", list, where):
            qas = json_field(json_object(paragraph, where), "qas", list, where)
            answerable = [qa for qa in qas if not json_field(json_object(qa, where), "is_impossible", bool, where,
                                                             default=False)]
            questions, kept = questions + len(qas), kept + len(answerable)
            if answerable:
                paragraphs.append({**paragraph, "qas": answerable})
        if paragraphs:
            articles.append({**article, "paragraphs": paragraphs})
    if not kept:
        raise ValueError(f"{input_file}: no answerable question (every question is_impossible)")
    write_json(output_file, {"version": "1.1", "data": articles})
    return {"questions": questions, "kept": kept}
