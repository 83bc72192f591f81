"""One `tf.train.Example` per instance, in the schema of `albert_tf.pretraining.schema`.

Names, dtypes, order and zero padding are the original's, so files from its script and from ours
are read by the same parser (`albert_tf.pretraining.data`, Model Garden's BERT pretraining loader).
"""

from albert_tf.pretraining.schema import FEATURES
from data_prep import tfrecord

_ENCODERS = {"int64": tfrecord.int64_list_feature, "float32": tfrecord.float_list_feature}

_FLOAT32_ONE = b"\x00\x00\x80\x3f"
_FLOAT32_ZERO = b"\x00\x00\x00\x00"


class InstanceEncoder:
    """`Instance` -> serialised Example, padded to max_seq_length and to the predictions length."""

    def __init__(self, max_seq_length, max_predictions, vocab_size):
        self.max_seq_length = max_seq_length
        self.max_predictions = max_predictions
        self._varints = tfrecord.VarintTable(max(vocab_size, max_seq_length))

    def encode(self, instance):
        num_tokens = len(instance.input_ids)
        token_padding = self.max_seq_length - num_tokens
        num_a_segment = instance.num_a_tokens + 2  # [CLS] A [SEP]
        num_predictions = len(instance.masked_lm_positions)
        prediction_padding = self.max_predictions - num_predictions
        if token_padding < 0 or prediction_padding < 0:
            raise ValueError(f"instance of {num_tokens} tokens and {num_predictions} predictions does "
                             f"not fit {self.max_seq_length} / {self.max_predictions}")
        pack = self._varints.pack
        # Values packed as the encoder of each feature's dtype takes them (varints, float32 bytes).
        packed = {
            "input_ids": pack(instance.input_ids) + bytes(token_padding),
            "input_mask": b"\x01" * num_tokens + bytes(token_padding),
            "segment_ids": bytes(num_a_segment) + b"\x01" * (num_tokens - num_a_segment) + bytes(token_padding),
            "token_boundary": bytes(instance.token_boundary) + bytes(token_padding),
            "masked_lm_positions": pack(instance.masked_lm_positions) + bytes(prediction_padding),
            "masked_lm_ids": pack(instance.masked_lm_ids) + bytes(prediction_padding),
            "masked_lm_weights": _FLOAT32_ONE * num_predictions + _FLOAT32_ZERO * prediction_padding,
            "next_sentence_labels": bytes([int(instance.is_random_next)]),
        }
        return tfrecord.example((feature.name, _ENCODERS[feature.dtype](packed[feature.name])) for feature in FEATURES)
