"""MLM + SOP losses, written so that summing over replicas gives the global batch's loss.

Model math, in `keras.ops` only: the same losses on TensorFlow, JAX and PyTorch.
"""

from typing import Any, NamedTuple

from keras import ops

# The original's guard against a batch without any masked position (reference 2.3).
MLM_WEIGHT_EPSILON = 1e-5


class PretrainingLosses(NamedTuple):
    """`loss` is this replica's share of the global loss; the rest feed the metrics.
    (A NamedTuple, so that it can leave a `tf.function` or a `jax.jit`.)"""

    loss: Any
    masked_lm_losses: Any  # [b, P] per-position cross-entropy
    masked_lm_correct: Any  # [b, P] 1.0 where the argmax is the target
    sentence_order_losses: Any  # [b]
    sentence_order_correct: Any  # [b]


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
    mlm_weights = ops.cast(features["masked_lm_weights"], "float32")
    sop_labels = ops.reshape(features["next_sentence_labels"], [-1])

    masked_lm_losses = ops.sparse_categorical_crossentropy(mlm_ids, mlm_logits, from_logits=True)
    sentence_order_losses = ops.sparse_categorical_crossentropy(sop_labels, sop_logits, from_logits=True)
    mlm_share = ops.sum(masked_lm_losses * mlm_weights) / (masked_lm_weight_total + MLM_WEIGHT_EPSILON)
    sop_share = ops.sum(sentence_order_losses) / ops.cast(global_batch_size, "float32")
    return PretrainingLosses(
        loss=mlm_share + sop_share,
        masked_lm_losses=masked_lm_losses,
        masked_lm_correct=_correct(mlm_logits, mlm_ids),
        sentence_order_losses=sentence_order_losses,
        sentence_order_correct=_correct(sop_logits, sop_labels),
    )


def _correct(logits, labels):
    predictions = ops.argmax(logits, axis=-1)
    return ops.cast(ops.equal(ops.cast(predictions, "int32"), ops.cast(labels, "int32")), "float32")
