"""Answers questions with the TFLite Task Library's `BertQuestionAnswerer` on raw text.

Run with the Task Library's own Python (`bench/install_task_library.sh` makes
`.venv-tflite-support/`; tflite-support pins protobuf < 4, so no TensorFlow and no project import
here):

    .venv-tflite-support/bin/python bench/task_library_qa.py MODEL.tflite QUESTIONS.json ANSWERS.json

QUESTIONS.json: a list of {"context", "question"}. ANSWERS.json: {"answers": one list per question
of at most 5 {"text", "start", "end", "logit"} (token positions in the model's input, start + end
logit), best first; "seconds": the wall time of each `answer` call}.
"""

import json
import sys
import time

from tflite_support.task import text


def main(model_path, questions_path, answers_path):
    answerer = text.BertQuestionAnswerer.create_from_file(model_path)
    with open(questions_path, encoding="utf-8") as handle:
        questions = json.load(handle)
    answers, seconds = [], []
    for item in questions:
        started = time.perf_counter()
        result = answerer.answer(item["context"], item["question"])
        seconds.append(time.perf_counter() - started)
        answers.append([{"text": answer.text, "start": answer.pos.start, "end": answer.pos.end,
                         "logit": answer.pos.logit} for answer in result.answers])
    with open(answers_path, "w", encoding="utf-8") as handle:
        json.dump({"answers": answers, "seconds": seconds}, handle, ensure_ascii=False)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
