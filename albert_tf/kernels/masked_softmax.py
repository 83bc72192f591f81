"""softmax(scale * scores + bias) over the keys as one XLA kernel forward and one backward."""

import functools

import tensorflow as tf

from albert_tf.kernels import xla_elementwise


def _logits(scores, bias, scale):
    return tf.cast(scores, tf.float32) * scale + tf.cast(bias, tf.float32)


@functools.lru_cache(maxsize=None)
def masked_softmax(scale):
    """The op for one `scale`: (scores [B, N, Q, T] in the compute dtype, bias [B, 1, 1, T]) ->
    probabilities in the scores' dtype, computed in float32."""

    def masked_softmax_forward(scores, bias):
        # Also returns each row's max and sum of exponentials: with them the backward recomputes
        # the same float32 probabilities in the pass that uses them, with no other reductions.
        # (Not as one log-sum-exp: a fully masked row's is about -10000, where float32 keeps
        # only three decimals.)
        logits = _logits(scores, bias, scale)
        peak = tf.reduce_max(logits, axis=-1, keepdims=True)
        exps = tf.exp(logits - peak)
        total = xla_elementwise.row_sums(exps)
        return tf.cast(exps / total, scores.dtype), peak, total

    def masked_softmax_backward(scores, bias, peak, total, upstream):
        # d scores = scale * p * (g - sum(g * p)) over the keys.
        probs = tf.exp(_logits(scores, bias, scale) - peak) / total
        upstream = tf.cast(upstream, tf.float32)
        return tf.cast(scale * probs * (upstream - xla_elementwise.row_sums(upstream * probs)), scores.dtype)

    backward_kernel = xla_elementwise.xla_kernel(masked_softmax_backward)

    def gradient(scores, bias, peak, total, upstream):
        grad = backward_kernel(scores, bias, peak, total, upstream)
        # The bias' gradient, summed over the dimensions it was broadcast along: a separate op, so
        # that TF prunes it when nothing reads it (the bias comes from an integer mask).
        broadcast = [axis for axis, (b, s) in enumerate(zip(bias.shape, scores.shape)) if b == 1 != s]
        bias_grad = tf.reduce_sum(tf.cast(grad, tf.float32), axis=broadcast, keepdims=True) / scale
        return grad, tf.cast(bias_grad, bias.dtype)

    return xla_elementwise.with_gradient(xla_elementwise.xla_kernel(masked_softmax_forward), gradient, saved=2)
