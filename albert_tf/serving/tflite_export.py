"""A fine-tuned classifier as LiteRT (TensorFlow Lite) models: float32, and dynamic-range int8.

For on-device and latency-bound CPU serving. Dynamic-range quantization stores every matmul
weight as int8 (a quarter of the size) and quantizes activations on the fly; the accuracy it
costs is measured in docs/serving.md, not assumed.

Token ids in, logits out: the one signature `serving_default` takes `input_word_ids`,
`input_mask`, `input_type_ids` int32 [batch, seq] (any seq up to max_position_embeddings; the
interpreter resizes) and returns `logits` float32 [batch, labels] in the task's label order.
No raw text: the ALBERT text normalization (`AlbertTextTokenizer`: regex whitespace collapse,
NFKD, combining marks dropped, lowercasing, the digit-comma rule) is TensorFlow string ops that
TFLite has no builtin for; clients tokenize with `albert_tf.text.tokenization.AlbertTokenizer` or
any SentencePiece runtime plus those rules.

The graph is traced with the "reference" kernels (plain ops that LiteRT's XNNPACK delegate
fuses). The converter is handed the model's TensorFlow variables themselves: given the Keras 3
model, it finds none of them and writes a model of empty variable handles (NaN outputs; TF 2.21).
"""

import os

import tensorflow as tf

from albert_tf.choices import TFLITE_QUANTIZATIONS
from albert_tf.io_utils import atomic_outputs
from albert_tf.layers.block_sparse_attention import constant_random_blocks
from albert_tf.models.albert_model import INPUT_NAMES
from albert_tf.models.serialization import copied
from albert_tf.serving.export_kernels import PORTABLE_DTYPE

# The file TF Serving's `--prefer_tflite_model=true` looks for in a SavedModel version directory.
SERVING_TFLITE_FILE = "model.tflite"


def tflite_classifier(classifier, quantization="dynamic_int8"):
    """The LiteRT flatbuffer (bytes) of `classifier` (an `AlbertClassifier`), float32 weights or
    dynamic-range int8 ones. The model is converted in float32 whatever its dtype policy."""
    if quantization not in TFLITE_QUANTIZATIONS:
        raise ValueError(f"quantization must be one of {list(TFLITE_QUANTIZATIONS)}, got {quantization!r}")
    # Always a copy (float32, reference kernels): its random key blocks become constants below.
    model = copied(classifier, PORTABLE_DTYPE, "reference")
    constant_random_blocks(model, model.albert.config.max_position_embeddings)  # LiteRT has no random ops

    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.int32, name=name) for name in INPUT_NAMES])
    def logits(input_word_ids, input_mask, input_type_ids):
        inputs = {"input_word_ids": input_word_ids, "input_mask": input_mask, "input_type_ids": input_type_ids}
        return {"logits": model(inputs, training=False)["logits"]}

    state = tf.Module()
    state.variables_to_freeze = [weight.value for weight in model.weights]  # the tf.Variables
    converter = tf.lite.TFLiteConverter.from_concrete_functions([logits.get_concrete_function()], state)
    if quantization == "dynamic_int8":
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
    return converter.convert()


def tflite_paths(export_dir, quantizations=TFLITE_QUANTIZATIONS):
    """`<export_dir>/classifier_<quantization>.tflite` for each of `quantizations`."""
    return [os.path.join(export_dir, f"classifier_{quantization}.tflite") for quantization in quantizations]


def export_tflite(classifier, export_dir, quantizations=TFLITE_QUANTIZATIONS):
    """Writes `tflite_paths(export_dir, quantizations)`; returns them. Existing files are refused
    (ValueError), never replaced; the files appear together once all are written, or none does."""
    paths = tflite_paths(export_dir, quantizations)
    existing = [path for path in paths if tf.io.gfile.exists(path)]
    if existing:
        raise ValueError(f"{existing[0]} exists; remove it or write the LiteRT models elsewhere")
    contents = [tflite_classifier(classifier, quantization) for quantization in quantizations]
    tf.io.gfile.makedirs(export_dir)
    with atomic_outputs(paths) as temporaries:
        for tmp, content in zip(temporaries, contents):
            with tf.io.gfile.GFile(tmp, "wb") as handle:
                handle.write(content)
    return paths
