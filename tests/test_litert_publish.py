"""LiteRT files are published as a set, and what an export killed at any moment left is removed by
the next one (issue 60 item 2); the library's exports check what the commands check (item 7)."""

import os
import signal
import subprocess
import sys

import pytest

from squad_test_data import SPM_MODEL, TINY_CONFIG

# A child process publishes the classifier's two files (a fake conversion: these bytes) and kills
# itself with SIGKILL at one moment of the publishing.
_KILLED_EXPORT = """
import errno, os, signal, sys
from albert_tf import io_utils
from albert_tf.serving.litert import publish

directory, moment = sys.argv[1:]
publish.mediapipe_classifier = lambda classifier, spm, labels, length, quantization: quantization.encode() * 1000
die = lambda *args: os.kill(os.getpid(), signal.SIGKILL)
if moment == "before publishing":
    io_utils._rename_all = die
elif moment == "between the publishes":
    place = io_utils._place_new
    placed = []
    def place_one_then_die(source, destination):
        if placed:
            die()
        place(source, destination)
        placed.append(destination)
    io_utils._place_new = place_one_then_die
else:  # without hard links: killed once the name is reserved, before the file is moved onto it
    def no_hard_links(source, destination):
        raise OSError(errno.EPERM, "Operation not permitted")
    io_utils.os.link = no_hard_links
    io_utils.os.replace = die
publish.export_tflite(None, directory, "unused.model", ["0", "1"])
"""


def _fake_conversion(classifier, spm, labels, length, quantization):
    return quantization.encode() * 1000


@pytest.mark.parametrize("moment", ["before publishing", "between the publishes", "in a reserved name"])
def test_an_export_killed_while_publishing_leaves_nothing_that_blocks_the_next(tmp_path, monkeypatch, moment):
    from albert_tf.serving.litert import publish

    killed = subprocess.run([sys.executable, "-c", _KILLED_EXPORT, str(tmp_path), moment],
                            env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"), capture_output=True, text=True)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert os.listdir(tmp_path)  # it left something: hidden temporaries, a lone file or an empty name

    monkeypatch.setattr(publish, "mediapipe_classifier", _fake_conversion)
    publish.export_tflite(None, str(tmp_path), SPM_MODEL, ["0", "1"])
    assert sorted(os.listdir(tmp_path)) == ["classifier_dynamic_int8.tflite", "classifier_float32.tflite"]
    for quantization in ("float32", "dynamic_int8"):
        assert (tmp_path / f"classifier_{quantization}.tflite").read_bytes() == quantization.encode() * 1000


def test_a_whole_set_published_before_the_kill_is_kept(tmp_path, monkeypatch):
    from albert_tf.serving import export_journal
    from albert_tf.serving.litert import publish

    monkeypatch.setattr(publish, "mediapipe_classifier", _fake_conversion)
    paths = publish.export_tflite(None, str(tmp_path), SPM_MODEL, ["0", "1"])
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    monkeypatch.setattr(export_journal.os, "getpid", lambda: int(dead.stdout))
    with export_journal.journal(str(tmp_path)) as record:  # a journal whose process is gone, all published
        record([], paths, [os.path.getsize(path) for path in paths])
        os.link(next(tmp_path.glob(".export-*")), tmp_path / ".export-kept.journal")
    monkeypatch.undo()
    assert export_journal.clean_dead_exports(str(tmp_path)) == []
    assert sorted(os.listdir(tmp_path)) == ["classifier_dynamic_int8.tflite", "classifier_float32.tflite"]


def test_a_live_export_is_left_alone(tmp_path):
    from albert_tf.serving import export_journal

    (tmp_path / "classifier_float32.tflite").write_bytes(b"being published")
    with export_journal.journal(str(tmp_path)) as record:
        record([], [str(tmp_path / "classifier_float32.tflite"), str(tmp_path / "classifier_dynamic_int8.tflite")],
               [1, 1])
        assert export_journal.clean_dead_exports(str(tmp_path)) == []
        assert (tmp_path / "classifier_float32.tflite").exists()


def _classifier(num_labels, vocab_size=None):
    from albert_tf import AlbertClassifier
    from albert_tf.config import AlbertConfig

    config = AlbertConfig.from_json_file(TINY_CONFIG)
    if vocab_size is not None:
        config.vocab_size = vocab_size
    return AlbertClassifier(config, num_labels)


@pytest.mark.parametrize("labels, words", [
    (["negative", "pos\x00itive"], "without NUL"),
    (["same", "other", "same"], "label names \\['same'\\] appear more than once"),
    (["only"], "at least 2 labels"),
])
def test_the_library_refuses_label_names_the_command_refuses(tmp_path, labels, words):
    from albert_tf.serving.litert.publish import export_tflite

    with pytest.raises(ValueError, match=words):
        export_tflite(_classifier(len(labels)), str(tmp_path), SPM_MODEL, labels, seq_length=8)
    assert os.listdir(tmp_path) == []


def test_the_library_refuses_a_vocabulary_other_than_the_sentencepiece_models(tmp_path):
    from albert_tf.serving.litert.publish import export_tflite, export_tflite_embedder

    classifier = _classifier(2, vocab_size=200)
    with pytest.raises(ValueError, match="vocab_size 200 differs from the 30000 pieces of the SentencePiece model"):
        export_tflite(classifier, str(tmp_path), SPM_MODEL, ["0", "1"], seq_length=8)
    with pytest.raises(ValueError, match="vocab_size 200 differs"):
        export_tflite_embedder(classifier.albert, str(tmp_path), SPM_MODEL, seq_length=8)
    assert os.listdir(tmp_path) == []


_KILLED_SAVED_MODEL = """
import os, signal, sys
import tensorflow as tf
from albert_tf.serving import versioned_dir

def save_then_die(module, path, signatures=None):
    os.makedirs(os.path.join(path, "variables"))
    open(os.path.join(path, "saved_model.pb"), "wb").write(b"x" * 1000)
    os.kill(os.getpid(), signal.SIGKILL)

versioned_dir.tf.saved_model.save = save_then_die
versioned_dir.save_versioned(tf.Module(), sys.argv[1], version=1)
"""


def test_a_saved_model_export_killed_while_writing_leaves_no_hidden_folder_after_the_next(tmp_path):
    import tensorflow as tf

    from albert_tf.serving import versioned_dir

    killed = subprocess.run([sys.executable, "-c", _KILLED_SAVED_MODEL, str(tmp_path)],
                            env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"), capture_output=True, text=True)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    assert any(name.startswith(".1.tmp-") for name in os.listdir(tmp_path))
    versioned_dir.save_versioned(tf.Module(), str(tmp_path), version=2)
    assert sorted(os.listdir(tmp_path)) == ["2"]
