"""The feed-forward half of an ALBERT Transformer block (post-LN)."""

import keras

from albert_tf.layers.activations import get_activation
from albert_tf.layers.dense_2d import dense_2d
from albert_tf.layers.initializers import truncated_normal
from albert_tf.layers.layer_norm import Float32Outputs, add_and_norm, layer_norm


class FeedForwardSubLayer(Float32Outputs, keras.layers.Layer):
    """Dense H -> I with the activation, dense I -> H, dropout, residual add and its LayerNorm.

    Inputs are not autocast: the residual stream stays float32 (see `add_and_norm`).

    Call arguments: `hidden_states` [B, T, H], `training`, `casts` (a `WeightCasts` shared by
    the layers of one forward pass).
    """

    def __init__(
        self,
        hidden_size,
        intermediate_size,
        activation="gelu",
        dropout_rate=0.0,
        initializer_range=0.02,
        **kwargs,
    ):
        super().__init__(autocast=False, **kwargs)
        self.hidden_size = hidden_size
        self.intermediate_size = intermediate_size
        self.activation = activation
        self.dropout_rate = dropout_rate
        self.initializer_range = initializer_range

        self.intermediate = keras.layers.Dense(
            intermediate_size,
            activation=get_activation(activation),
            kernel_initializer=truncated_normal(initializer_range),
            dtype=self.dtype_policy,
            name="intermediate",
        )
        self.output_dense = keras.layers.Dense(
            hidden_size,
            kernel_initializer=truncated_normal(initializer_range),
            dtype=self.dtype_policy,
            name="output_dense",
        )
        self.output_dropout = keras.layers.Dropout(
            dropout_rate, dtype=self.dtype_policy, name="output_dropout"
        )
        self.layer_norm = layer_norm("layer_norm")

    def build(self, input_shape):
        self.intermediate.build(input_shape)
        self.output_dense.build(tuple(input_shape[:-1]) + (self.intermediate_size,))
        self.layer_norm.build(input_shape)
        self.built = True

    def call(self, hidden_states, training=None, casts=None):
        activation = get_activation(self.activation, inference=not training)
        intermediate = dense_2d(self.intermediate, hidden_states, casts, activation=activation)
        output = dense_2d(self.output_dense, intermediate, casts)
        output = self.output_dropout(output, training=training)
        return add_and_norm(self.layer_norm, hidden_states, output)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "hidden_size": self.hidden_size,
                "intermediate_size": self.intermediate_size,
                "activation": self.activation,
                "dropout_rate": self.dropout_rate,
                "initializer_range": self.initializer_range,
            }
        )
        return config
