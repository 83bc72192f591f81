"""The pretraining TFRecord schema, defined once: the original's features (reference section 4.5).

The writer (`data_prep.pretraining_features`) encodes these features in this order and the
reader (`albert_tf.pretraining.data`) parses them from here. No TensorFlow: the data builder's
worker processes import this module.
"""

import dataclasses

MAX_SEQ_LENGTH = "max_seq_length"
MAX_PREDICTIONS = "max_predictions_per_seq"


@dataclasses.dataclass(frozen=True)
class Feature:
    """One feature: its name, "int64" or "float32", and the setting its length is (None: one value)."""

    name: str
    dtype: str
    length_setting: str = None

    def length(self, max_seq_length, max_predictions_per_seq):
        return {MAX_SEQ_LENGTH: max_seq_length, MAX_PREDICTIONS: max_predictions_per_seq, None: 1}[self.length_setting]


FEATURES = (
    Feature("input_ids", "int64", MAX_SEQ_LENGTH),
    Feature("input_mask", "int64", MAX_SEQ_LENGTH),
    Feature("segment_ids", "int64", MAX_SEQ_LENGTH),
    # Where whole words start; written as the original does, never read (its on-the-fly masking
    # that used it was not released).
    Feature("token_boundary", "int64", MAX_SEQ_LENGTH),
    Feature("masked_lm_positions", "int64", MAX_PREDICTIONS),
    Feature("masked_lm_ids", "int64", MAX_PREDICTIONS),
    Feature("masked_lm_weights", "float32", MAX_PREDICTIONS),
    Feature("next_sentence_labels", "int64"),
)
