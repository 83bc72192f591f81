"""Answers questions with the TFLite Task Library's `BertQuestionAnswerer` on raw text.

Run with the Task Library's own Python (`bench/install_task_library.sh` makes
`.venv-tflite-support/`; tflite-support pins protobuf < 4, so no TensorFlow here, and of the project
only `albert_tf.json_text`, which is standard library alone):

    .venv-tflite-support/bin/python bench/task_library_qa.py MODEL.tflite QUESTIONS.json ANSWERS.json

QUESTIONS.json: a list of {"context", "question"}. ANSWERS.json: {"answers": one list per question
of at most 5 {"text", "start", "end", "logit"} (token positions in the model's input, start + end
logit), best first; "seconds": the wall time of each `answer` call}. Bad input is one line on
stderr and exit status 2, checked before the model is loaded; ANSWERS.json appears only whole.
"""

import contextlib
import json
import os
import sys
import tempfile
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from albert_tf.json_text import parse_json  # noqa: E402


class BadInput(Exception):
    """One line for the user: `status` 2 for input to fix (bench/task_library_squad.py also says 1
    when the Task Library's process failed otherwise)."""

    def __init__(self, message, status=2):
        super().__init__(message)
        self.status = status


def load_json(path):
    """The JSON value in the file `path`; BadInput naming it if it cannot be read or parsed
    (bench/task_library_squad.py reads its files with it too)."""
    if os.path.exists(path) and not os.path.isfile(path):
        raise BadInput(f"{path} is not a regular file (a directory, FIFO, socket or device), expected a JSON file")
    try:
        with open(path, encoding="utf-8") as handle:
            return parse_json(handle.read())
    except OSError as error:
        raise BadInput(f"cannot read {path} ({error.strerror or error})") from None
    except UnicodeDecodeError:
        raise BadInput(f"{path} is not UTF-8 text") from None
    except ValueError as error:
        raise BadInput(f"{path} is not JSON ({error})") from None


def read_questions(path):
    """The questions file, checked item by item: a list of objects with string "context" and "question"."""
    try:
        questions = load_json(path)
    except BadInput as error:
        raise BadInput(f"the questions: {error}") from None
    if not isinstance(questions, list):
        raise BadInput(f"{path}: expected a list of {{\"context\", \"question\"}} objects, got {type(questions).__name__}")
    for index, item in enumerate(questions):
        if not isinstance(item, dict):
            raise BadInput(f"{path}: item {index}: expected an object with \"context\" and \"question\", "
                           f"got {type(item).__name__}")
        for field in ("context", "question"):
            if not isinstance(item.get(field), str):
                got = "nothing" if field not in item else type(item[field]).__name__
                raise BadInput(f"{path}: item {index}: \"{field}\" must be a string, got {got}")
    return questions


def check_model_file(path):
    """A readable regular file: what the Task Library says of anything else is a crash, a vague errno
    or, for a FIFO, a wait for ever."""
    if os.path.isdir(path):
        raise BadInput(f"{path}: the model is a directory, not a .tflite file")
    if os.path.exists(path) and not os.path.isfile(path):
        raise BadInput(f"{path}: the model is not a regular file (a FIFO, socket or device), expected a .tflite file")
    try:
        with open(path, "rb"):
            pass
    except OSError as error:
        raise BadInput(f"{path}: cannot read the model ({error.strerror or error})") from None


def same_file(first, second):
    """Whether two paths name one file (by link, symlink or hard link)."""
    if os.path.realpath(first) == os.path.realpath(second):
        return True
    try:
        return os.path.samefile(first, second)
    except OSError:
        return False


def open_output(answers_path, inputs):
    """A new hidden sibling of `answers_path`, open for writing: proves the directory writable
    before any work; renamed into place only once written (`finish_output`)."""
    for source in inputs:
        if same_file(answers_path, source):
            raise BadInput(f"{answers_path}: the output is also an input ({source}); refusing to overwrite it")
    if os.path.isdir(answers_path):
        raise BadInput(f"{answers_path}: the output is a directory, not a file")
    directory, base = os.path.split(answers_path)
    tmp = os.path.join(directory, f".{base}.tmp-{uuid.uuid4().hex[:8]}")
    try:
        return tmp, open(tmp, "x", encoding="utf-8")
    except OSError as error:
        raise BadInput(f"{answers_path}: cannot write the answers ({error.strerror or error})") from None


@contextlib.contextmanager
def native_stderr_dropped():
    """Holds back what the Task Library's C++ writes to stderr (it prints its error as well as raising it)."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def import_task_library():
    """tflite-support's `task.text`, or BadInput naming the Python that lacks it and the one to use."""
    try:
        from tflite_support.task import text  # the Task Library's own environment only
    except ModuleNotFoundError as error:
        if not (error.name or "").startswith("tflite_support"):
            raise
        raise BadInput(f"{sys.executable} has no tflite-support: run this script with .venv-tflite-support/bin/python "
                       "(`bash bench/install_task_library.sh` makes it)") from None
    return text


def load_answerer(text, model_path):
    """The Task Library's answerer; a file it cannot serve is BadInput naming it. The Task Library
    loads any LiteRT model with its metadata (a classifier, an embedder) and fails only at the first
    question ("Bad StatusOr access"): a question answerer's two outputs are checked here."""
    try:
        with native_stderr_dropped():
            answerer = text.BertQuestionAnswerer.create_from_file(model_path)
    except (ValueError, RuntimeError) as error:
        reason = " ".join(str(error).split())
        raise BadInput(f"{model_path}: not a Task Library BertQuestionAnswerer model ({reason}); "
                       "export one with run_squad.py --export_tflite") from None
    from tflite_support import schema_py_generated as schema  # the LiteRT flatbuffer's schema

    with open(model_path, "rb") as handle:
        graph = schema.Model.GetRootAsModel(handle.read(), 0).Subgraphs(0)
    shapes = [graph.Tensors(graph.Outputs(index)).ShapeAsNumpy().tolist() for index in range(graph.OutputsLength())]
    if len(shapes) != 2:
        raise BadInput(f"{model_path}: not a Task Library BertQuestionAnswerer model: its outputs have the shapes "
                       f"{shapes} (a classifier or an embedder?), a question answerer's are two, the start and end "
                       "logits; export one with run_squad.py --export_tflite")
    return answerer


def answer_all(answerer, questions):
    """The answers and each call's wall time: the bench's latency is the Task Library's alone."""
    answers, seconds = [], []
    for item in questions:
        started = time.perf_counter()
        result = answerer.answer(item["context"], item["question"])
        seconds.append(time.perf_counter() - started)
        answers.append([{"text": answer.text, "start": answer.pos.start, "end": answer.pos.end,
                         "logit": answer.pos.logit} for answer in result.answers])
    return {"answers": answers, "seconds": seconds}


def main(model_path, questions_path, answers_path):
    text = import_task_library()
    check_model_file(model_path)
    questions = read_questions(questions_path)
    tmp, handle = open_output(answers_path, [model_path, questions_path])
    try:
        with handle:
            json.dump(answer_all(load_answerer(text, model_path), questions), handle, ensure_ascii=False)
        os.replace(tmp, answers_path)
    finally:
        if os.path.lexists(tmp):
            os.remove(tmp)


if __name__ == "__main__":
    try:
        if len(sys.argv) != 4:
            raise BadInput(f"expected MODEL.tflite QUESTIONS.json ANSWERS.json, got {len(sys.argv) - 1} arguments")
        main(*sys.argv[1:])
    except BadInput as error:
        print(f"error: {error}", file=sys.stderr)
        sys.exit(error.status)
