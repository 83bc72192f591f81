"""The GLUE head: classification logits, or one regression score (STS-B)."""

import keras

from albert_tf.layers.pooled_logits_head import PooledLogitsHead

# The original's fine-tuning dropout on the pooled output (keep_prob 0.9), whatever the config says.
CLASSIFIER_DROPOUT = 0.1


@keras.saving.register_keras_serializable(package="albert_tf")
class ClassificationHead(PooledLogitsHead):
    """`num_labels` logits (1 = a regression score) from the pooled output, after dropout 0.1.

    Weights are the original's top-level `output_weights` [num_labels, H] and `output_bias`.
    """

    def __init__(self, num_labels, hidden_size, dropout_rate=CLASSIFIER_DROPOUT, initializer_range=0.02,
                 **kwargs):
        kwargs.pop("num_outputs", None)
        super().__init__(num_labels, hidden_size, dropout_rate=dropout_rate,
                         initializer_range=initializer_range, **kwargs)
        self.num_labels = num_labels

    def get_config(self):
        config = super().get_config()
        config["num_labels"] = config.pop("num_outputs")
        return config
