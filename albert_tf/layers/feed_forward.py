"""The feed-forward half of an ALBERT Transformer block (post-LN)."""

import keras

from albert_tf.layers.activations import get_activation
from albert_tf.layers.initializers import truncated_normal
from albert_tf.layers.layer_norm import Float32Outputs, layer_norm
from albert_tf.layers.reference_kernels import ReferenceKernels


@keras.saving.register_keras_serializable(package="albert_tf")
class FeedForwardSubLayer(Float32Outputs, keras.layers.Layer):
    """Dense H -> I with the activation, dense I -> H, dropout, residual add and its LayerNorm.

    Inputs are not autocast: the residual stream stays float32.

    Call arguments: `hidden_states` [B, T, H], `training`.

    `kernels`: the kernel set it computes through (`albert_tf.kernels`), given by its model
    (alone, "reference"); a runtime choice, not part of its config.
    """

    def __init__(
        self,
        hidden_size,
        intermediate_size,
        hidden_act="gelu",
        hidden_dropout_prob=0.0,
        initializer_range=0.02,
        *,
        kernels=None,
        **kwargs,
    ):
        super().__init__(autocast=False, **kwargs)
        get_activation(hidden_act)  # fails early on an unknown name
        self.hidden_size = hidden_size
        self.intermediate_size = intermediate_size
        self.hidden_act = hidden_act
        self.hidden_dropout_prob = hidden_dropout_prob
        self.initializer_range = initializer_range
        self.kernels = kernels or ReferenceKernels()

        # The activation is applied by `kernels.dense`, so that a kernel set can fuse it.
        self.intermediate = keras.layers.Dense(
            intermediate_size,
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
            hidden_dropout_prob, dtype=self.dtype_policy, name="output_dropout"
        )
        self.layer_norm = layer_norm("layer_norm")

    def build(self, input_shape):
        self.intermediate.build(input_shape)
        self.output_dense.build(tuple(input_shape[:-1]) + (self.intermediate_size,))
        self.layer_norm.build(input_shape)
        self.built = True

    def call(self, hidden_states, training=None):
        intermediate = self.kernels.dense(self.intermediate, hidden_states, activation=self.hidden_act)
        output = self.kernels.dense(self.output_dense, intermediate)
        output = self.kernels.dropout(self.output_dropout, output, training)
        return self.kernels.add_and_norm(self.layer_norm, hidden_states, output)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "hidden_size": self.hidden_size,
                "intermediate_size": self.intermediate_size,
                "hidden_act": self.hidden_act,
                "hidden_dropout_prob": self.hidden_dropout_prob,
                "initializer_range": self.initializer_range,
            }
        )
        return config
