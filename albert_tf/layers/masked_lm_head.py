"""The masked-LM head, its decoder tied to the [V, E] word embeddings."""

import keras
from keras import ops

from albert_tf.layers.activations import get_activation
from albert_tf.layers.initializers import truncated_normal
from albert_tf.layers.layer_norm import Float32Outputs, layer_norm
from albert_tf.layers.rows import gather_rows


@keras.saving.register_keras_serializable(package="albert_tf")
class MaskedLMHead(Float32Outputs, keras.layers.Layer):
    """Gathers the masked positions, dense H -> E with the activation, LayerNorm, then logits.

    The decoder is the word-embedding table itself (transposed) plus an output bias [V]: the head
    adds only H*E + 3E + V parameters. Logits are float32.

    Args:
        embedding: the `FactorizedEmbedding` whose `word_embeddings` the decoder reuses.
    Call arguments: `sequence_output` [B, T, H], `masked_positions` int [B, P] (None when
    `sequence_output` already holds just the masked rows, [B, P, H]).
    Returns logits [B, P, V].
    """

    def __init__(self, embedding, hidden_act="gelu", initializer_range=0.02, **kwargs):
        super().__init__(**kwargs)
        self.embedding = embedding
        self.hidden_act = hidden_act
        self.initializer_range = initializer_range
        self.transform = keras.layers.Dense(
            embedding.embedding_size,
            activation=get_activation(hidden_act),
            kernel_initializer=truncated_normal(initializer_range),
            dtype=self.dtype_policy,
            name="transform",
        )
        self.transform_layer_norm = layer_norm("transform_layer_norm")

    def build(self, sequence_output_shape, masked_positions_shape=None):
        self.transform.build(sequence_output_shape)
        self.transform_layer_norm.build(tuple(sequence_output_shape[:-1]) + (self.embedding.embedding_size,))
        self.output_bias = self.add_weight(
            name="output_bias",
            shape=(self.embedding.vocab_size,),
            initializer="zeros",
            dtype="float32",
            autocast=False,
        )
        self.built = True

    def call(self, sequence_output, masked_positions=None):
        gathered = sequence_output
        if masked_positions is not None:
            gathered = gather_rows(sequence_output, masked_positions)
        # Float32 into the float32 LayerNorm (see `layer_norm`).
        hidden = self.transform_layer_norm(ops.cast(self.transform(gathered), "float32"))
        # The tied table and the bias are never autocast: the decoder runs in float32.
        # One 2-D matmul on the [B*P, E] rows, the plain form on every backend: TensorFlow's
        # 3-D x 2-D matmul would broadcast the [V, E] table into a batched matmul whose gradient
        # sums B copies of a [V, E] product (measured: the costliest op of the head, ~0.8 s of a
        # base training step on 2 cores).
        flat = ops.reshape(hidden, (-1, self.embedding.embedding_size))
        logits = ops.matmul(flat, ops.transpose(self.embedding.word_embeddings)) + self.output_bias
        return ops.reshape(logits, tuple(ops.shape(hidden)[:-1]) + (self.embedding.vocab_size,))

    def compute_output_shape(self, sequence_output_shape, masked_positions_shape=None):
        rows = sequence_output_shape[:-1] if masked_positions_shape is None else masked_positions_shape
        return tuple(rows) + (self.embedding.vocab_size,)

    def get_config(self):
        # The tied embedding is serialized too, so that a head alone round-trips; the models
        # are rebuilt from their AlbertConfig instead, and tie the head to their own embedding.
        config = super().get_config()
        config.update(
            {
                "embedding": keras.saving.serialize_keras_object(self.embedding),
                "hidden_act": self.hidden_act,
                "initializer_range": self.initializer_range,
            }
        )
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["embedding"] = keras.saving.deserialize_keras_object(config["embedding"])
        return cls(**config)
