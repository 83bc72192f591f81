"""The encoder's last block computed at a few positions: all that pretraining heads read."""

import keras



class LastBlockAtPositions(keras.layers.Layer):
    """Runs `encoder`'s last block (its own weights, shared) for `positions` only.

    Why: the MLM and SOP heads read the final layer at [CLS] and the masked positions (~15%).
    A pretraining model that feeds its heads from this layer, and not from the full last block,
    lets TF prune the full last block out of a training step: most of one layer's work saved.
    The outputs equal the full block's rows at those positions (to float rounding).

    Call arguments: `block_input` [B, T, H] (the input of the last block), `input_mask` [B, T],
    `positions` int [B, R], `training`. Returns [B, R, H].
    """

    def __init__(self, encoder, **kwargs):
        super().__init__(**kwargs)
        self.encoder = encoder

    def call(self, block_input, input_mask, positions, training=None):
        return self.encoder.last_block_at(block_input, input_mask, positions, training=training)

    def compute_output_shape(self, block_input_shape, input_mask_shape=None, positions_shape=None):
        return tuple(positions_shape) + (block_input_shape[-1],)

    def get_config(self):
        # The encoder is a layer of the enclosing model, which rebuilds this one from its own
        # config (as `MaskedLMHead` does with the embedding): nothing more to record.
        return super().get_config()
