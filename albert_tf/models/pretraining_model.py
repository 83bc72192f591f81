"""`AlbertPretrainingModel`: the backbone with the masked-LM and sentence-order heads."""

import keras

from albert_tf.layers.masked_lm_head import MaskedLMHead
from albert_tf.layers.sentence_order_head import SentenceOrderHead
from albert_tf.models.albert_model import MASKED_OUTPUT, MASKED_POSITIONS, masked_positions_input, text_inputs
from albert_tf.models.serialization import RebuiltFromAlbertConfig
from albert_tf.models.task_backbone import backbone_for


@keras.saving.register_keras_serializable(package="albert_tf")
class AlbertPretrainingModel(RebuiltFromAlbertConfig, keras.Model):
    """ALBERT with its pretraining heads: MLM (tied to the word embeddings) and SOP.

    Inputs: the backbone's three inputs plus `masked_lm_positions` int32 [B, P].
    Outputs: `sequence_output`, `pooled_output`, `mlm_logits` [B, P, V], `sop_logits` [B, 2]
    (logits in float32).

    Args: `config`, `dtype` and `kernels` as `AlbertModel`'s, or `backbone`, an `AlbertModel`.
    """

    def __init__(self, config=None, dtype=None, kernels="reference", backbone=None, **kwargs):
        # === Layers ===
        self.albert = backbone_for(config, dtype, kernels, backbone)
        config = self.albert.config
        self.masked_lm_head = MaskedLMHead(
            self.albert.embeddings,
            hidden_act=config.hidden_act,
            initializer_range=config.initializer_range,
            dtype=self.albert.dtype_policy_name,
            name="masked_lm_head",
        )
        self.sentence_order_head = SentenceOrderHead(
            config.hidden_size, initializer_range=config.initializer_range, name="sentence_order_head"
        )

        # === Functional model ===
        # The backbone computes the last block at [CLS] and the masked positions only (its
        # `masked_sequence_output`): a training step, which needs nothing else, never computes the
        # full last block.
        inputs = {**text_inputs(), MASKED_POSITIONS: masked_positions_input()}
        encoded = self.albert(inputs)
        super().__init__(
            inputs=inputs,
            outputs={
                "sequence_output": encoded["sequence_output"],
                "pooled_output": encoded["pooled_output"],
                "mlm_logits": self.masked_lm_head(encoded[MASKED_OUTPUT]),
                "sop_logits": self.sentence_order_head(encoded["pooled_output"]),
            },
            **kwargs,
        )

        # === Config ===
        self.config = config
        self.dtype_policy_name = self.albert.dtype_policy_name
        self.kernels = self.albert.kernels
