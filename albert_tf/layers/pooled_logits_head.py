"""Logits from the pooled [CLS] output: the shape shared by the SOP and the GLUE heads."""

import keras
from keras import ops

from albert_tf.layers.initializers import truncated_normal


@keras.saving.register_keras_serializable(package="albert_tf")
class PooledLogitsHead(keras.layers.Layer):
    """Optional dropout, then `pooled @ output_weights^T + output_bias`, always in float32.

    The weights are [num_outputs, H], the layout the original stores (`output_weights`), which is
    the transpose of a Keras Dense kernel; checkpoints therefore map without reshaping.
    """

    def __init__(self, num_outputs, hidden_size, dropout_rate=0.0, initializer_range=0.02, **kwargs):
        kwargs["dtype"] = "float32"  # Logits and their softmax stay in float32 under any policy.
        super().__init__(**kwargs)
        if num_outputs <= 0:
            raise ValueError(f"num_outputs must be positive, got {num_outputs}.")
        self.num_outputs = num_outputs
        self.hidden_size = hidden_size
        self.dropout_rate = dropout_rate
        self.initializer_range = initializer_range
        self.dropout = keras.layers.Dropout(dropout_rate, name="dropout")

    def build(self, input_shape=None):
        self.output_weights = self.add_weight(
            name="output_weights",
            shape=(self.num_outputs, self.hidden_size),
            initializer=truncated_normal(self.initializer_range),
        )
        self.output_bias = self.add_weight(
            name="output_bias", shape=(self.num_outputs,), initializer="zeros"
        )
        self.built = True

    def call(self, pooled_output, training=None):
        pooled_output = self.dropout(pooled_output, training=training)
        return ops.matmul(pooled_output, ops.transpose(self.output_weights)) + self.output_bias

    def compute_output_shape(self, input_shape):
        return (input_shape[0], self.num_outputs)

    def get_config(self):
        config = super().get_config()
        config.pop("dtype", None)
        config.update(
            {
                "num_outputs": self.num_outputs,
                "hidden_size": self.hidden_size,
                "dropout_rate": self.dropout_rate,
                "initializer_range": self.initializer_range,
            }
        )
        return config
