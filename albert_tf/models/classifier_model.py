"""`AlbertClassifier`: the backbone with a GLUE classification or regression head."""

import keras

from albert_tf.layers.classification_head import CLASSIFIER_DROPOUT, ClassificationHead
from albert_tf.layers.last_block_at_positions import LastBlockAtPositions
from albert_tf.models.albert_model import AlbertModel, as_config, encode_for_heads, policy_name, text_inputs
from albert_tf.models.serialization import RebuiltFromAlbertConfig


@keras.saving.register_keras_serializable(package="albert_tf")
class AlbertClassifier(RebuiltFromAlbertConfig, keras.Model):
    """ALBERT for sentence(-pair) classification: `logits` [B, num_labels] in float32.

    `num_labels=1` is regression (STS-B): the single logit is the score. Inputs are the
    backbone's three; the output is a dict with `logits` and `pooled_output`.
    """

    def __init__(self, config, num_labels, dropout_rate=CLASSIFIER_DROPOUT, dtype=None, **kwargs):
        config = as_config(config)
        # === Layers ===
        self.albert = AlbertModel(config, dtype=dtype, name="albert")
        self.classification_head = ClassificationHead(
            num_labels,
            config.hidden_size,
            dropout_rate=dropout_rate,
            initializer_range=config.initializer_range,
            name="classification_head",
        )

        self.last_block_at_positions = LastBlockAtPositions(
            self.albert.encoder, dtype=dtype, name="last_block_at_positions"
        )

        # === Functional model ===
        # Both outputs read [CLS] only, so the last block runs at [CLS] only (see
        # `LastBlockAtPositions`): training and serving skip most of one layer's work.
        inputs = text_inputs()
        cls_position = keras.ops.zeros_like(inputs["input_word_ids"][:, :1])
        _, cls_rows = encode_for_heads(self.albert, self.last_block_at_positions, inputs, cls_position)
        pooled_output = self.albert.pooler(cls_rows[:, 0, :])
        super().__init__(
            inputs=inputs,
            outputs={"logits": self.classification_head(pooled_output), "pooled_output": pooled_output},
            **kwargs,
        )

        # === Config ===
        self.config = config
        self.num_labels = num_labels
        self.dropout_rate = dropout_rate
        self._policy_name = policy_name(dtype)

    def extra_config(self):
        return {"num_labels": self.num_labels, "dropout_rate": self.dropout_rate}
