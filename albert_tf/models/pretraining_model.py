"""`AlbertPretrainingModel`: the backbone with the masked-LM and sentence-order heads."""

import keras

from albert_tf.layers.last_block_at_positions import LastBlockAtPositions
from albert_tf.layers.masked_lm_head import MaskedLMHead
from albert_tf.layers.sentence_order_head import SentenceOrderHead
from albert_tf.models.albert_model import AlbertModel, as_config, encode_for_heads, policy_name, text_inputs
from albert_tf.models.serialization import RebuiltFromAlbertConfig


@keras.saving.register_keras_serializable(package="albert_tf")
class AlbertPretrainingModel(RebuiltFromAlbertConfig, keras.Model):
    """ALBERT with its pretraining heads: MLM (tied to the word embeddings) and SOP.

    Inputs: the backbone's three inputs plus `masked_lm_positions` int32 [B, P].
    Outputs: `sequence_output`, `pooled_output`, `mlm_logits` [B, P, V], `sop_logits` [B, 2]
    (logits in float32).
    """

    def __init__(self, config, dtype=None, **kwargs):
        config = as_config(config)
        # === Layers ===
        self.albert = AlbertModel(config, dtype=dtype, name="albert")
        self.masked_lm_head = MaskedLMHead(
            self.albert.embeddings,
            activation=config.hidden_act,
            initializer_range=config.initializer_range,
            dtype=dtype,
            name="masked_lm_head",
        )
        self.sentence_order_head = SentenceOrderHead(
            config.hidden_size, initializer_range=config.initializer_range, name="sentence_order_head"
        )
        self.last_block_at_positions = LastBlockAtPositions(
            self.albert.encoder, dtype=dtype, name="last_block_at_positions"
        )

        # === Functional model ===
        # The heads read the last block at [CLS] and the masked positions only, computed apart
        # (see `LastBlockAtPositions`): a training step, which needs nothing else, never
        # computes the last block at the other positions.
        inputs = text_inputs()
        positions = keras.Input(shape=(None,), dtype="int32", name="masked_lm_positions")
        inputs["masked_lm_positions"] = positions
        head_positions = keras.ops.concatenate([keras.ops.zeros_like(positions[:, :1]), positions], axis=1)
        encoder_outputs, head_rows = encode_for_heads(self.albert, self.last_block_at_positions, inputs, head_positions)
        pooled_output = self.albert.pooler(head_rows[:, 0, :])
        super().__init__(
            inputs=inputs,
            outputs={
                "sequence_output": encoder_outputs[-1],
                "pooled_output": pooled_output,
                "mlm_logits": self.masked_lm_head(head_rows[:, 1:, :]),
                "sop_logits": self.sentence_order_head(pooled_output),
            },
            **kwargs,
        )

        # === Config ===
        self.config = config
        self._policy_name = policy_name(dtype)
