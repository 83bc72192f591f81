"""The attention half of an ALBERT Transformer block (post-LN, as in BERT)."""

import functools
import math

import keras
import tensorflow as tf

from albert_tf.layers import fused_elementwise
from albert_tf.layers.dense_2d import dense_2d, stacked_dense_2d
from albert_tf.layers.initializers import truncated_normal
from albert_tf.layers.layer_norm import Float32Outputs, add_and_norm, layer_norm
from albert_tf.layers.weight_casts import WeightCasts

# The original's additive mask: (1 - mask) * -10000 (not -inf), added to the scores.
MASK_ADDER = -10000.0


def attention_bias(input_mask):
    """[B, T] 0/1 mask -> the float32 [B, 1, 1, T] bias added to every query's scores."""
    mask = tf.cast(input_mask, tf.float32)
    return (1.0 - mask)[:, tf.newaxis, tf.newaxis, :] * MASK_ADDER


def _logits(scores, bias, scale):
    return tf.cast(scores, tf.float32) * scale + tf.cast(bias, tf.float32)


def _probabilities(scores, bias, scale):
    return tf.nn.softmax(_logits(scores, bias, scale), axis=-1)


@functools.lru_cache(maxsize=None)
def _masked_softmax_xla(scale):
    """softmax(scale * scores + bias) with its gradient, each one XLA kernel (one per scale)."""

    def masked_softmax_forward(scores, bias):
        # Also returns each row's max and sum of exponentials: with them the backward recomputes
        # the same float32 probabilities in the pass that uses them, with no other reductions.
        # (Not as one log-sum-exp: a fully masked row's is about -10000, where float32 keeps
        # only three decimals.)
        logits = _logits(scores, bias, scale)
        peak = tf.reduce_max(logits, axis=-1, keepdims=True)
        exps = tf.exp(logits - peak)
        total = fused_elementwise.row_sums(exps)
        return tf.cast(exps / total, scores.dtype), peak, total

    def masked_softmax_backward(scores, bias, peak, total, upstream):
        # d scores = scale * p * (g - sum(g * p)) over the keys.
        probs = tf.exp(_logits(scores, bias, scale) - peak) / total
        upstream = tf.cast(upstream, tf.float32)
        return tf.cast(scale * probs * (upstream - fused_elementwise.row_sums(upstream * probs)), scores.dtype)

    backward_kernel = fused_elementwise.xla_kernel(masked_softmax_backward)

    def gradient(scores, bias, peak, total, upstream):
        grad = backward_kernel(scores, bias, peak, total, upstream)
        # The bias' gradient, summed over the dimensions it was broadcast along: a separate op, so
        # that TF prunes it when nothing reads it (the bias comes from an integer mask).
        broadcast = [axis for axis, (b, s) in enumerate(zip(bias.shape, scores.shape)) if b == 1 != s]
        bias_grad = tf.reduce_sum(tf.cast(grad, tf.float32), axis=broadcast, keepdims=True) / scale
        return grad, tf.cast(bias_grad, bias.dtype)

    return fused_elementwise.with_gradient(fused_elementwise.xla_kernel(masked_softmax_forward), gradient, saved=2)


def attention_probabilities(query, key, bias, scale, inference=False):
    """softmax(scale * query @ key^T + bias) over the keys: [B, N, Q, d], [B, N, T, d] -> [B, N, Q, T].

    The softmax is taken in float32 and returned in the query's dtype. Three forms:
    - `inference=True` (no gradient will be taken) where
      `fused_elementwise.onednn_inference(dtype)` holds (float32, or bfloat16 on CPUs where
      oneDNN runs it): the original's op order, matmul, scale, add the mask,
      softmax, all in the query's dtype. TF's oneDNN rewrites make the first three one fused
      batch matmul (scale and mask applied to the float32 accumulator), and oneDNN's softmax
      computes in float32 whatever its dtype (tested). Under bfloat16 the mask adder rounds
      to -9984, which changes nothing unless every key of a row is masked.
    - where `fused_elementwise` applies: scale, mask and softmax are one XLA kernel forward and
      one backward.
    - otherwise plain TF ops: the queries are scaled (Q x d, less work than the Q x T scores),
      the mask add and softmax are separate passes, four under mixed precision (cast up, add,
      softmax, cast down).
    `scale` multiplies before any rounding to the compute dtype, so for a power-of-two scale
    (head size 64) the last two forms give the same bits.
    """
    if inference and fused_elementwise.onednn_inference(query.dtype):
        scores = tf.matmul(query, key, transpose_b=True) * tf.cast(scale, query.dtype)
        return tf.nn.softmax(scores + tf.cast(bias, query.dtype), axis=-1)
    if all(fused_elementwise.applies(t) for t in (query, key, bias)) and bias.shape.rank == query.shape.rank:
        return _masked_softmax_xla(scale)(tf.matmul(query, key, transpose_b=True), bias)
    scores = tf.matmul(query * tf.cast(scale, query.dtype), key, transpose_b=True)
    return tf.cast(_probabilities(scores, bias, 1.0), query.dtype)


class AttentionSubLayer(Float32Outputs, keras.layers.Layer):
    """Multi-head self-attention, output projection, dropout, residual add and its LayerNorm.

    Query/key/value/output kernels are 2-D [H, H] exactly as the original stores them, so
    checkpoints map one to one (and LAMB's per-tensor trust ratios stay the original's).
    Scores are taken in the compute dtype and the softmax in float32 (`attention_probabilities`);
    `training` falsy selects the inference forms (`_heads`, `attention_probabilities`).
    Inputs are not autocast: the residual stream stays float32 (see `add_and_norm`).

    Call arguments: `hidden_states` [B, T, H], `bias` (from `attention_bias`), `training`, and
    optionally `query_states` [B, Q, H]: rows to compute outputs for (queries and residual come
    from them, keys and values from all of `hidden_states`); the output is then [B, Q, H];
    `casts`, a `WeightCasts` shared by the layers of one forward pass.
    """

    def __init__(
        self,
        hidden_size,
        num_heads,
        dropout_rate=0.0,
        attention_dropout_rate=0.0,
        initializer_range=0.02,
        **kwargs,
    ):
        super().__init__(autocast=False, **kwargs)
        if hidden_size % num_heads:
            raise ValueError(
                f"hidden_size ({hidden_size}) must be divisible by num_heads ({num_heads})."
            )
        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.head_size = hidden_size // num_heads
        self.dropout_rate = dropout_rate
        self.attention_dropout_rate = attention_dropout_rate
        self.initializer_range = initializer_range

        def dense(name):
            return keras.layers.Dense(
                hidden_size,
                kernel_initializer=truncated_normal(initializer_range),
                dtype=self.dtype_policy,
                name=name,
            )

        self.query = dense("query")
        self.key = dense("key")
        self.value = dense("value")
        self.output_dense = dense("output_dense")
        self.attention_dropout = keras.layers.Dropout(
            attention_dropout_rate, dtype=self.dtype_policy, name="attention_dropout"
        )
        self.output_dropout = keras.layers.Dropout(
            dropout_rate, dtype=self.dtype_policy, name="output_dropout"
        )
        self.layer_norm = layer_norm("layer_norm")

    def build(self, hidden_states_shape, bias_shape=None):
        for dense in (self.query, self.key, self.value, self.output_dense):
            dense.build(hidden_states_shape)
        self.layer_norm.build(hidden_states_shape)
        self.built = True

    def _heads(self, projections, inputs, casts, inference):
        """`inputs` [B, T, H] through the Dense `projections`, each result split into heads:
        [B, N, T, d] each.

        Training graphs run one matmul against the kernels side by side, then one transpose
        into heads. Inference on oneDNN runs each head's projection as its own GEMM of a
        broadcast batch matmul, [1, B, 1, T, H] @ [k, 1, N, H, d] + bias, whose output is already
        head-major and split along its first axis, which TF does without a copy: no transpose
        (in training its gradient would sum a [k, B, N, T, H] tensor, so it is not used there).
        """
        if inference and fused_elementwise.onednn_inference(self.compute_dtype):
            kernel, bias = self._per_head_weights(projections, casts)
            shape = tf.shape(inputs)  # an explicit rank-5 shape lets the rewrites see the ranks
            inputs = tf.reshape(inputs, [1, shape[0], 1, shape[1], self.hidden_size])
            return tf.unstack(tf.matmul(inputs, kernel) + bias, num=len(projections))
        shape = tf.shape(inputs)
        joined = stacked_dense_2d(projections, inputs, casts)
        joined = tf.reshape(joined, [shape[0], shape[1], len(projections), self.num_heads, self.head_size])
        return tf.unstack(tf.transpose(joined, [2, 0, 3, 1, 4]), num=len(projections))

    def _per_head_weights(self, projections, casts):
        """The k kernels [H, H] as one [k, 1, N, H, d] and the biases as one [k, 1, N, 1, d], in
        the compute dtype, made once per pass."""
        dtype, heads, size = self.compute_dtype, self.num_heads, self.head_size

        def kernel(values):
            per_head = tf.reshape(tf.stack(values), [len(values), 1, -1, heads, size])
            return tf.cast(tf.transpose(per_head, [0, 1, 3, 2, 4]), dtype)

        def bias(values):
            return tf.cast(tf.reshape(tf.stack(values), [len(values), 1, heads, 1, size]), dtype)

        return (casts.derived(("per_head_kernel", dtype), [p.kernel for p in projections], kernel),
                casts.derived(("per_head_bias", dtype), [p.bias for p in projections], bias))

    def call(self, hidden_states, bias, training=None, query_states=None, casts=None):
        states = tf.cast(hidden_states, self.compute_dtype)  # cast once, for all three projections
        casts = casts or WeightCasts()
        if query_states is None:
            query_states = hidden_states
            query, key, value = self._heads([self.query, self.key, self.value], states, casts, not training)
        else:
            (query,) = self._heads([self.query], tf.cast(query_states, self.compute_dtype), casts, not training)
            key, value = self._heads([self.key, self.value], states, casts, not training)
        batch, queries = tf.shape(query_states)[0], tf.shape(query_states)[1]

        probs = attention_probabilities(query, key, bias, 1.0 / math.sqrt(self.head_size), inference=not training)
        probs = self.attention_dropout(probs, training=training)

        context = tf.transpose(tf.matmul(probs, value), [0, 2, 1, 3])
        context = tf.reshape(context, [batch, queries, self.hidden_size])
        output = self.output_dropout(dense_2d(self.output_dense, context, casts), training=training)
        return add_and_norm(self.layer_norm, query_states, output)

    def compute_output_shape(self, hidden_states_shape, bias_shape=None, query_states_shape=None):
        return hidden_states_shape if query_states_shape is None else query_states_shape

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "hidden_size": self.hidden_size,
                "num_heads": self.num_heads,
                "dropout_rate": self.dropout_rate,
                "attention_dropout_rate": self.attention_dropout_rate,
                "initializer_range": self.initializer_range,
            }
        )
        return config
