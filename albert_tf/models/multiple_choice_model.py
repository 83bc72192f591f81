"""`AlbertMultipleChoice`: one score per option from the pooled output, a softmax over the options (RACE)."""

import keras
from keras import ops

from albert_tf.layers.classification_head import CLASSIFIER_DROPOUT, ClassificationHead
from albert_tf.models.albert_model import INPUT_NAMES
from albert_tf.models.serialization import RebuiltFromAlbertConfig
from albert_tf.models.task_backbone import backbone_for


class OptionRows(keras.layers.Layer):
    """[B, num_choices, L] -> [B * num_choices, L]: each option a row of its own for the backbone."""

    def call(self, inputs):
        return ops.reshape(inputs, (-1, ops.shape(inputs)[-1]))

    def compute_output_shape(self, input_shape):
        return (None, input_shape[-1])


@keras.saving.register_keras_serializable(package="albert_tf")
class AlbertMultipleChoice(RebuiltFromAlbertConfig, keras.Model):
    """Inputs: the backbone's three, each [B, num_choices, L]; output: logits [B, num_choices] (float32).

    Each option's row goes through the encoder on its own; its pooled output, after dropout 0.1,
    gets one score from the original's `output_weights` [1, H] and `output_bias` [1].
    """

    def __init__(self, config=None, num_choices=4, dropout_rate=CLASSIFIER_DROPOUT, dtype=None, kernels="reference",
                 backbone=None, **kwargs):
        # === Layers ===
        self.albert = backbone_for(config, dtype, kernels, backbone)
        config = self.albert.config
        self.option_rows = OptionRows(name="option_rows")
        self.classification_head = ClassificationHead(1, config.hidden_size, dropout_rate=dropout_rate,
                                                      initializer_range=config.initializer_range,
                                                      name="classification_head")

        # === Functional model ===
        inputs = {name: keras.Input(shape=(num_choices, None), dtype="int32", name=name) for name in INPUT_NAMES}
        pooled_output = self.albert({name: self.option_rows(inputs[name]) for name in INPUT_NAMES})["pooled_output"]
        scores = self.classification_head(pooled_output)
        super().__init__(inputs=inputs, outputs=keras.ops.reshape(scores, (-1, num_choices)), **kwargs)

        # === Config ===
        self.config = config
        self.num_choices = num_choices
        self.dropout_rate = dropout_rate
        self.dtype_policy_name = self.albert.dtype_policy_name
        self.kernels = self.albert.kernels

    def example_inputs(self, batch_size=1, length=8):
        """Zero inputs of the model's shape, e.g. to trace it."""
        return {name: ops.zeros((batch_size, self.num_choices, length), "int32") for name in INPUT_NAMES}

    def extra_config(self):
        return {"num_choices": self.num_choices, "dropout_rate": self.dropout_rate}
