"""The backbone's inputs from the tokens every fine-tuning feature file stores (GLUE's, SQuAD's):
`input_ids` and `segment_ids` of one row, as one parsed `tf.train.Example` holds them."""

import tensorflow as tf


def backbone_inputs(parsed):
    """`input_word_ids`, `input_mask` (every stored token is real: padding comes at batching) and
    `input_type_ids` of the parsed row, as int32."""
    input_ids = tf.cast(parsed["input_ids"], tf.int32)
    return {
        "input_word_ids": input_ids,
        "input_mask": tf.ones_like(input_ids),
        "input_type_ids": tf.cast(parsed["segment_ids"], tf.int32),
    }
