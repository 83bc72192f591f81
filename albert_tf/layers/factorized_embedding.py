"""ALBERT's factorized embedding: a [V, E] lookup, then a projection E -> H."""

import keras
from keras import ops

from albert_tf import dynamic_sizes
from albert_tf.layers.initializers import truncated_normal
from albert_tf.layers.layer_norm import layer_norm


@keras.saving.register_keras_serializable(package="albert_tf")
class FactorizedEmbedding(keras.layers.Layer):
    """Word + position + token-type embeddings of width E, LayerNorm, dropout, then E -> H.

    The vocabulary lives in a small E-dim space (V x E instead of V x H): ALBERT's first parameter
    saving. As in the original, the E -> H projection exists only when E != H. The embedding math
    runs in float32 whatever the policy (the tables are never autocast: a lookup is cheap, casting
    the whole [V, E] table every step is not); only the projection runs in the compute dtype.

    Call arguments: `input_word_ids`, `input_type_ids` (int [B, T]), `training`.
    Returns [B, T, H] (or [B, T, E] when E == H and so no projection exists).
    """

    def __init__(
        self,
        vocab_size,
        embedding_size,
        hidden_size,
        max_position_embeddings,
        type_vocab_size,
        hidden_dropout_prob=0.0,
        initializer_range=0.02,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.vocab_size = vocab_size
        self.embedding_size = embedding_size
        self.hidden_size = hidden_size
        self.max_position_embeddings = max_position_embeddings
        self.type_vocab_size = type_vocab_size
        self.hidden_dropout_prob = hidden_dropout_prob
        self.initializer_range = initializer_range

        self.layer_norm = layer_norm("layer_norm")
        self.dropout = keras.layers.Dropout(hidden_dropout_prob, dtype="float32", name="dropout")
        self.projection = None
        if embedding_size != hidden_size:
            self.projection = keras.layers.Dense(
                hidden_size,
                kernel_initializer=truncated_normal(initializer_range),
                dtype=self.dtype_policy,
                name="projection",
            )

    def build(self, input_word_ids_shape, input_type_ids_shape=None):
        initializer = truncated_normal(self.initializer_range)
        self.word_embeddings = self.add_weight(
            name="word_embeddings",
            shape=(self.vocab_size, self.embedding_size),
            initializer=initializer,
            dtype="float32",
            autocast=False,  # Autocasting the [V, E] table would copy all of it every step.
        )
        self.token_type_embeddings = self.add_weight(
            name="token_type_embeddings",
            shape=(self.type_vocab_size, self.embedding_size),
            initializer=initializer,
            dtype="float32",
            autocast=False,
        )
        self.position_embeddings = self.add_weight(
            name="position_embeddings",
            shape=(self.max_position_embeddings, self.embedding_size),
            initializer=initializer,
            dtype="float32",
            autocast=False,
        )
        self.layer_norm.build((None, None, self.embedding_size))
        if self.projection is not None:
            self.projection.build((None, None, self.embedding_size))
        self.built = True

    def call(self, input_word_ids, input_type_ids, training=None):
        seq_length = self._checked_seq_length(input_word_ids)
        embeddings = ops.take(self.word_embeddings, input_word_ids, axis=0)
        embeddings += ops.take(self.token_type_embeddings, input_type_ids, axis=0)
        embeddings += ops.expand_dims(self.position_embeddings[:seq_length], 0)
        embeddings = self.layer_norm(embeddings)
        embeddings = self.dropout(embeddings, training=training)
        if self.projection is not None:
            embeddings = self.projection(embeddings)
        return embeddings

    def _checked_seq_length(self, input_word_ids):
        """The sequence length, refusing one longer than the position table (no silent wrap)."""
        limit = self.max_position_embeddings
        length = ops.shape(input_word_ids)[1]  # an int, or a tensor in a TensorFlow graph of any length
        shown = f" {length}" if isinstance(length, int) else ""
        return dynamic_sizes.at_most(
            length, limit, f"input sequence length{shown} exceeds max_position_embeddings ({limit}); "
            "truncate the inputs or use a config with more positions.")

    def compute_output_shape(self, input_word_ids_shape, input_type_ids_shape=None):
        width = self.hidden_size if self.projection is not None else self.embedding_size
        return tuple(input_word_ids_shape) + (width,)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "vocab_size": self.vocab_size,
                "embedding_size": self.embedding_size,
                "hidden_size": self.hidden_size,
                "max_position_embeddings": self.max_position_embeddings,
                "type_vocab_size": self.type_vocab_size,
                "hidden_dropout_prob": self.hidden_dropout_prob,
                "initializer_range": self.initializer_range,
            }
        )
        return config
