"""The additive attention bias of padded keys, shared by dense and block-sparse attention."""

from keras import ops

# The original's additive mask: (1 - mask) * -10000 (not -inf), added to the scores.
MASK_ADDER = -10000.0


def attention_bias(input_mask):
    """[B, T] 0/1 mask -> the float32 [B, 1, 1, T] bias added to every query's scores."""
    mask = ops.cast(input_mask, "float32")
    # expand_dims, not [:, newaxis, newaxis, :]: TFLite's builtin ops have no new-axis slice.
    return ops.expand_dims(ops.expand_dims(1.0 - mask, axis=1), axis=1) * MASK_ADDER
