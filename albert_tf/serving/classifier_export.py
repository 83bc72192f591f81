"""A fine-tuned classifier as a SavedModel that TF Serving serves from raw text.

Signatures:
    `serving_default`: `sentence` (or `sentence1` and `sentence2` for pair tasks), string [batch]
        -> `probabilities` [batch, labels], `label` (the label name) [batch], `logits`;
        for regression (STS-B) -> `score` [batch].
    `serve_token_ids`: `input_word_ids`, `input_mask`, `input_type_ids` int32 [batch, seq], all of one
        shape -> the same outputs, for clients that tokenize themselves.
A request holds at most `max_batch_size` rows, a string at most `max_string_bytes` bytes
(`request_checks`); past them it is an InvalidArgument error.
Text goes through the task's `ClassifierPreprocessor` (tensorflow-text in the graph), the object a
user calls on raw text for `fit` and `predict`, with the ids of the Python features used for
training; the SentencePiece model is an asset of the SavedModel. Each batch is padded to its longest
row (capped at `max_seq_length`, longer text is truncated).
The kernel set the graph was traced with (`kernels`, one of `EXPORT_KERNEL_SETS`: plain
TensorFlow ops only) is recorded as the string variable `export_kernels`.
"""

import tensorflow as tf

from albert_tf.choices import MAX_BATCH_SIZE, MAX_STRING_BYTES
from albert_tf.preprocessors.classifier_preprocessor import ClassifierPreprocessor
from albert_tf.serving.export_module import PORTABLE_DTYPE, ExportModule
from albert_tf.serving.serving_tflite import SERVING_TFLITE_FILE, tflite_classifier
from albert_tf.serving.versioned_dir import save_versioned


class ClassifierServingModule(ExportModule):
    """Wraps an `AlbertClassifier` with its `ClassifierPreprocessor` and named outputs."""

    def __init__(self, classifier, text_feature_names, label_names, spm_model_file, do_lower_case=True,
                 max_seq_length=512, kernels="reference", max_batch_size=MAX_BATCH_SIZE,
                 max_string_bytes=MAX_STRING_BYTES, dtype=PORTABLE_DTYPE):
        self.text_feature_names = tuple(text_feature_names)
        super().__init__(classifier, kernels, dtype, max_batch_size=max_batch_size, max_string_bytes=max_string_bytes)
        self.preprocessor = ClassifierPreprocessor(spm_model_file, sequence_length=max_seq_length,
                                                   do_lower_case=do_lower_case, padding="dynamic")
        self.label_names = None if label_names is None else tf.constant(list(label_names))

    def text_specs(self):
        return [tf.TensorSpec([None], tf.string, name=name) for name in self.text_feature_names]

    def _serve_text(self, *texts):
        texts = self.checked_text(dict(zip(self.text_feature_names, texts)))
        inputs = self.preprocessor(tuple(texts[name] for name in self.text_feature_names))
        return self.named_outputs(self.model_outputs(inputs))

    def named_outputs(self, outputs):
        logits = outputs["logits"]
        if self.label_names is None:
            return {"score": logits[:, 0]}
        return {
            "probabilities": tf.nn.softmax(logits, axis=-1),
            "label": tf.gather(self.label_names, tf.argmax(logits, axis=-1)),
            "logits": logits,
        }


def export_classifier(classifier, task, spm_model_file, export_dir, do_lower_case=True,
                      max_seq_length=512, version=None, kernels="reference", max_batch_size=MAX_BATCH_SIZE,
                      max_string_bytes=MAX_STRING_BYTES, tflite_quantization=None, dtype=PORTABLE_DTYPE):
    """Writes `<export_dir>/<version>/` for `task` (a `GlueTask`: its `label_names` are what `label` says), traced with `kernels`, serving requests
    of at most `max_batch_size` rows and `max_string_bytes` bytes per string; returns that path.

    With `tflite_quantization` ("float32" or "dynamic_int8"), the version also holds the classifier's
    LiteRT model as `model.tflite` (`serving_tflite.SERVING_TFLITE_FILE`), which TF Serving runs instead
    of the TensorFlow graph when started with `--prefer_tflite_model=true` (token ids in, logits out).
    The graph computes in `dtype` whatever the classifier's own policy (float32: portable; a benchmark
    may ask for "mixed_bfloat16"); the LiteRT model always in float32.
    """
    module = ClassifierServingModule(
        classifier, task.text_feature_names, task.label_names, spm_model_file,
        do_lower_case=do_lower_case, max_seq_length=max_seq_length, kernels=kernels,
        max_batch_size=max_batch_size, max_string_bytes=max_string_bytes, dtype=dtype,
    )
    extra_files = {}
    if tflite_quantization is not None:
        extra_files[SERVING_TFLITE_FILE] = tflite_classifier(classifier, tflite_quantization)
    return save_versioned(module, export_dir, signatures=module.signatures(), version=version,
                          extra_files=extra_files)
