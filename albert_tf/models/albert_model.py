"""`AlbertModel`: the ALBERT backbone as a functional Keras model."""

import keras

from albert_tf.config import AlbertConfig
from albert_tf.layers.factorized_embedding import FactorizedEmbedding
from albert_tf.layers.initializers import truncated_normal
from albert_tf.layers.shared_encoder import SharedTransformerEncoder
from albert_tf.models.serialization import RebuiltFromAlbertConfig

INPUT_NAMES = ("input_word_ids", "input_mask", "input_type_ids")


def text_inputs():
    """The backbone's named int32 inputs, each [batch, seq] with any seq <= max positions."""
    return {name: keras.Input(shape=(None,), dtype="int32", name=name) for name in INPUT_NAMES}


def policy_name(dtype):
    """A dtype policy argument as a serializable name (None means the global policy)."""
    return None if dtype is None else keras.dtype_policies.get(dtype).name


def encode_for_heads(albert, last_block_at_positions, inputs, positions):
    """Symbolic wiring for a model whose heads read a few positions of the last block.

    Runs `albert`'s layers on `inputs` (from `text_inputs()`) and returns `(encoder_outputs,
    rows)`: every block's full output, and the last block at `positions` [B, R] only, [B, R, H],
    from `last_block_at_positions` (a `LastBlockAtPositions` over `albert.encoder`). Heads fed
    from `rows` leave the full last block unused, and TF prunes it from the graph.
    """
    embedded = albert.embeddings(inputs["input_word_ids"], inputs["input_type_ids"])
    encoder_outputs = albert.encoder(embedded, inputs["input_mask"])
    last_block_input = encoder_outputs[-2] if len(encoder_outputs) > 1 else embedded
    return encoder_outputs, last_block_at_positions(last_block_input, inputs["input_mask"], positions)


def as_config(config):
    return config if isinstance(config, AlbertConfig) else AlbertConfig.from_dict(config)


@keras.saving.register_keras_serializable(package="albert_tf")
class AlbertModel(RebuiltFromAlbertConfig, keras.Model):
    """ALBERT's encoder: factorized embedding, shared Transformer blocks, tanh pooler on [CLS].

    Inputs: a dict of int32 `input_word_ids`, `input_mask` (1 = real token), `input_type_ids`,
    each [batch, seq]. Outputs: a dict with `sequence_output` [B, T, H], `pooled_output` [B, H]
    and `encoder_outputs` (every block's output, L * inner_group_num of them).

    Args:
        config: an `AlbertConfig` (or its dict).
        dtype: a Keras dtype policy, e.g. "mixed_bfloat16"; LayerNorm, softmax and logits stay float32.
    """

    def __init__(self, config, dtype=None, **kwargs):
        config = as_config(config)
        # === Layers ===
        self.embeddings = FactorizedEmbedding(
            vocab_size=config.vocab_size,
            embedding_size=config.embedding_size,
            hidden_size=config.hidden_size,
            max_position_embeddings=config.max_position_embeddings,
            type_vocab_size=config.type_vocab_size,
            dropout_rate=config.hidden_dropout_prob,
            initializer_range=config.initializer_range,
            dtype=dtype,
            name="embeddings",
        )
        self.encoder = SharedTransformerEncoder(
            num_layers=config.num_hidden_layers,
            hidden_size=config.hidden_size,
            num_heads=config.num_attention_heads,
            intermediate_size=config.intermediate_size,
            num_groups=config.num_hidden_groups,
            inner_group_num=config.inner_group_num,
            sharing=config.sharing,
            activation=config.hidden_act,
            dropout_rate=config.hidden_dropout_prob,
            attention_dropout_rate=config.attention_probs_dropout_prob,
            initializer_range=config.initializer_range,
            dtype=dtype,
            name="encoder",
        )
        self.pooler = keras.layers.Dense(
            config.hidden_size,
            activation="tanh",
            kernel_initializer=truncated_normal(config.initializer_range),
            dtype=dtype,
            name="pooler",
        )

        # === Functional model ===
        inputs = text_inputs()
        embedded = self.embeddings(inputs["input_word_ids"], inputs["input_type_ids"])
        encoder_outputs = self.encoder(embedded, inputs["input_mask"])
        sequence_output = encoder_outputs[-1]
        pooled_output = self.pooler(sequence_output[:, 0, :])
        super().__init__(
            inputs=inputs,
            outputs={
                "sequence_output": sequence_output,
                "pooled_output": pooled_output,
                "encoder_outputs": encoder_outputs,
            },
            **kwargs,
        )

        # === Config ===
        self.config = config
        self._policy_name = policy_name(dtype)
