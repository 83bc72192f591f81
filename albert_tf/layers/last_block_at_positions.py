"""The encoder's last block computed at a few positions: all that pretraining heads read."""

import keras
import tensorflow as tf

from albert_tf.layers.attention import attention_bias
from albert_tf.layers.layer_norm import Float32Outputs


class LastBlockAtPositions(Float32Outputs, keras.layers.Layer):
    """Runs `encoder`'s last block (its own weights, shared) for `positions` only.

    Why: the MLM and SOP heads read the final layer at [CLS] and the masked positions (~15%).
    A pretraining model that feeds its heads from this layer, and not from the full last block,
    lets TF prune the full last block out of a training step: most of one layer's work saved.
    The outputs equal the full block's rows at those positions (to float rounding).

    Call arguments: `block_input` [B, T, H] (the input of the last block), `input_mask` [B, T],
    `positions` int [B, R], `training`. Returns [B, R, H]. The encoder belongs to the enclosing
    model, which rebuilds this layer from its own config (as `MaskedLMHead` does with the
    embedding), so the config records nothing more.
    """

    def __init__(self, encoder, **kwargs):
        super().__init__(autocast=False, **kwargs)  # the block input stays float32, as in the encoder
        self.encoder = encoder

    def call(self, block_input, input_mask, positions, training=None):
        attention, ffn = self.encoder.blocks()[-1]
        # Queries (and the feed-forward) run on the R rows, keys and values on all T positions.
        rows = tf.gather(block_input, tf.cast(positions, tf.int32), batch_dims=1)
        attended = attention(block_input, attention_bias(input_mask), training=training, query_states=rows)
        return ffn(attended, training=training)

    def compute_output_shape(self, block_input_shape, input_mask_shape=None, positions_shape=None):
        return tuple(positions_shape) + (block_input_shape[-1],)
