"""A model's function as a LiteRT flatbuffer (`.tflite`): float32, or dynamic-range int8.

Dynamic-range quantization stores every matmul weight as int8 (a quarter of the size) and
quantizes activations on the fly; the accuracy it costs is measured in the docs, not assumed.
The graph is traced with the "reference" kernels (plain ops that LiteRT's XNNPACK delegate
fuses), in float32 whatever the model's dtype policy. The converter is handed the model's
TensorFlow variables themselves: given the Keras 3 model, it finds none of them and writes a model
of empty variable handles (NaN outputs; TF 2.21).
"""

import tensorflow as tf

from albert_tf.choices import TFLITE_QUANTIZATIONS
from albert_tf.models.albert_model import INPUT_NAMES
from albert_tf.models.serialization import copied
from albert_tf.progress import working
from albert_tf.serving.export_module import PORTABLE_DTYPE


def litert_model(model, outputs, quantization="dynamic_int8", shape=(None, None), per_channel_dense=True):
    """The LiteRT flatbuffer (bytes) of `outputs(model_copy, inputs)` (a dict of tensors), where
    `inputs` are the three int32 token inputs of `shape` ([batch, seq]; None is resized at run time)
    and `model_copy` is `model` (an ALBERT Keras model) in float32 with the reference kernels.

    `per_channel_dense=False` quantizes each int8 dense weight with one scale: FULLY_CONNECTED
    version 12 (a scale per output channel, the converter's default) is unknown to older runtimes."""
    if quantization not in TFLITE_QUANTIZATIONS:
        raise ValueError(f"quantization must be one of {list(TFLITE_QUANTIZATIONS)}, got {quantization!r}")
    # A copy in float32 with the reference kernels.
    model_copy = copied(model, PORTABLE_DTYPE, "reference")

    @tf.function(input_signature=[tf.TensorSpec(shape, tf.int32, name=name) for name in INPUT_NAMES])
    def function(input_word_ids, input_mask, input_type_ids):
        inputs = {"input_word_ids": input_word_ids, "input_mask": input_mask, "input_type_ids": input_type_ids}
        return outputs(model_copy, inputs)

    state = tf.Module()
    state.variables_to_freeze = [weight.value for weight in model_copy.weights]  # the tf.Variables
    converter = tf.lite.TFLiteConverter.from_concrete_functions([function.get_concrete_function()], state)
    if quantization == "dynamic_int8":
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
        converter._experimental_disable_per_channel_quantization_for_dense_layers = (  # pylint: disable=protected-access
            not per_channel_dense)
    with working(f"converting to LiteRT ({quantization})"):
        return converter.convert()
