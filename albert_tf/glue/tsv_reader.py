"""GLUE TSV files (the layout GLUE's download script makes) -> `GlueExample`s, as the original read them.

Text is UTF-8: a file that is not is an error naming its first line that is not. Bad rows are
errors naming the file and line, except where the original skipped them (QQP rows
with missing columns): those are counted and reported. Rows the original read without a word
(an extra column before STS-B's score, a score outside 0-5) are read as it did, with a warning
naming the file and lines.
"""

import csv
import io
import math
import os

import tensorflow as tf
from absl import logging

from albert_tf.error_text import SettingError, SettingFileNotFound
from albert_tf.glue.example_types import ExampleSet, GlueExample
from albert_tf.io_utils import special_file_kind


def split_path(task, split, data_dir):
    return os.path.join(data_dir, task.directory, task.tsv_file(split))


def read_tsv_split(task, split, data_dir):
    """Reads `split` ("train", "dev", "test", or MNLI's "dev_mismatched"/"test_mismatched")."""
    if not data_dir:
        raise SettingError("{data_dir}: no GLUE directory given (or set {tfds_data_dir} to read TFDS)")
    path = split_path(task, split, data_dir)
    if not tf.io.gfile.exists(path):
        raise SettingFileNotFound("{data_dir}: {path} does not exist (expected the GLUE layout "
                                  "<data_dir>/{directory}/{file})", path=path, directory=task.directory,
                                  file=task.tsv_file(split))
    if tf.io.gfile.isdir(path):
        raise SettingError("{data_dir}: {path} is a directory; expected a GLUE TSV file there", path=path)
    kind = special_file_kind(path)
    if kind:
        raise SettingError("{data_dir}: {path} is {kind}, not a regular file; expected a GLUE TSV file there",
                           path=path, kind=kind)
    columns = task.test_columns if split.startswith("test") else task.train_columns
    with tf.io.gfile.GFile(path, "rb") as handle:
        text = _utf8_text(path, handle.read())
    # A sentence is a sentence however long (the tokenizer truncates it): no field is refused
    # for its size (csv's default limit is 128 KiB); none can be longer than the file.
    csv.field_size_limit(max(csv.field_size_limit(), len(text)))
    rows = csv.reader(io.StringIO(text, newline=""), delimiter="\t", quoting=csv.QUOTE_NONE)
    examples, skipped, header_width, odd_width, out_of_range = [], 0, None, [], []
    for line_number, row in enumerate(rows, start=1):
        if columns.has_header and line_number == 1:
            header_width = len(row)
            continue
        try:
            examples.append(_example(task, split, columns, row, line_number))
        except _MalformedRow as error:
            if task.skip_malformed_rows:
                skipped += 1
                continue
            raise ValueError(f"{path}:{line_number}: {error}") from None
        if columns.label is not None and columns.label < 0 and header_width not in (None, len(row)):
            odd_width.append(line_number)
        if task.score_range and columns.label is not None and not (
                task.score_range[0] <= examples[-1].label <= task.score_range[1]):
            out_of_range.append(line_number)
    _warn_about_lines(path, odd_width, f"a column count other than the header's {header_width}; the label is "
                                       "read from the last column, as the original does")
    if task.score_range:
        _warn_about_lines(path, out_of_range, f"a score outside {task.score_range[0]:g}-{task.score_range[1]:g}, "
                                              "used as it is, as the original does")
    if skipped:
        logging.warning(
            "%s: skipped %d malformed row(s) with missing columns, as the original does for %s",
            path, skipped, task.name,
        )
    return ExampleSet(examples, path, skipped)


def _utf8_text(path, data):
    """`data` decoded; GLUE's files are UTF-8 (as the original read them: strictly), so bytes that
    are not are a ValueError naming the first such line and the count, not U+FFFD trained on."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        bad = [number for number, line in enumerate(data.split(b"\n"), start=1) if not _is_utf8(line)]
        raise ValueError(f"{path}:{bad[0]}: not UTF-8 text ({len(bad)} line(s) of the file are not); GLUE TSV "
                         "files must be UTF-8: re-encode the file") from None


def _is_utf8(line):
    try:
        line.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def _warn_about_lines(path, line_numbers, what):
    """One warning naming `path` and the first of `line_numbers` (rows with `what`), if any."""
    if line_numbers:
        shown = ", ".join(str(number) for number in line_numbers[:5]) + (", ..." if len(line_numbers) > 5 else "")
        logging.warning("%s:%d: %d row(s) with %s (lines %s)", path, line_numbers[0], len(line_numbers), what, shown)


class _MalformedRow(Exception):
    """A row without the task's columns (skipped where the original skipped it, else an error)."""


def _example(task, split, columns, row, line_number):
    needed = [c for c in (columns.text_a, columns.text_b, columns.label, columns.index) if c is not None]
    width = max(c if c >= 0 else -c - 1 for c in needed) + 1
    if len(row) < width:
        raise _MalformedRow(f"expected at least {width} tab-separated columns, got {len(row)}")
    guid = row[columns.index] if columns.index is not None else f"{split}-{line_number}"
    text_b = row[columns.text_b] if columns.text_b is not None else None
    label = None
    if columns.label is not None:
        label = _parse_label(task, row[columns.label].strip())
    return GlueExample(guid, row[columns.text_a], text_b, label)


def _parse_label(task, value):
    if task.is_regression:
        try:
            score = float(value)
        except ValueError:
            raise _MalformedRow(f"expected a numeric score, got {value!r}") from None
        if not math.isfinite(score):
            raise _MalformedRow(f"expected a finite score, got {value!r}")
        return score
    if value not in task.labels:
        raise _MalformedRow(f"expected a label in {list(task.labels)}, got {value!r}")
    return value
