"""A fine-tuned classifier as a SavedModel that TF Serving serves from raw text.

Signatures:
    `serving_default`: `sentence` (or `sentence1` and `sentence2` for pair tasks), string [batch]
        -> `probabilities` [batch, labels], `label` (the label name) [batch], `logits`;
        for regression (STS-B) -> `score` [batch].
    `serve_token_ids`: `input_word_ids`, `input_mask`, `input_type_ids` int32 [batch, seq], all of one
        shape -> the same outputs, for clients that tokenize themselves.
A request holds at most `max_batch_size` rows, a string at most `max_string_bytes` bytes
(`request_checks`); past them it is an InvalidArgument error.
Text is normalised and tokenized in the graph (tensorflow-text), with the same ids as the Python
tokenizer used for training; the SentencePiece model is an asset of the SavedModel. Each batch is
padded to its longest row (capped at `max_seq_length`, longer text is truncated).
The kernel set the graph was traced with (`kernels`, one of `EXPORT_KERNEL_SETS`: plain
TensorFlow ops only) is recorded as the string variable `export_kernels`.
"""

import tensorflow as tf

from albert_tf.models.albert_model import INPUT_NAMES
from albert_tf.serving.export_kernels import PORTABLE_DTYPE, ExportKernels
from albert_tf.serving.request_checks import (DEFAULT_MAX_BATCH_SIZE, DEFAULT_MAX_STRING_BYTES, check_bounds,
                                              checked_text, checked_token_ids)
from albert_tf.serving.tflite_export import SERVING_TFLITE_FILE, tflite_classifier
from albert_tf.serving.versioned_dir import save_versioned
from albert_tf.text.preprocessing import AlbertInputPacker, AlbertTextTokenizer

TOKEN_IDS_SIGNATURE = "serve_token_ids"


class ClassifierServingModule(ExportKernels):
    """Wraps an `AlbertClassifier` with in-graph preprocessing and named outputs."""

    def __init__(self, classifier, text_feature_names, label_names, spm_model_file, do_lower_case=True,
                 max_seq_length=512, kernels="reference", max_batch_size=DEFAULT_MAX_BATCH_SIZE,
                 max_string_bytes=DEFAULT_MAX_STRING_BYTES, dtype=PORTABLE_DTYPE):
        super().__init__(kernels, dtype)
        check_bounds(max_batch_size=max_batch_size, max_string_bytes=max_string_bytes)
        self.max_batch_size, self.max_string_bytes = max_batch_size, max_string_bytes
        self.text_feature_names = tuple(text_feature_names)
        self.classifier = self.traced_form(classifier)
        self.tokenizer = AlbertTextTokenizer(spm_model_file, do_lower_case=do_lower_case)
        self.packer = AlbertInputPacker(
            None, cls_id=self.tokenizer.cls_id, sep_id=self.tokenizer.sep_id,
            pad_id=self.tokenizer.pad_id, max_seq_length=max_seq_length,
        )
        self.label_names = None if label_names is None else tf.constant(list(label_names))
        text_specs = [tf.TensorSpec([None], tf.string, name=name) for name in text_feature_names]
        self.serve_text = tf.function(self._serve_text, input_signature=text_specs)
        ids_spec = {name: tf.TensorSpec([None, None], tf.int32, name=name) for name in INPUT_NAMES}
        self.serve_token_ids = tf.function(self._serve_token_ids, input_signature=[ids_spec])

    def _serve_text(self, *texts):
        texts = checked_text(dict(zip(self.text_feature_names, texts)), self.max_batch_size, self.max_string_bytes)
        packed = self.packer([self.tokenizer(texts[name]) for name in self.text_feature_names])
        return self._outputs(packed)

    def _serve_token_ids(self, inputs):
        return self._outputs(checked_token_ids(inputs, self.max_batch_size))

    def _outputs(self, inputs):
        # An empty batch has no [CLS] column for the model to pool: answer it without the model.
        num_labels = 1 if self.label_names is None else int(self.label_names.shape[0])
        logits = tf.cond(
            tf.shape(inputs["input_word_ids"])[0] > 0,
            lambda: tf.cast(self.classifier(inputs, training=False)["logits"], tf.float32),
            lambda: tf.zeros([0, num_labels], tf.float32))
        if self.label_names is None:
            return {"score": logits[:, 0]}
        return {
            "probabilities": tf.nn.softmax(logits, axis=-1),
            "label": tf.gather(self.label_names, tf.argmax(logits, axis=-1)),
            "logits": logits,
        }

    def signatures(self):
        return {
            "serving_default": self.serve_text.get_concrete_function(),
            TOKEN_IDS_SIGNATURE: self.serve_token_ids.get_concrete_function(),
        }


def export_classifier(classifier, task, spm_model_file, export_dir, do_lower_case=True,
                      max_seq_length=512, version=None, kernels="reference", max_batch_size=DEFAULT_MAX_BATCH_SIZE,
                      max_string_bytes=DEFAULT_MAX_STRING_BYTES, tflite_quantization=None, dtype=PORTABLE_DTYPE):
    """Writes `<export_dir>/<version>/` for `task` (a `GlueTask`: its `label_names` are what `label` says), traced with `kernels`, serving requests
    of at most `max_batch_size` rows and `max_string_bytes` bytes per string; returns that path.

    With `tflite_quantization` ("float32" or "dynamic_int8"), the version also holds the classifier's
    LiteRT model as `model.tflite` (`tflite_export.SERVING_TFLITE_FILE`), which TF Serving runs instead
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
