"""One Keras backend's run of `BlockSparseAttention` beside Hugging Face's PyTorch
`BigBirdBlockSparseAttention`, for tests/test_block_sparse_backends.py.

`KERAS_BACKEND=jax python tests/block_sparse_backend_case.py OUT.npz` writes what `run()` returns;
the test process runs it on TensorFlow itself. Both sides get the same queries, keys and values
(HF's projections of the same hidden states, computed here in NumPy), the same padding and, for the
comparison with HF, the pattern HF drew (train mode; HF's eval mode sets every random block to 0).
"""

import sys

import keras
import numpy as np
import torch
import transformers
from transformers.models.big_bird import modeling_big_bird

from albert_tf.layers.attention_mask import MASK_ADDER
from albert_tf.layers.block_sparse_attention import BlockSparseAttention, draw_random_blocks

BLOCK_SIZE, RANDOM_BLOCKS, HEADS, HEAD_SIZE = 8, 2, 2, 4
LENGTH = 128  # 16 blocks, past the dense rule's (5 + 2 * 2) * 8 = 72 tokens
SEED = 5


def _inputs():
    rng = np.random.default_rng(0)
    hidden_states = rng.normal(size=(2, LENGTH, HEADS * HEAD_SIZE)).astype(np.float32)
    mask = np.ones((2, LENGTH), np.float32)
    mask[1, LENGTH - 5 * BLOCK_SIZE - 3:] = 0  # the padding covers the last global block and more
    return hidden_states, mask


def _huggingface(hidden_states, mask):
    """HF's context [B, T, H], the pattern it drew [heads, blocks - 2, r] and its q, k, v [B, N, T, d]."""
    config = transformers.BigBirdConfig(
        hidden_size=HEADS * HEAD_SIZE, num_attention_heads=HEADS, attention_type="block_sparse",
        block_size=BLOCK_SIZE, num_random_blocks=RANDOM_BLOCKS, max_position_embeddings=LENGTH, use_bias=True)
    torch.manual_seed(0)
    attention = modeling_big_bird.BigBirdBlockSparseAttention(config, seed=3).train()
    drawn = []
    original = attention._create_rand_mask_from_inputs

    def recording(from_blocked_mask, to_blocked_mask, rand_attn, *args):
        drawn.append(rand_attn[0].numpy())
        return original(from_blocked_mask, to_blocked_mask, rand_attn, *args)

    attention._create_rand_mask_from_inputs = recording
    torch_mask = torch.from_numpy(mask)
    blocked, band_mask, from_mask, to_mask = modeling_big_bird.BigBirdModel.create_masks_for_block_sparse_attn(
        torch_mask, BLOCK_SIZE)
    with torch.no_grad():
        context, _ = attention(torch.from_numpy(hidden_states), band_mask=band_mask, from_mask=from_mask,
                               to_mask=to_mask, from_blocked_mask=blocked, to_blocked_mask=blocked)

    def heads(linear):
        projected = hidden_states @ linear.weight.detach().numpy().T + linear.bias.detach().numpy()
        return projected.reshape(2, LENGTH, HEADS, HEAD_SIZE).transpose(0, 2, 1, 3)

    return context.numpy(), drawn[0], [heads(attention.query), heads(attention.key), heads(attention.value)]


def _ours(layer, query, key, value, mask):
    def no_dense():
        raise AssertionError(f"{LENGTH} tokens run block-sparse")

    bias = ((1.0 - mask) * MASK_ADDER)[:, None, None, :]
    context = layer(query, key, value, bias, scale=HEAD_SIZE ** -0.5, dense_attention=no_dense)
    return keras.ops.convert_to_numpy(context).transpose(0, 2, 1, 3).reshape(2, LENGTH, HEADS * HEAD_SIZE)


def run():
    """The backend's name, HF's context and pattern, ours with that pattern, ours with our own
    drawn pattern (seed `SEED`), and that pattern."""
    hidden_states, mask = _inputs()
    huggingface, huggingface_pattern, (query, key, value) = _huggingface(hidden_states, mask)
    with_their_pattern = BlockSparseAttention(BLOCK_SIZE, RANDOM_BLOCKS, random_blocks=huggingface_pattern)
    drawn = BlockSparseAttention(BLOCK_SIZE, RANDOM_BLOCKS, seed=SEED)
    return {
        "backend": np.array(keras.backend.backend()),
        "huggingface": huggingface,
        "huggingface_pattern": huggingface_pattern,
        "ours_with_huggingface_pattern": _ours(with_their_pattern, query, key, value, mask),
        "ours_with_drawn_pattern": _ours(drawn, query, key, value, mask),
        "drawn_pattern": keras.ops.convert_to_numpy(
            draw_random_blocks(LENGTH // BLOCK_SIZE, HEADS, RANDOM_BLOCKS, SEED)),
    }


if __name__ == "__main__":
    np.savez(sys.argv[1], **run())
