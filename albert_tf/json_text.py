"""JSON text as every reader of the project parses it.

Python's `json` accepts two inputs that fail later, far from the file: lists or objects nested
deeper than its parser recurses (a RecursionError, not a ValueError), and a lone UTF-16 surrogate
escape (`"\\ud800"`), which becomes a string no UTF-8 file, tokenizer or TensorFlow tensor can hold.
Here both are ValueErrors like any other text that is not JSON, raised at the reading, so that each
reader's one-line error naming its file covers them. Standard library only: bench/task_library_qa.py
parses with it in the Task Library's own environment.
"""

import json


def parse_json(text):
    """The value of the JSON `text` (str, or UTF-8 bytes); a ValueError saying why it is not one
    (json.JSONDecodeError for malformed text), its message naming no file: the caller's does."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise ValueError("lists or objects nested deeper than a JSON reader follows") from None
    surrogate = _lone_surrogate(value)
    if surrogate is not None:
        raise ValueError(f"a string holds the escape \\u{ord(surrogate):04x}, half of a UTF-16 pair alone: "
                         "not a character")
    return value


def _lone_surrogate(value):
    """The first unpaired surrogate in a string (key or value) of the parsed `value`, or None; a
    walk with a stack of its own, as deep as the parse was."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError as error:
                    return item[error.start]
        elif isinstance(item, dict):
            pending.extend(item)
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return None
