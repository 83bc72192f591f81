"""What the scripts print on stderr: no false warning, TensorFlow's start-up lines at most once,
every progress line on its own line (run_classifier and run_pretraining end to end, and the pieces)."""

import collections
import io
import logging
import os
import re
import subprocess
import sys
import warnings

import keras
import numpy as np
import pytest
import tensorflow as tf

from albert_tf import progress
from albert_tf.training import keras_predict
from albert_tf.progress import Progress
from albert_cli.tensorflow_logs import filter_startup_lines

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# What the issue saw: Keras' and TensorFlow's false or pointless warnings, and the start-up lines.
FALSE_WARNINGS = ("ran out of data", "shuffle=True", "retracing", "unrestored values", "save_counter",
                  "cuInit", "All log messages before absl::InitializeLog", "Sharding callback duration")
# TensorFlow's C++ log lines ("I0000 00:00:<unix time> <thread> file:line] "); absl's Python
# lines carry the date and time instead.
CPP_LOG_LINE = re.compile(r"^[IWEF]0000 00:00:\d+\.\d+ +\d+ [^ \]]+:\d+\] ")
# absl's prefix of a Python log line: severity, date, time, thread, file:line.
ABSL_INFO_LINE = re.compile(r"^I\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ [^ \]]+:\d+\] ")
LOG_PREFIX_ANYWHERE = re.compile(r"[IWEF]\d{4} \d\d:\d\d:\d+\.\d+ +\d+ ")
PROGRESS_LINE = re.compile(r"^[^:]+: \d+(/\d+)? [\w-]+, \d+\.\d [\w-]+/s, (ETA [\d:]+, )?elapsed [\d:]+(, .*)?$")

STARTUP_SAMPLE = """\
WARNING: All log messages before absl::InitializeLog() is called are written to STDERR
I0000 00:00:1795571146.095881   18572 port.cc:153] oneDNN custom operations are on.
I0000 00:00:1795571146.096278   18572 cudart_stub.cc:31] Could not find cuda drivers on your machine, GPU will not be used.
I0000 00:00:1795571146.386684   18572 cpu_feature_guard.cc:227] This TensorFlow binary is optimized to use available CPU instructions.
To enable the following instructions: AVX2 FMA, in other operations, rebuild TensorFlow with the appropriate compiler flags.
/some/module.py:3: UserWarning: a real warning
W0000 00:00:1795571146.5   18572 some_op.cc:1] a C++ warning
E0000 00:00:1795571150.377511   18572 cuda_platform.cc:52] failed call to cuInit: UNKNOWN ERROR (303)
E0000 00:00:1795571150.4   18572 other.cc:9] a real error
"""


def test_startup_lines_follow_the_log_level():
    at_2 = filter_startup_lines(STARTUP_SAMPLE, 2, keep_cuinit_error=False).splitlines()
    assert at_2 == ["/some/module.py:3: UserWarning: a real warning",
                    "E0000 00:00:1795571150.4   18572 other.cc:9] a real error"]
    at_1 = filter_startup_lines(STARTUP_SAMPLE, 1, keep_cuinit_error=True).splitlines()
    assert [line.split("] ")[-1] for line in at_1] == [
        "/some/module.py:3: UserWarning: a real warning", "a C++ warning",
        "failed call to cuInit: UNKNOWN ERROR (303)", "a real error"]


class FakeTerminal(io.StringIO):
    def isatty(self):
        return True


def test_a_log_record_or_another_progress_line_ends_an_open_progress_line():
    stream = FakeTerminal()
    handler = logging.StreamHandler(stream)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        training = Progress("training", total=4, interval=0.0, stream=stream)
        training.update()
        logging.getLogger("test").warning("a log record")
        training.update()
        evaluation = Progress("evaluating", total=1, interval=0.0, stream=stream)
        evaluation.update()
        evaluation.close()
        training.update()
        training.close()
    finally:
        root.removeHandler(handler)
        handler.removeFilter(progress._END_OPEN_LINE)
    lines = [line.split("\r")[-1] for line in stream.getvalue().split("\n")]
    assert lines[1] == "a log record"
    assert lines[0].startswith("training: 1/4") and lines[2].startswith("training: 2/4")
    assert lines[3].startswith("evaluating: 1/1") and lines[4].startswith("training: 3/4")
    assert lines[5] == ""  # the last line ended once, no blank line
    assert len(lines) == 6


def tiny_model():
    inputs = keras.Input((None,), dtype="int32")
    outputs = keras.layers.GlobalAveragePooling1D()(keras.layers.Embedding(10, 2)(inputs))
    return keras.Model(inputs, outputs)


def test_predict_on_a_dataset_of_unknown_length_warns_nothing_and_shows_progress(capsys):
    rows = tf.data.Dataset.range(10).filter(lambda x: x < 7)  # cardinality unknown
    dataset = rows.map(lambda x: tf.fill([3], tf.cast(x, tf.int32))).batch(2)
    assert int(dataset.cardinality()) == tf.data.UNKNOWN_CARDINALITY
    assert keras_predict.num_batches(dataset) == 4
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        outputs = keras_predict.predict(tiny_model(), dataset, "scoring")
    assert outputs.shape == (7, 2)
    assert not [str(warning.message) for warning in caught]
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.startswith("scoring: 4/4 batches") and PROGRESS_LINE.match(last)


def test_evaluating_and_predicting_a_classifier_again_and_again_traces_its_predict_function_once():
    """`--do_eval --do_predict` asked for `logits_model(classifier)` each time: a new Keras model, a
    new predict function traced again; and Keras traced it per batch shape (batches padded to their
    longest row, a short last batch) until it relaxed them: TensorFlow's "triggered tf.function
    retracing" warnings. The tracing count is read from the function itself: TensorFlow's warning
    counts calls of every model's predict step in the process, so it depends on what ran before."""
    from albert_tf import AlbertClassifier
    from albert_tf.glue import training
    from model_test_data import tiny

    classifier = AlbertClassifier(tiny(num_hidden_layers=1, vocab_size=50), num_labels=2)
    lengths = tf.data.Dataset.from_tensor_slices([3, 8, 5, 2, 16, 4, 7, 1, 6, 9])

    def row(length):
        ids = tf.ones([length], tf.int32)
        return {"input_word_ids": ids, "input_mask": ids, "input_type_ids": tf.zeros_like(ids)}, 0

    dataset = lengths.map(row).padded_batch(4)  # batches of 4 rows padded to 8 and 16, a last of 2 padded to 9
    assert [tuple(features["input_word_ids"].shape) for features, _ in dataset] == [(4, 8), (4, 16), (2, 9)]
    functions = []
    for _ in range(4):
        model = training.logits_model(classifier)
        training.predict_logits(model, dataset)
        functions.append(model.predict_function)
    assert all(function is functions[0] for function in functions)
    assert functions[0].experimental_get_tracing_count() == 1


def test_an_infinite_dataset_is_refused():
    with pytest.raises(ValueError, match="infinite"):
        keras_predict.num_batches(tf.data.Dataset.range(3).repeat())


def check_stderr(stderr):
    """No false warning, no C++ INFO/WARNING line, none twice, every progress line whole."""
    lines = stderr.splitlines()
    assert not [phrase for phrase in FALSE_WARNINGS if phrase in stderr], stderr
    cpp_lines = [CPP_LOG_LINE.sub("", line) for line in lines if CPP_LOG_LINE.match(line)]
    assert not [line for line in lines if CPP_LOG_LINE.match(line) and line[0] in "IW"], stderr
    assert not [line for line, count in collections.Counter(cpp_lines).items() if count > 1], stderr
    assert not [line for line in lines if ABSL_INFO_LINE.match(line)], stderr
    progress_lines = [line for line in lines if "elapsed " in line]
    assert progress_lines, stderr
    for line in progress_lines:
        assert PROGRESS_LINE.match(line) and not LOG_PREFIX_ANYWHERE.search(line), line


def test_a_scripts_info_log_lines_are_plain_and_its_warnings_keep_their_prefix():
    code = ("from absl import logging\nfrom albert_cli.cli import run_main\n"
            "run_main(lambda argv: logging.info('--kernels=auto: using the %r kernel set', 'cpu') or "
            "logging.warning('a warning'))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stderr.splitlines()[0] == "--kernels=auto: using the 'cpu' kernel set", result.stderr
    assert re.match(r"^W\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ <string>:\d+\] a warning$", result.stderr.splitlines()[1])


def test_convert_hides_tensorflows_startup_lines(tmp_path):
    """It printed oneDNN's, the CPU instructions' and `failed call to cuInit` lines, as the run_* scripts did not."""
    (tmp_path / "not_a_checkpoint").mkdir()
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    result = subprocess.run([sys.executable, "-m", "albert_cli.convert", f"--from={tmp_path / 'not_a_checkpoint'}",
                             f"--to={tmp_path / 'out'}", "--format=hf"], capture_output=True, text=True, env=env,
                            cwd=REPO, timeout=600)
    assert result.returncode == 2 and result.stderr.startswith("error: --from"), result.stderr  # TensorFlow loaded
    assert not [line for line in result.stderr.splitlines() if CPP_LOG_LINE.match(line) and line[0] in "IW"], \
        result.stderr
    assert "cuInit" not in result.stderr and "absl::InitializeLog" not in result.stderr, result.stderr


def test_tokenizing_and_packing_in_a_plain_process_print_no_onednn_error():
    """The README's text layers logged `E0000 ... oneDNN supports DT_INT64 only on platforms with
    AVX-512` (ragged tf.concat(axis=1) transposes int64 row indices) in any process that runs them."""
    code = ("from albert_tf.text.preprocessing import AlbertInputPacker, AlbertTextTokenizer\n"
            "tokenize = AlbertTextTokenizer('data/albert_spm/30k-clean.model')\n"
            "pack = AlbertInputPacker(seq_length=32, cls_id=tokenize.cls_id, sep_id=tokenize.sep_id, pad_id=tokenize.pad_id)\n"
            "ids = tokenize(['The cat sat on the mat.', 'It cost 1,000,000 dollars.'])\n"
            "print(pack([ids, ids])['input_word_ids'].shape)\n")
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO, timeout=300)
    assert result.returncode == 0 and result.stdout == "(2, 32)\n", result.stderr
    assert "oneDNN supports" not in result.stderr, result.stderr


def run_script(script, *args):
    env = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    return subprocess.run([sys.executable, os.path.join(REPO, script), *args], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=900)


@pytest.mark.slow
def test_run_classifier_and_its_rerun_print_no_false_warning(tmp_path):
    flags = ("--do_train", "--do_eval", "--do_predict", "--train_step=2", "--save_checkpoints_steps=1", "--max_seq_length=32",
             "--train_batch_size=4", "--eval_batch_size=64", f"--output_dir={tmp_path}")
    first = run_script("run_classifier.py", *flags)
    assert first.returncode == 0, first.stderr
    check_stderr(first.stderr)
    assert "evaluating SST-2 dev: 14/14 batches" in first.stderr
    rerun = run_script("run_classifier.py", *flags)  # resumes the finished run: evaluates only
    assert rerun.returncode == 0, rerun.stderr
    check_stderr(rerun.stderr)


@pytest.mark.slow
def test_run_pretraining_prints_no_false_warning(tmp_path):
    result = run_script("run_pretraining.py", f"--output_dir={tmp_path}", "--bundled_dupe_factor=1",
                        "--num_train_steps=2", "--num_warmup_steps=1", "--iterations_per_loop=1",
                        "--save_checkpoints_steps=2", "--max_eval_steps=1", "--train_batch_size=8",
                        "--eval_batch_size=8")
    assert result.returncode == 0, result.stderr
    check_stderr(result.stderr)
    assert re.search(r"^create_pretraining_data: \d+/\d+ passes", result.stderr, re.M), result.stderr
