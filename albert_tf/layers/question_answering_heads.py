"""The original's SQuAD heads, on the encoder's `sequence_output` [B, L, H], computed in float32.

`SpanLogitsHead` (v1.1, `squad_utils.create_v1_model`): one linear map per position to a start
and an end logit (weights `output_weights` [2, H] and `output_bias` [2], as the original stores them).
`AnswerabilitySpanHead` (v2.0, `create_v2_model`, XLNet's head): start log-probabilities; end
log-probabilities conditioned on a start (the gold one in training, each of the top
`start_n_top` at inference, keeping `end_n_top` ends per start); and an answerability logit
from [CLS] and the start-probability-weighted sequence. Positions where `p_mask` is 1 get
-1e30 before every softmax.
"""

import keras
from keras import ops

from albert_tf.choices import END_N_TOP, START_N_TOP
from albert_tf.layers.initializers import truncated_normal
from albert_tf.layers.layer_norm import layer_norm
from albert_tf.layers.rows import gather_rows

MASKED_LOGIT = 1e30
ANSWER_DROPOUT = 0.1


def _masked(logits, p_mask):
    return logits * (1.0 - p_mask) - MASKED_LOGIT * p_mask


@keras.saving.register_keras_serializable(package="albert_tf")
class SpanLogitsHead(keras.layers.Layer):
    """`start_logits`, `end_logits` [B, L] from `sequence_output` [B, L, H]."""

    def __init__(self, hidden_size, initializer_range=0.02, **kwargs):
        kwargs["dtype"] = "float32"
        super().__init__(**kwargs)
        self.hidden_size = hidden_size
        self.initializer_range = initializer_range

    def build(self, input_shape=None):
        self.output_weights = self.add_weight(name="output_weights", shape=(2, self.hidden_size),
                                              initializer=truncated_normal(self.initializer_range))
        self.output_bias = self.add_weight(name="output_bias", shape=(2,), initializer="zeros")

    def call(self, sequence_output):
        logits = ops.einsum("blh,nh->nbl", ops.cast(sequence_output, "float32"), self.output_weights)
        logits += self.output_bias[:, None, None]
        return {"start_logits": logits[0], "end_logits": logits[1]}

    def get_config(self):
        config = super().get_config()
        config.pop("dtype", None)
        config.update({"hidden_size": self.hidden_size, "initializer_range": self.initializer_range})
        return config


@keras.saving.register_keras_serializable(package="albert_tf")
class AnswerabilitySpanHead(keras.layers.Layer):
    """SQuAD 2.0 head. `call(sequence_output, p_mask, start_positions=None, training=False)`.

    Training (needs the gold `start_positions` [B]): `start_log_probs`, `end_log_probs` [B, L],
    `cls_logits` [B]. Inference: `start_top_log_probs`, `start_top_index` [B, start_n_top],
    `end_top_log_probs`, `end_top_index` [B, start_n_top * end_n_top] and `cls_logits` [B]
    (higher = more likely unanswerable).
    """

    def __init__(self, hidden_size, start_n_top=START_N_TOP, end_n_top=END_N_TOP, dropout_rate=ANSWER_DROPOUT,
                 initializer_range=0.02, **kwargs):
        kwargs["dtype"] = "float32"
        super().__init__(**kwargs)
        self.hidden_size = hidden_size
        self.start_n_top = start_n_top
        self.end_n_top = end_n_top
        self.dropout_rate = dropout_rate
        self.initializer_range = initializer_range

        def dense(units, name, activation=None, use_bias=True):
            return keras.layers.Dense(units, activation=activation, use_bias=use_bias, name=name, dtype="float32",
                                      kernel_initializer=truncated_normal(initializer_range))

        self.start_logits_dense = dense(1, "start_logits")
        self.end_logits_dense_0 = dense(hidden_size, "end_logits_dense_0", activation="tanh")
        self.end_logits_norm = layer_norm("end_logits_layer_norm")
        self.end_logits_dense_1 = dense(1, "end_logits_dense_1")
        self.answer_class_dense_0 = dense(hidden_size, "answer_class_dense_0", activation="tanh")
        self.answer_class_dropout = keras.layers.Dropout(dropout_rate, name="answer_class_dropout")
        self.answer_class_dense_1 = dense(1, "answer_class_dense_1", use_bias=False)

    def build(self, input_shape=None):
        hidden = self.hidden_size
        self.start_logits_dense.build((None, None, hidden))
        self.end_logits_dense_0.build((None, None, 2 * hidden))
        self.end_logits_norm.build((None, None, hidden))
        self.end_logits_dense_1.build((None, None, hidden))
        self.answer_class_dense_0.build((None, 2 * hidden))
        self.answer_class_dense_1.build((None, hidden))

    def _end_logits(self, sequence, start_features):
        """End logits [..., L] of `sequence` [B, L, H] paired with `start_features` broadcast to it."""
        start_features = ops.broadcast_to(start_features, ops.shape(sequence))
        hidden = self.end_logits_dense_0(ops.concatenate([sequence, start_features], axis=-1))
        return ops.squeeze(self.end_logits_dense_1(self.end_logits_norm(hidden)), -1)

    def call(self, sequence_output, p_mask, start_positions=None, training=False):
        sequence = ops.cast(sequence_output, "float32")
        p_mask = ops.cast(p_mask, "float32")
        start_logits = _masked(ops.squeeze(self.start_logits_dense(sequence), -1), p_mask)
        start_log_probs = ops.log_softmax(start_logits, -1)
        outputs = {}
        if training:
            start_features = gather_rows(sequence, ops.expand_dims(start_positions, 1))  # [B, 1, H]
            end_logits = _masked(self._end_logits(sequence, start_features), p_mask)
            outputs["start_log_probs"] = start_log_probs
            outputs["end_log_probs"] = ops.log_softmax(end_logits, -1)
        else:
            start_top_log_probs, start_top_index = ops.top_k(start_log_probs, k=self.start_n_top)
            start_features = gather_rows(sequence, start_top_index)  # [B, K, H]
            tiled = ops.tile(ops.expand_dims(sequence, 1), (1, self.start_n_top, 1, 1))  # [B, K, L, H]
            end_logits = _masked(self._end_logits(tiled, ops.expand_dims(start_features, 2)),
                                 ops.expand_dims(p_mask, 1))
            end_top_log_probs, end_top_index = ops.top_k(ops.log_softmax(end_logits, -1), k=self.end_n_top)
            beam = (-1, self.start_n_top * self.end_n_top)
            outputs.update({
                "start_top_log_probs": start_top_log_probs,
                "start_top_index": start_top_index,
                "end_top_log_probs": ops.reshape(end_top_log_probs, beam),
                "end_top_index": ops.reshape(end_top_index, beam),
            })
        start_feature = ops.einsum("blh,bl->bh", sequence, ops.softmax(start_logits, -1))
        answer = self.answer_class_dense_0(ops.concatenate([start_feature, sequence[:, 0]], axis=-1))
        answer = self.answer_class_dropout(answer, training=training)
        outputs["cls_logits"] = ops.squeeze(self.answer_class_dense_1(answer), -1)
        return outputs

    def get_config(self):
        config = super().get_config()
        config.pop("dtype", None)
        config.update({"hidden_size": self.hidden_size, "start_n_top": self.start_n_top,
                       "end_n_top": self.end_n_top, "dropout_rate": self.dropout_rate,
                       "initializer_range": self.initializer_range})
        return config
