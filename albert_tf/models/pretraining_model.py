"""`AlbertPretrainingModel`: the backbone with the masked-LM and sentence-order heads."""

import keras

from albert_tf.layers.masked_lm_head import MaskedLMHead
from albert_tf.layers.sentence_order_head import SentenceOrderHead
from albert_tf.models.albert_model import INPUT_NAMES, AlbertModel, as_config, policy_name, text_inputs
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

        # === Functional model ===
        inputs = text_inputs()
        inputs["masked_lm_positions"] = keras.Input(
            shape=(None,), dtype="int32", name="masked_lm_positions"
        )
        backbone_outputs = self.albert({name: inputs[name] for name in INPUT_NAMES})
        sequence_output = backbone_outputs["sequence_output"]
        pooled_output = backbone_outputs["pooled_output"]
        super().__init__(
            inputs=inputs,
            outputs={
                "sequence_output": sequence_output,
                "pooled_output": pooled_output,
                "mlm_logits": self.masked_lm_head(sequence_output, inputs["masked_lm_positions"]),
                "sop_logits": self.sentence_order_head(pooled_output),
            },
            **kwargs,
        )

        # === Config ===
        self.config = config
        self._policy_name = policy_name(dtype)
