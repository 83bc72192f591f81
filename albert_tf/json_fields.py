"""Reading task files of JSON (SQuAD, RACE) with errors that name the file, the record and the field.

A field of the wrong JSON type (`"is_impossible": "false"`, `"options": "ABCD"`, a null
question) would otherwise be read as something else or fail deep inside with a traceback.
"""

import json

import tensorflow as tf

from albert_tf.io_utils import special_file_kind

_EXPECTED = {list: "a list", str: "a string", int: "an integer", bool: "true or false"}
_REQUIRED = object()


def read_utf8(path, what):
    """The text of the file `path` (a `what`), or a ValueError naming it: a directory, not UTF-8."""
    if tf.io.gfile.isdir(path):
        raise ValueError(f"{path}: is a directory, expected a {what} file")
    kind = special_file_kind(path)
    if kind:
        raise ValueError(f"{path}: is {kind}, not a regular file; expected a {what} file")
    with tf.io.gfile.GFile(path, "rb") as handle:
        raw = handle.read()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{path}: not UTF-8 text (byte {error.start}); {what} files are UTF-8 JSON") from None


def json_object(value, where):
    """`value`, a JSON object (dict), or a ValueError naming `where`."""
    if not isinstance(value, dict):
        raise ValueError(f"{where} is {json_type(value)}, expected an object")
    return value


def json_field(record, name, value_type, where, default=_REQUIRED, expected=None):
    """`record[name]`, checked to be a `value_type` (`default` when absent; required without one);
    `expected` words the type in the error (default: the JSON type's name)."""
    if name not in record:
        if default is _REQUIRED:
            raise ValueError(f"{where} lacks the field {name!r}")
        return default
    value = record[name]
    if not isinstance(value, value_type) or (isinstance(value, bool) and value_type is not bool):
        raise ValueError(f"{where}: field {name!r} is {json_type(value)}, expected {expected or _EXPECTED[value_type]}")
    return value


def json_strings(values, where, name):
    """`values` (a field's list), checked to hold only strings."""
    for value in values:
        if not isinstance(value, str):
            raise ValueError(f"{where}: field {name!r} holds {json_type(value)}, expected a list of strings")
    return values


def json_type(value):
    """How `value` reads in JSON: null, true, a string "...", a number 3.5, a list, an object."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, str):
        return f"a string {json.dumps(value)[:40]}"
    if isinstance(value, (int, float)):
        return f"a number {value}"
    return "a list" if isinstance(value, list) else "an object"
