"""MLM + SOP losses, written so that summing over replicas gives the global batch's loss."""

from typing import NamedTuple

import tensorflow as tf

# The original's guard against a batch without any masked position (reference 2.3).
MLM_WEIGHT_EPSILON = 1e-5


class PretrainingLosses(NamedTuple):
    """`loss` is this replica's share of the global loss; the rest feed the metrics.
    (A NamedTuple, so that it can leave a `tf.function`.)"""

    loss: tf.Tensor
    masked_lm_losses: tf.Tensor  # [b, P] per-position cross-entropy
    masked_lm_correct: tf.Tensor  # [b, P] 1.0 where the argmax is the target
    sentence_order_losses: tf.Tensor  # [b]
    sentence_order_correct: tf.Tensor  # [b]


def pretraining_losses(outputs, features, masked_lm_weight_total, global_batch_size):
    """The original's loss: weighted-mean MLM + mean SOP, split into per-replica shares.

    The original divides by the sum of weights and the batch size of ONE device. Here the
    denominators are global (`masked_lm_weight_total` is the weight sum over every replica and
    micro-batch of the step), so the shares add up to exactly the loss of the whole batch, and
    one device, several replicas and gradient accumulation all train the same model.
    """
    mlm_logits = outputs["mlm_logits"]
    sop_logits = outputs["sop_logits"]
    mlm_ids = features["masked_lm_ids"]
    mlm_weights = tf.cast(features["masked_lm_weights"], tf.float32)
    sop_labels = tf.reshape(features["next_sentence_labels"], [-1])

    masked_lm_losses = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=mlm_ids, logits=mlm_logits)
    sentence_order_losses = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=sop_labels, logits=sop_logits)
    mlm_share = tf.reduce_sum(masked_lm_losses * mlm_weights) / (masked_lm_weight_total + MLM_WEIGHT_EPSILON)
    sop_share = tf.reduce_sum(sentence_order_losses) / tf.cast(global_batch_size, tf.float32)
    return PretrainingLosses(
        loss=mlm_share + sop_share,
        masked_lm_losses=masked_lm_losses,
        masked_lm_correct=_correct(mlm_logits, mlm_ids),
        sentence_order_losses=sentence_order_losses,
        sentence_order_correct=_correct(sop_logits, sop_labels),
    )


def _correct(logits, labels):
    predictions = tf.argmax(logits, axis=-1, output_type=tf.int32)
    return tf.cast(tf.equal(predictions, tf.cast(labels, tf.int32)), tf.float32)
