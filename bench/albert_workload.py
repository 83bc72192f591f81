"""The albert-base benchmarks' workload: random full-length inputs and the analytic FLOP count.

Free of TensorFlow and of every backend (numpy only), so that `bench_model.py` (TensorFlow) and
`accelerator_step.py` (any Keras backend) time the same batches and report comparable FLOP/s.
"""

import os

import numpy as np

BASE_CONFIG = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "configs", "albert_base.json")
# The LAMB settings every system's training step gets.
LEARNING_RATE = 1e-4
WEIGHT_DECAY = 0.01


def make_inputs(batch, seq, num_masked, vocab, seed=0):
    """Full-length random sequences (no padding) with `num_masked` distinct masked positions each."""
    rng = np.random.default_rng(seed)
    positions = np.stack([np.sort(rng.choice(np.arange(1, seq), num_masked, replace=False))
                          for _ in range(batch)]).astype(np.int32)
    return {
        "input_word_ids": rng.integers(5, vocab, (batch, seq), dtype=np.int32),
        "input_mask": np.ones((batch, seq), np.int32),
        "input_type_ids": (np.arange(seq)[None, :] >= seq // 2).astype(np.int32).repeat(batch, 0),
        "masked_lm_positions": positions,
        "masked_lm_ids": rng.integers(5, vocab, (batch, num_masked), dtype=np.int32),
        "masked_lm_weights": np.ones((batch, num_masked), np.float32),
        "sentence_order_label": rng.integers(0, 2, (batch,), dtype=np.int32),
    }


def model_flops(cfg, batch, seq, num_masked, kind):
    """Analytic FLOPs: 2 per multiply-add of every matmul; a training step is 3x its forward.

    Counts the embedding projection, the per-layer Q/K/V/output and FFN matmuls, the attention
    score and context products, the pooler, and (training) the MLM head on the masked positions
    only and the SOP head. Elementwise work (softmax, LayerNorm, GELU) is not counted.
    """
    h, e, i, v, layers = (cfg["hidden_size"], cfg["embedding_size"], cfg["intermediate_size"],
                          cfg["vocab_size"], cfg["num_hidden_layers"])
    tokens = batch * seq
    per_token = e * h + layers * (4 * h * h + 2 * h * i)
    forward = 2 * per_token * tokens
    forward += layers * 2 * 2 * batch * seq * seq * h  # QK^T and probs @ V
    forward += 2 * batch * h * h  # pooler
    if kind == "train":
        forward += 2 * batch * num_masked * (h * e + e * v) + 2 * batch * h * 2
        return 3 * forward
    return forward
