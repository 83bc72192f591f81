"""error_line: the sentence of an exception, for one-line errors."""

import pytest
import tensorflow as tf

from albert_tf.error_text import error_line


def test_a_tf_data_error_loses_the_graph_function_and_op_names(tmp_path):
    not_tfrecord = tmp_path / "notes.txt"
    not_tfrecord.write_text("plain text, not records\n")
    with pytest.raises(tf.errors.DataLossError) as caught:
        next(iter(tf.data.TFRecordDataset(str(not_tfrecord))))
    assert "{{function_node" in caught.value.message or "[Op:" in str(caught.value)  # what is removed
    line = error_line(caught.value)
    assert line.startswith("corrupted record at 0"), line
    assert "{{" not in line and "[Op:" not in line and "\n" not in line


@pytest.mark.parametrize("error, expected", [
    (ValueError("first line\nsecond line"), "first line"),
    (ValueError("  padded  \n"), "padded"),
    (ValueError(""), "ValueError"),
    (OSError(), "OSError"),
    (tf.errors.InvalidArgumentError(None, None, "{{function_node f}} bad id [Op:Gather] name: x"), "bad id"),
    (tf.errors.InvalidArgumentError(None, None, "{{function_node f}} [Op:Gather]"), "InvalidArgumentError"),
])
def test_first_line_or_the_type_name(error, expected):
    assert error_line(error) == expected


def test_long_messages_are_cut():
    assert error_line(ValueError("x" * 1000), limit=40) == "x" * 40


def test_a_library_error_names_its_settings_and_a_script_words_them_as_flags(tmp_path):
    from albert_cli.cli import flag_text
    from albert_tf.glue.examples import read_examples
    from albert_tf.glue.tasks import get_task

    missing = str(tmp_path / "{data_dir}")  # a value that looks like a setting stays as it is
    with pytest.raises(FileNotFoundError) as caught:
        read_examples(get_task("rte"), "dev", data_dir=missing)
    assert str(caught.value).startswith(f"data_dir: {missing}/RTE/dev.tsv does not exist")
    assert flag_text(caught.value).startswith(f"--data_dir: {missing}/RTE/dev.tsv does not exist")
    assert flag_text(ValueError("plain --flag text")) == "plain --flag text"


def test_a_library_check_in_flag_checked_is_a_usage_error_naming_the_flag():
    from albert_cli.cli import UsageError, flag_checked

    with pytest.raises(UsageError, match=r"^--tflite_seq_length: must be at most 512, got 513; shorter$"):
        with flag_checked("tflite_seq_length", "; shorter"):
            raise ValueError("must be at most 512, got 513")
    with pytest.raises(FileNotFoundError):  # only a check's ValueError is the flag's
        with flag_checked("metrics"):
            raise FileNotFoundError("no such file")
