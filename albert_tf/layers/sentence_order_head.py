"""The sentence-order-prediction (SOP) head."""

import keras

from albert_tf.layers.pooled_logits_head import PooledLogitsHead


@keras.saving.register_keras_serializable(package="albert_tf")
class SentenceOrderHead(PooledLogitsHead):
    """Two logits from the pooled output: 0 = segments in their original order, 1 = swapped.

    As in the original: no dropout, weights `cls/seq_relationship/output_weights` [2, H].
    """

    def __init__(self, hidden_size, initializer_range=0.02, **kwargs):
        kwargs.pop("num_outputs", None)
        kwargs.pop("dropout_rate", None)
        super().__init__(2, hidden_size, dropout_rate=0.0, initializer_range=initializer_range, **kwargs)
