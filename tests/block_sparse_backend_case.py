"""One Keras backend's run of `BlockSparseAttention` beside Hugging Face's PyTorch
`BigBirdBlockSparseAttention`, for tests/test_block_sparse_backends.py.

`KERAS_BACKEND=jax python tests/block_sparse_backend_case.py OUT.npz` writes what `run()` returns;
the test process runs it on TensorFlow itself. Both sides get the same queries, keys and values
(HF's projections of the same hidden states, computed here in NumPy), the same padding and, for the
comparison with HF, the pattern HF drew (train mode; HF's eval mode sets every random block to 0).
Outputs and the gradients by the hidden states (through HF's projections) are compared.
"""

import sys

import keras
import numpy as np
import torch
import transformers
from keras import ops
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


def _huggingface(hidden_states, mask, output_weights):
    """HF's context [B, T, H], the gradient of sum(context * output_weights) by the hidden states,
    the pattern HF drew [heads, blocks - 2, r] and its projections' NumPy weights and biases."""
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
    hidden = torch.from_numpy(hidden_states).requires_grad_()
    context, _ = attention(hidden, band_mask=band_mask, from_mask=from_mask, to_mask=to_mask,
                           from_blocked_mask=blocked, to_blocked_mask=blocked)
    (context * torch.from_numpy(output_weights)).sum().backward()
    projections = [(linear.weight.detach().numpy().T, linear.bias.detach().numpy())
                   for linear in (attention.query, attention.key, attention.value)]
    return context.detach().numpy(), hidden.grad.numpy(), drawn[0], projections


def _ours(layer, projections, mask):
    """Ours as a function of the hidden states [B, T, H] -> context [B, T, H], in keras.ops."""
    bias = ((1.0 - mask) * MASK_ADDER)[:, None, None, :]

    def no_dense():
        raise AssertionError(f"{LENGTH} tokens run block-sparse")

    def heads(hidden_states, kernel, bias_vector):
        projected = ops.add(ops.matmul(hidden_states, kernel), bias_vector)
        projected = ops.reshape(projected, (2, LENGTH, HEADS, HEAD_SIZE))
        return ops.transpose(projected, (0, 2, 1, 3))

    def context(hidden_states):
        query, key, value = (heads(hidden_states, *projection) for projection in projections)
        attended = layer(query, key, value, bias, scale=HEAD_SIZE ** -0.5, dense_attention=no_dense)
        return ops.reshape(ops.transpose(attended, (0, 2, 1, 3)), (2, LENGTH, HEADS * HEAD_SIZE))

    return context


def _value_and_gradient(function, hidden_states, output_weights):
    """function(hidden_states) and the gradient of sum(function(...) * output_weights), through
    the backend's own autodiff."""
    backend = keras.backend.backend()
    if backend == "tensorflow":
        import tensorflow as tf  # pylint: disable=import-outside-toplevel

        hidden = tf.constant(hidden_states)
        with tf.GradientTape() as tape:
            tape.watch(hidden)
            value = function(hidden)
            loss = tf.reduce_sum(value * output_weights)
        gradient = tape.gradient(loss, hidden)
    elif backend == "jax":
        import jax  # pylint: disable=import-outside-toplevel

        value = function(hidden_states)
        gradient = jax.grad(lambda hidden: ops.sum(function(hidden) * output_weights))(hidden_states)
    else:
        hidden = torch.from_numpy(hidden_states).requires_grad_()
        value = function(hidden)
        ops.sum(value * ops.convert_to_tensor(output_weights)).backward()
        gradient = hidden.grad
    return ops.convert_to_numpy(value), ops.convert_to_numpy(gradient)


def run():
    """The backend's name; HF's context, gradient and pattern; ours with that pattern, and with
    our own drawn pattern (seed `SEED`), each with its gradient; that drawn pattern."""
    hidden_states, mask = _inputs()
    output_weights = np.random.default_rng(1).normal(size=hidden_states.shape).astype(np.float32)
    huggingface, huggingface_gradient, huggingface_pattern, projections = _huggingface(
        hidden_states, mask, output_weights)
    results = {"backend": np.array(keras.backend.backend()), "huggingface": huggingface,
               "huggingface_gradient": huggingface_gradient, "huggingface_pattern": huggingface_pattern}
    for name, layer in (
            ("ours_with_huggingface_pattern",
             BlockSparseAttention(BLOCK_SIZE, RANDOM_BLOCKS, random_blocks=huggingface_pattern)),
            ("ours_with_drawn_pattern", BlockSparseAttention(BLOCK_SIZE, RANDOM_BLOCKS, seed=SEED))):
        results[name], results[f"{name}_gradient"] = _value_and_gradient(
            _ours(layer, projections, mask), hidden_states, output_weights)
    return {
        **results,
        "drawn_pattern": keras.ops.convert_to_numpy(
            draw_random_blocks(LENGTH // BLOCK_SIZE, HEADS, RANDOM_BLOCKS, SEED)),
    }


if __name__ == "__main__":
    np.savez(sys.argv[1], **run())
