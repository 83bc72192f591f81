"""The inputs of bench/task_library_squad.py, each checked before the Task Library runs: a bad one
is `BadInput`, one line naming the flag, file and field (exit status 2), not a traceback after
the work."""

import os
import tempfile
import zipfile

from albert_tf.io_utils import refuse_overwriting_inputs
from albert_tf.text.tokenization import AlbertTokenizer
from bench.task_library_qa import BadInput, load_json

_REQUIRED = object()


def _read_json(flag, path):
    try:
        return load_json(path)
    except BadInput as error:
        raise BadInput(f"{flag}: {error}") from None


def read_questions(squad_file):
    """[{id, context, question, answers (gold texts), is_impossible}] of a SQuAD file, each field
    checked (a bad one is named by its place, e.g. data[0].paragraphs[2].qas[1].question)."""
    kinds = {list: "a list", str: "a string", bool: "true or false"}

    def field(item, where, key, kind, default=_REQUIRED):
        if not isinstance(item, dict):
            raise BadInput(f"--squad_file {squad_file}: {where or 'the top level'} must be an object, "
                           f"got {type(item).__name__}")
        if key not in item and default is not _REQUIRED:
            return default
        if not isinstance(item.get(key), kind):
            got = type(item[key]).__name__ if key in item else "nothing"
            raise BadInput(f"--squad_file {squad_file}: {where + '.' if where else ''}{key} must be {kinds[kind]}, "
                           f"got {got}")
        return item[key]

    questions, first_place = [], {}
    for a, article in enumerate(field(_read_json("--squad_file", squad_file), "", "data", list)):
        for p, paragraph in enumerate(field(article, f"data[{a}]", "paragraphs", list)):
            where = f"data[{a}].paragraphs[{p}]"
            context = field(paragraph, where, "context", str)
            for q, qa in enumerate(field(paragraph, where, "qas", list)):
                at = f"{where}.qas[{q}]"
                answers = [field(answer, f"{at}.answers[{n}]", "text", str)
                           for n, answer in enumerate(field(qa, at, "answers", list, []))]
                impossible = field(qa, at, "is_impossible", bool, False)
                if not impossible and not answers:  # nothing to score the answer against
                    raise BadInput(f"--squad_file {squad_file}: {at} is answerable (no is_impossible true) but "
                                   "has no answers")
                question_id = field(qa, at, "id", str)
                if question_id in first_place:  # the predictions, keyed by id, would answer one of the two
                    raise BadInput(f"--squad_file {squad_file}: {at}.id {question_id!r} is also the id of "
                                   f"{first_place[question_id]}; question ids must be unique")
                first_place[question_id] = at
                questions.append({"id": question_id, "context": context,
                                  "question": field(qa, at, "question", str), "answers": answers,
                                  "is_impossible": impossible})
    if all(q["is_impossible"] for q in questions):
        raise BadInput(f"--squad_file {squad_file}: no answerable question to compare answers on "
                       f"({len(questions)} questions, all is_impossible)")
    return questions


def read_predictions(path, questions):
    """run_squad.py's {id: answer text}, which must answer every answerable question of `questions`."""
    predictions = _read_json("--predictions", path)
    if not isinstance(predictions, dict):
        raise BadInput(f"--predictions {path}: expected an object of question id -> answer text (run_squad.py's "
                       f"predictions.json), got {type(predictions).__name__}")
    answerable = [q["id"] for q in questions if not q["is_impossible"]]
    missing = [qid for qid in answerable if qid not in predictions]
    if missing:
        raise BadInput(f"--predictions {path}: no answer to {len(missing)} of the {len(answerable)} answerable "
                       f"questions of --squad_file (the first: {missing[0]!r}); predict on the same file")
    for qid in answerable:
        if not isinstance(predictions[qid], str):
            raise BadInput(f"--predictions {path}: the answer to {qid!r} must be a string, "
                           f"got {type(predictions[qid]).__name__}")
    return predictions


def tflite_sentencepiece(path):
    """(name, bytes) of the SentencePiece model the Task Library tokenizes with: the one `.model`
    file of the zip archive appended to the `.tflite` (the file its metadata names; ALBERT's
    normalization is folded in, so our tokenizer splits with it as with the model it came from)."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = [name for name in archive.namelist() if name.endswith(".model")]
            if len(names) == 1:
                return names[0], archive.read(names[0])
    except FileNotFoundError:
        raise BadInput(f"--tflite_dir: {path}: no such file (run_squad.py --export_tflite writes it)") from None
    except OSError as error:
        raise BadInput(f"--tflite_dir: cannot read {path} ({error.strerror or error})") from None
    except (zipfile.BadZipFile, EOFError):
        names = []
    raise BadInput(f"--tflite_dir: {path} holds {len(names)} SentencePiece models (.model files in the archive "
                   "after the model), expected one; export it with run_squad.py --export_tflite")


def tflite_tokenizer(paths):
    """Our tokenizer on the SentencePiece model inside the `.tflite` files (all must hold the same)."""
    models = {path: tflite_sentencepiece(path) for path in paths}
    (first, (name, content)), *others = models.items()
    for path, (_, other) in others:
        if other != content:
            raise BadInput(f"--tflite_dir: {first} and {path} hold different SentencePiece models; "
                           "give the files of one export")
    with tempfile.TemporaryDirectory() as directory:
        spm_model_file = os.path.join(directory, os.path.basename(name))
        with open(spm_model_file, "wb") as handle:
            handle.write(content)
        try:
            return AlbertTokenizer(spm_model_file)
        except ValueError as error:
            reason = str(error).replace(repr(spm_model_file), name)
            raise BadInput(f"--tflite_dir: {first}: its SentencePiece model does not load ({reason})") from None


def check_output(json_path, inputs):
    """`--json` names a new or replaceable file, none of `inputs` ((flag, path) pairs), in a directory
    this process can write: found before the work, not after it."""
    try:
        refuse_overwriting_inputs([("--json", json_path)], inputs)
    except ValueError as error:
        raise BadInput(str(error)) from None
    if os.path.isdir(json_path):
        raise BadInput(f"--json: {json_path} is a directory, not a file")
    try:
        with tempfile.TemporaryFile(dir=os.path.dirname(os.path.abspath(json_path)), prefix=".write-probe-"):
            pass
    except OSError as error:
        raise BadInput(f"--json: cannot write to {json_path} ({error.strerror or error})") from None
