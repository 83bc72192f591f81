"""A user's own labelled file (CSV, TSV or JSON Lines) -> rows of {column: value}, each with its line.

CSV and TSV are read with the standard library's `csv` (quoting, embedded newlines, a header
row naming the columns): the dialects are the two fixed ones, never sniffed, so a file is read
the same whatever its first rows look like. JSON Lines is one JSON object per line. Text is
UTF-8; a UTF-8 byte-order mark (what spreadsheet programs write) is skipped. Everything else that
would be read wrongly is a ValueError naming the file, the line and the column: bytes that are not
UTF-8, a UTF-16 or UTF-32 file (another byte-order mark), a row with another number of fields
than the header (often another delimiter: mixed delimiters), a missing column.
"""

import codecs
import csv
import io
import json
import os

import tensorflow as tf

from albert_tf.choices import TABLE_FILE_FORMATS
_EXTENSIONS = {".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl"}
_DELIMITERS = {"csv": ",", "tsv": "\t"}
_OTHER_BOMS = {codecs.BOM_UTF32_LE: "UTF-32", codecs.BOM_UTF32_BE: "UTF-32", codecs.BOM_UTF16_LE: "UTF-16",
               codecs.BOM_UTF16_BE: "UTF-16"}


def file_format(path, given=None):
    """`given` (one of TABLE_FILE_FORMATS), else the format its extension names; ValueError if neither."""
    if given:
        if given not in TABLE_FILE_FORMATS:
            raise ValueError(f"file format must be one of {list(TABLE_FILE_FORMATS)}, got {given!r}")
        return given
    extension = os.path.splitext(path)[1].lower()
    if extension not in _EXTENSIONS:
        raise ValueError(f"{path}: cannot tell the format from the extension {extension!r}; expected one of "
                         f"{sorted(_EXTENSIONS)} or a file format ({', '.join(TABLE_FILE_FORMATS)})")
    return _EXTENSIONS[extension]


def read_rows(path, columns, fmt=None):
    """[(line number, {column: value})] of the file at `path`; `columns`: the names each row must
    have (the others are ignored). Values are strings (CSV, TSV) or JSON values (JSON Lines)."""
    fmt = file_format(path, fmt)
    if not tf.io.gfile.exists(path):
        raise FileNotFoundError(f"{path} does not exist")
    if tf.io.gfile.isdir(path):
        raise ValueError(f"{path} is a directory; expected a {fmt.upper()} file")
    with tf.io.gfile.GFile(path, "rb") as handle:
        text = _utf8_text(path, handle.read())
    return _json_lines(path, text, columns) if fmt == "jsonl" else _delimited(path, text, fmt, columns)


def _missing(path, line, columns, found, where):
    missing = [column for column in columns if column not in found]
    if missing:
        names = ", ".join(repr(name) for name in found) or "none"
        raise ValueError(f"{path}:{line}: no column {missing[0]!r} in {where} (columns: {names})")


def _utf8_text(path, data):
    for bom, encoding in _OTHER_BOMS.items():
        if data.startswith(bom):
            raise ValueError(f"{path}:1:1: a {encoding} byte-order mark: the file is {encoding} text; save it as "
                             "UTF-8")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        raise ValueError(f"{path}:{line}:{column}: not UTF-8 text (byte 0x{data[error.start]:02x}); save the file "
                         "as UTF-8") from None


def _delimited(path, text, fmt, columns):
    delimiter = _DELIMITERS[fmt]
    other, other_name = ("\t", "tabs") if fmt == "csv" else (",", "commas")
    csv.field_size_limit(max(csv.field_size_limit(), len(text)))  # a field of any length (the tokenizer truncates)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    try:
        header = next(reader, None)
        if header is None:
            raise ValueError(f"{path}:1: empty file; expected a header row naming the columns")
        header = [name.strip() for name in header]
        _missing(path, 1, columns, header, "the header")
        rows, line = [], reader.line_num + 1
        for fields in reader:
            if fields:  # a blank line is no row
                if len(fields) != len(header):
                    hint = (f"; mixed delimiters? this row has {other_name}, a .{fmt} file is separated by "
                            f"{'commas' if fmt == 'csv' else 'tabs'}" if any(other in field for field in fields)
                            else "")
                    raise ValueError(f"{path}:{line}: {len(fields)} field(s), the header has {len(header)}{hint}")
                rows.append((line, dict(zip(header, fields))))
            line = reader.line_num + 1
    except csv.Error as error:
        raise ValueError(f"{path}:{reader.line_num}: not {fmt.upper()} ({error})") from None
    return rows


def _json_lines(path, text, columns):
    rows = []
    for line, content in enumerate(text.splitlines(), start=1):
        if not content.strip():
            continue
        try:
            row = json.loads(content)
        except json.JSONDecodeError as error:
            raise ValueError(f"{path}:{line}:{error.colno}: not JSON ({error.msg}); JSON Lines is one object a "
                             "line") from None
        if not isinstance(row, dict):
            raise ValueError(f"{path}:{line}:1: a JSON {type(row).__name__}, expected an object of "
                             "{column: value}")
        _missing(path, line, columns, row, "the object")
        rows.append((line, row))
    return rows
