"""`AlbertClassifier`: the backbone with a GLUE classification or regression head."""

import keras

from albert_tf.layers.classification_head import CLASSIFIER_DROPOUT, ClassificationHead
from albert_tf.models.albert_model import text_inputs
from albert_tf.models.serialization import RebuiltFromAlbertConfig
from albert_tf.models.task_backbone import backbone_for


@keras.saving.register_keras_serializable(package="albert_tf")
class AlbertClassifier(RebuiltFromAlbertConfig, keras.Model):
    """ALBERT for sentence(-pair) classification: `logits` [B, num_labels] in float32.

    `num_labels=1` is regression (STS-B): the single logit is the score. Inputs are the
    backbone's three; the output is a dict with `logits` and `pooled_output`.

    Args: `config`, `dtype` and `kernels` as `AlbertModel`'s, or `backbone`, an `AlbertModel`;
    `num_labels`; `dropout_rate` on the pooled output (the original's 0.1).
    """

    def __init__(self, config=None, num_labels=2, dropout_rate=CLASSIFIER_DROPOUT, dtype=None,
                 kernels="reference", backbone=None, **kwargs):
        # === Layers ===
        self.albert = backbone_for(config, dtype, kernels, backbone)
        config = self.albert.config
        self.classification_head = ClassificationHead(
            num_labels,
            config.hidden_size,
            dropout_rate=dropout_rate,
            initializer_range=config.initializer_range,
            name="classification_head",
        )

        # === Functional model ===
        inputs = text_inputs()
        pooled_output = self.albert(inputs)["pooled_output"]
        super().__init__(
            inputs=inputs,
            outputs={"logits": self.classification_head(pooled_output), "pooled_output": pooled_output},
            **kwargs,
        )

        # === Config ===
        self.config = config
        self.num_labels = num_labels
        self.dropout_rate = dropout_rate
        self.dtype_policy_name = self.albert.dtype_policy_name
        self.kernels = self.albert.kernels

    def extra_config(self):
        return {"num_labels": self.num_labels, "dropout_rate": self.dropout_rate}
