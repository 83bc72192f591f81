"""A fine-tuned classifier as LiteRT (TensorFlow Lite) models, in two forms.

For a device (`export_tflite`): `classifier_float32.tflite` and `classifier_dynamic_int8.tflite`,
the MediaPipe Tasks form (`mediapipe_export.mediapipe_classifier`): raw text in through the
`TextClassifier` of MediaPipe (Android, iOS, web, Python) with the SentencePiece model and label
names in the file's metadata, or token ids int32 [1, seq_length] through any LiteRT interpreter;
`probabilities` [1, labels] out. A SQuAD v1.1 model's are `question_answerer_float32.tflite` and
`question_answerer_dynamic_int8.tflite` (`task_library_export`), for the TFLite Task Library's
`BertQuestionAnswerer`.

For TF Serving's `--prefer_tflite_model` (`tflite_classifier`): the one signature `serving_default`
takes `input_word_ids`, `input_mask`, `input_type_ids` int32 [batch, seq] (any seq up to
max_position_embeddings; the interpreter resizes) and returns `logits` float32 [batch, labels] in
the task's label order, what a server's batches of any shape need. Its clients tokenize with
`albert_tf.text.tokenization.AlbertTokenizer`: ALBERT's text normalization is TensorFlow string
ops that TFLite has no builtin for.
"""

import os

import tensorflow as tf

from albert_tf.choices import TFLITE_QUANTIZATIONS
from albert_tf.io_utils import atomic_outputs
from albert_tf.serving.litert_conversion import litert_model
from albert_tf.serving.mediapipe_export import DEFAULT_SEQ_LENGTH, mediapipe_classifier, mediapipe_embedder
from albert_tf.serving.task_library_export import task_library_question_answerer

# The file TF Serving's `--prefer_tflite_model=true` looks for in a SavedModel version directory.
SERVING_TFLITE_FILE = "model.tflite"
QUESTION_ANSWERER_STEM = "question_answerer"


def tflite_classifier(classifier, quantization="dynamic_int8"):
    """The LiteRT flatbuffer (bytes) of `classifier` (an `AlbertClassifier`) for TF Serving, float32
    weights or dynamic-range int8 ones: token ids of any shape in, logits out."""
    return litert_model(classifier, lambda model, inputs: {"logits": model(inputs, training=False)["logits"]},
                        quantization)


def tflite_paths(export_dir, quantizations=TFLITE_QUANTIZATIONS, stem="classifier"):
    """`<export_dir>/<stem>_<quantization>.tflite` for each of `quantizations`."""
    return [os.path.join(export_dir, f"{stem}_{quantization}.tflite") for quantization in quantizations]


def refuse_existing(paths):
    """Raises ValueError naming the files of `paths` that exist: a model in use is never replaced."""
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
    tf.io.gfile.makedirs(os.path.dirname(paths[0]))
    try:
        with atomic_outputs(paths, replace=False) as temporaries:
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
    return _write_new(tflite_paths(export_dir, quantizations, "embedder"), lambda i: mediapipe_embedder(
        albert, spm_model_file, seq_length, quantizations[i], pooling))


def export_tflite_question_answerer(model, export_dir, spm_model_file, quantizations=TFLITE_QUANTIZATIONS):
    """Writes `tflite_paths(export_dir, quantizations, QUESTION_ANSWERER_STEM)`, the Task Library
    `BertQuestionAnswerer` models of `model` (`task_library_question_answerer`); returns them.
    Existing files are refused."""
    return _write_new(tflite_paths(export_dir, quantizations, QUESTION_ANSWERER_STEM),
                      lambda i: task_library_question_answerer(model, spm_model_file, quantizations[i]))
