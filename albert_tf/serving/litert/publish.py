"""LiteRT files for devices, written as a set: the classifier's (`export_tflite`):
`classifier_float32.tflite` and `classifier_dynamic_int8.tflite`, the MediaPipe Tasks form
(`mediapipe.mediapipe_classifier`): raw text in through the `TextClassifier` of MediaPipe (Android,
iOS, web, Python) with the SentencePiece model and label names in the file's TFLite metadata, or
token ids int32 [1, seq_length] through any LiteRT interpreter; `probabilities` [1, labels] out.
The encoder's are `embedder_*.tflite` (`TextEmbedder`), a SQuAD v1.1 model's
`question_answerer_*.tflite` (`task_library`), for the TFLite Task Library's `BertQuestionAnswerer`.

A model in use is never replaced: existing files are refused, before the conversion and again as
they are published; the files appear together once all are written, or none does. An export
killed meanwhile leaves a journal (`export_journal`), and the next export into the directory
removes what it left (hidden temporaries, a lone first file, a reserved empty name) first.
"""

import os

import tensorflow as tf

from albert_tf.choices import TFLITE_QUANTIZATIONS
from albert_tf.io_utils import atomic_outputs
from albert_tf.serving.export_journal import clean_dead_exports, journal
from albert_tf.serving.litert.mediapipe import DEFAULT_SEQ_LENGTH, mediapipe_classifier, mediapipe_embedder
from albert_tf.serving.litert.task_library import task_library_question_answerer

CLASSIFIER_STEM, EMBEDDER_STEM, QUESTION_ANSWERER_STEM = "classifier", "embedder", "question_answerer"


def tflite_paths(export_dir, quantizations=TFLITE_QUANTIZATIONS, stem=CLASSIFIER_STEM):
    """`<export_dir>/<stem>_<quantization>.tflite` for each of `quantizations`."""
    return [os.path.join(export_dir, f"{stem}_{quantization}.tflite") for quantization in quantizations]


def refuse_existing(paths):
    """Raises ValueError naming the files of `paths` that exist: a model in use is never replaced.
    What a killed export left in their directory is removed first (`clean_dead_exports`)."""
    clean_dead_exports(os.path.dirname(paths[0]))
    # A local name taken by a link to nothing counts too: publishing would fail on it after the work.
    existing = [path for path in paths if (tf.io.gfile.exists(path) if "://" in path else os.path.lexists(path))]
    if existing:
        verb, pronoun = ("exists", "it") if len(existing) == 1 else ("exist", "them")
        raise ValueError(f"{', '.join(existing)} {verb}; remove {pronoun} or give another directory (a model in use "
                         "is never replaced)")


def _write_new(paths, make_content):
    """Writes `make_content(i)` to each of `paths`; existing files are refused (`refuse_existing`),
    before the conversion and again as they are published (a file made meanwhile is kept), and the
    files appear together once all are written, or none does."""
    refuse_existing(paths)
    contents = [make_content(i) for i in range(len(paths))]
    directory = os.path.dirname(paths[0])
    tf.io.gfile.makedirs(directory)
    try:
        with journal(directory) as record, atomic_outputs(paths, replace=False) as temporaries:
            record(temporaries, paths, [len(content) for content in contents])
            for tmp, content in zip(temporaries, contents):
                with tf.io.gfile.GFile(tmp, "wb") as handle:
                    handle.write(content)
    except (FileExistsError, tf.errors.AlreadyExistsError):
        refuse_existing(paths)
        raise
    return paths


def export_tflite(classifier, export_dir, spm_model_file, label_names, seq_length=DEFAULT_SEQ_LENGTH,
                  quantizations=TFLITE_QUANTIZATIONS):
    """Writes `tflite_paths(export_dir, quantizations)`, the MediaPipe `TextClassifier` models of
    `classifier` (`mediapipe_classifier`); returns them. Existing files are refused, never replaced."""
    return _write_new(tflite_paths(export_dir, quantizations), lambda i: mediapipe_classifier(
        classifier, spm_model_file, label_names, seq_length, quantizations[i]))


def export_tflite_embedder(albert, export_dir, spm_model_file, seq_length=DEFAULT_SEQ_LENGTH,
                           quantizations=TFLITE_QUANTIZATIONS, pooling="mean"):
    """Writes `tflite_paths(export_dir, quantizations, "embedder")`, the MediaPipe `TextEmbedder`
    models of `albert` (`mediapipe_embedder`); returns them. Existing files are refused."""
    return _write_new(tflite_paths(export_dir, quantizations, EMBEDDER_STEM), lambda i: mediapipe_embedder(
        albert, spm_model_file, seq_length, quantizations[i], pooling))


def export_tflite_question_answerer(model, export_dir, spm_model_file, quantizations=TFLITE_QUANTIZATIONS):
    """Writes `tflite_paths(export_dir, quantizations, QUESTION_ANSWERER_STEM)`, the Task Library
    `BertQuestionAnswerer` models of `model` (`task_library_question_answerer`); returns them.
    Existing files are refused."""
    return _write_new(tflite_paths(export_dir, quantizations, QUESTION_ANSWERER_STEM),
                      lambda i: task_library_question_answerer(model, spm_model_file, quantizations[i]))
