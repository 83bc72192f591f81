"""The attention half of an ALBERT Transformer block (post-LN, as in BERT)."""

import math

import keras

from albert_tf.layers.attention_heads import merge_heads
from albert_tf.layers.initializers import truncated_normal
from albert_tf.layers.layer_norm import Float32Outputs, layer_norm
from albert_tf.layers.reference_kernels import ReferenceKernels


@keras.saving.register_keras_serializable(package="albert_tf")
class AttentionSubLayer(Float32Outputs, keras.layers.Layer):
    """Multi-head self-attention, output projection, dropout, residual add and its LayerNorm.

    Query/key/value/output kernels are 2-D [H, H] exactly as the original stores them, so
    checkpoints map one to one (and LAMB's per-tensor trust ratios stay the original's).
    Inputs are not autocast: the residual stream stays float32.

    Call arguments: `hidden_states` [B, T, H], `bias` (from `attention_mask.attention_bias`), `training`, and
    optionally `query_states` [B, Q, H]: the rows to compute outputs for (queries and residual
    come from them, keys and values from all of `hidden_states`); the output is then [B, Q, H].

    `attention_type` "block_sparse" replaces the dense softmax over all keys with BigBird's
    pattern (`BlockSparseAttention`, with `block_size` and `num_random_blocks`); it computes
    every row, so it takes no `query_states`.
    `kernels`: the kernel set it computes through (`albert_tf.kernels`), given by its model
    (alone, "reference"); a runtime choice, not part of its config.
    """

    def __init__(
        self,
        hidden_size,
        num_attention_heads,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        initializer_range=0.02,
        attention_type="dense",
        block_size=None,
        num_random_blocks=None,
        *,
        kernels=None,
        **kwargs,
    ):
        super().__init__(autocast=False, **kwargs)
        if hidden_size % num_attention_heads:
            raise ValueError(
                f"hidden_size ({hidden_size}) must be divisible by num_attention_heads ({num_attention_heads})."
            )
        self.hidden_size = hidden_size
        self.num_attention_heads = num_attention_heads
        self.hidden_dropout_prob = hidden_dropout_prob
        self.attention_probs_dropout_prob = attention_probs_dropout_prob
        self.initializer_range = initializer_range
        self.kernels = kernels or ReferenceKernels()

        def dense(name):
            return keras.layers.Dense(
                hidden_size,
                kernel_initializer=truncated_normal(initializer_range),
                dtype=self.dtype_policy,
                name=name,
            )

        self.query = dense("query")
        self.key = dense("key")
        self.value = dense("value")
        self.output_dense = dense("output_dense")
        self.attention_dropout = keras.layers.Dropout(
            attention_probs_dropout_prob, dtype=self.dtype_policy, name="attention_dropout"
        )
        self.output_dropout = keras.layers.Dropout(
            hidden_dropout_prob, dtype=self.dtype_policy, name="output_dropout"
        )
        self.layer_norm = layer_norm("layer_norm")
        self.attention_type = attention_type
        self.block_size = block_size
        self.num_random_blocks = num_random_blocks
        self.block_sparse = None
        if attention_type == "block_sparse":
            # Imported only for it: dense attention needs none of its machinery.
            from albert_tf.layers.block_sparse_attention import BlockSparseAttention

            self.block_sparse = BlockSparseAttention(
                block_size, num_random_blocks, attention_probs_dropout_prob,
                dtype=self.dtype_policy, name=f"{self.name}_block_sparse",
            )

    def build(self, hidden_states_shape, bias_shape=None, query_states_shape=None):
        for dense in (self.query, self.key, self.value, self.output_dense):
            dense.build(hidden_states_shape)
        self.layer_norm.build(hidden_states_shape)
        self.built = True

    def call(self, hidden_states, bias, training=None, query_states=None):
        heads = self.num_attention_heads
        if query_states is None:
            query_states = hidden_states
            query, key, value = self.kernels.project_heads([self.query, self.key, self.value], hidden_states, heads)
        else:
            (query,) = self.kernels.project_heads([self.query], query_states, heads)
            key, value = self.kernels.project_heads([self.key, self.value], hidden_states, heads)

        scale = 1.0 / math.sqrt(self.hidden_size // heads)

        def dense_attention():
            return self.kernels.attend(query, key, value, bias, scale, self.attention_dropout, training)

        if self.block_sparse is None:
            context = merge_heads(dense_attention())
        elif query_states is not hidden_states:
            raise ValueError(f"{self.name}: block-sparse attention computes every row; it takes no `query_states`.")
        else:
            context = merge_heads(self.block_sparse(
                query, key, value, bias, scale=scale, dense_attention=dense_attention, training=training
            ))

        output = self.kernels.dense(self.output_dense, context)
        output = self.kernels.dropout(self.output_dropout, output, training)
        return self.kernels.add_and_norm(self.layer_norm, query_states, output)

    def compute_output_shape(self, hidden_states_shape, bias_shape=None, query_states_shape=None):
        return hidden_states_shape if query_states_shape is None else query_states_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "hidden_size": self.hidden_size,
                "num_attention_heads": self.num_attention_heads,
                "hidden_dropout_prob": self.hidden_dropout_prob,
                "attention_probs_dropout_prob": self.attention_probs_dropout_prob,
                "initializer_range": self.initializer_range,
                "attention_type": self.attention_type,
                "block_size": self.block_size,
                "num_random_blocks": self.num_random_blocks,
            }
        )
        return config
