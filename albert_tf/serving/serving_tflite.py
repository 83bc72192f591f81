"""TF Serving's `model.tflite`: the classifier's LiteRT model inside its SavedModel version, which
TF Serving runs instead of the TensorFlow graph when started with `--prefer_tflite_model=true`.

Its one signature `serving_default` takes `input_word_ids`, `input_mask`, `input_type_ids` int32
[batch, seq] (any seq up to max_position_embeddings; the interpreter resizes) and returns `logits`
float32 [batch, labels] in the task's label order, what a server's batches of any shape need. Its
clients tokenize with `albert_tf.text.tokenization.AlbertTokenizer`: ALBERT's text normalization is
TensorFlow string ops that LiteRT has no builtin for. (The on-device files: `serving/litert/`.)
"""

from albert_tf.serving.litert.conversion import litert_model

# The file TF Serving's `--prefer_tflite_model=true` looks for in a SavedModel version directory.
SERVING_TFLITE_FILE = "model.tflite"


def tflite_classifier(classifier, quantization="dynamic_int8"):
    """The LiteRT flatbuffer (bytes) of `classifier` (an `AlbertClassifier`) for TF Serving, float32
    weights or dynamic-range int8 ones: token ids of any shape in, logits out."""
    return litert_model(classifier, lambda model, inputs: {"logits": model(inputs, training=False)["logits"]},
                        quantization)
