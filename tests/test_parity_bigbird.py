"""Block-sparse attention against an independent implementation: Hugging Face's PyTorch `BigBirdModel`.

Our encoder with E = H and `sharing: "none"` is a BERT; with `attention_type: "block_sparse"` it is
BigBird's ITC encoder. Its weights are copied into `BigBirdModel` (`block_sparse`, configured to
our math: gelu_new is our tanh GELU, LayerNorm epsilon 1e-12, no embedding rescaling) and the
sequence outputs and gradients compared at 1,024 and 4,096 tokens, with a padded row.

Hugging Face draws its random blocks afresh at every forward pass: in eval mode it sets them all
to block 0; in train mode it draws them with NumPy seeded by the layer index (at 1,024, 3,072
and 4,096 tokens with the BigBird paper's older generator). The test records the pattern each
layer used and hands it to ours (`BlockSparseAttention.random_blocks`), in both modes.
"""

import numpy as np
import pytest
import tensorflow as tf
import torch
import transformers
from transformers.models.big_bird import modeling_big_bird

from albert_tf import AlbertConfig
from albert_tf.models.albert_model import AlbertModel

OUTPUT_TOLERANCE = 1e-5
GRADIENT_TOLERANCE = 1e-4  # relative to the largest gradient of each weight
BLOCK_SIZE, RANDOM_BLOCKS, LAYERS = 16, 3, 2


def _config():
    return AlbertConfig(
        vocab_size=64, embedding_size=32, hidden_size=32, num_hidden_layers=LAYERS, num_hidden_groups=LAYERS,
        num_attention_heads=2, intermediate_size=37, max_position_embeddings=4096, sharing="none",
        attention_type="block_sparse", block_size=BLOCK_SIZE, num_random_blocks=RANDOM_BLOCKS,
    )


def _hf_model(config):
    hf_config = transformers.BigBirdConfig(
        vocab_size=config.vocab_size, hidden_size=config.hidden_size,
        num_hidden_layers=config.num_hidden_layers, num_attention_heads=config.num_attention_heads,
        intermediate_size=config.intermediate_size, hidden_act="gelu_new", hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0, max_position_embeddings=config.max_position_embeddings,
        type_vocab_size=config.type_vocab_size, layer_norm_eps=1e-12, use_bias=True,
        rescale_embeddings=False, attention_type="block_sparse", block_size=config.block_size,
        num_random_blocks=config.num_random_blocks, position_embedding_type="absolute",
    )
    torch.manual_seed(0)
    model = transformers.BigBirdModel(hf_config).float()
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():  # larger than the 0.02 initialisation, LayerNorms not at 1 and 0
        for name, parameter in model.named_parameters():
            noise = torch.randn(parameter.shape, generator=generator) * 0.2
            parameter.copy_(1.0 + noise if name.endswith("LayerNorm.weight") else noise)
    return model


def _variables(model):
    """HF parameter name -> (our variable, whether the torch weight is its transpose)."""
    embeddings = model.embeddings
    pairs = {
        "embeddings.word_embeddings.weight": (embeddings.word_embeddings, False),
        "embeddings.position_embeddings.weight": (embeddings.position_embeddings, False),
        "embeddings.token_type_embeddings.weight": (embeddings.token_type_embeddings, False),
        "embeddings.LayerNorm.weight": (embeddings.layer_norm.gamma, False),
        "embeddings.LayerNorm.bias": (embeddings.layer_norm.beta, False),
        "pooler.weight": (model.pooler.kernel, True),
        "pooler.bias": (model.pooler.bias, False),
    }
    for layer in range(LAYERS):
        attention = model.encoder.sublayer("attention", layer, 0)
        ffn = model.encoder.sublayer("ffn", layer, 0)
        modules = {
            "attention.self.query": attention.query, "attention.self.key": attention.key,
            "attention.self.value": attention.value, "attention.output.dense": attention.output_dense,
            "intermediate.dense": ffn.intermediate, "output.dense": ffn.output_dense,
        }
        for module, dense in modules.items():
            pairs[f"encoder.layer.{layer}.{module}.weight"] = (dense.kernel, True)
            pairs[f"encoder.layer.{layer}.{module}.bias"] = (dense.bias, False)
        for module, norm in {"attention.output.LayerNorm": attention.layer_norm, "output.LayerNorm": ffn.layer_norm}.items():
            pairs[f"encoder.layer.{layer}.{module}.weight"] = (norm.gamma, False)
            pairs[f"encoder.layer.{layer}.{module}.bias"] = (norm.beta, False)
    return pairs


def _inputs(config, length):
    rng = np.random.default_rng(length)
    ids = rng.integers(1, config.vocab_size, (2, length)).astype(np.int32)
    mask = np.ones((2, length), np.int32)
    mask[1, length - 5 * BLOCK_SIZE - 7:] = 0  # the padding covers the last global block and more
    types = np.zeros((2, length), np.int32)
    types[:, length // 3:] = 1
    return {"input_word_ids": ids, "input_mask": mask, "input_type_ids": types}


def _recorded_patterns(hf_model, torch_inputs, monkeypatch):
    """Runs HF once and returns the random blocks each layer used, [heads, blocks - 2, r] each."""
    patterns = []
    original = modeling_big_bird.BigBirdBlockSparseAttention._create_rand_mask_from_inputs

    def recording(from_blocked_mask, to_blocked_mask, rand_attn, *args):
        patterns.append(rand_attn[0].numpy())
        return original(from_blocked_mask, to_blocked_mask, rand_attn, *args)

    monkeypatch.setattr(modeling_big_bird.BigBirdBlockSparseAttention, "_create_rand_mask_from_inputs",
                        staticmethod(recording))
    hf_model(**torch_inputs)
    monkeypatch.undo()
    assert len(patterns) == LAYERS
    return patterns


@pytest.mark.parametrize("mode", ["eval", "train"])
@pytest.mark.parametrize("length", [1024, 4096])
def test_block_sparse_encoder_matches_huggingface_bigbird(length, mode, monkeypatch):
    config = _config()
    hf_model = _hf_model(config)
    hf_model.train(mode == "train")
    model = AlbertModel(config)
    variables = _variables(model)
    assert sorted(variables) == sorted(name for name, _ in hf_model.named_parameters())
    for name, parameter in hf_model.named_parameters():
        variable, transposed = variables[name]
        value = parameter.detach().numpy()
        variable.assign(value.T if transposed else value)

    inputs = _inputs(config, length)
    torch_inputs = {
        "input_ids": torch.from_numpy(inputs["input_word_ids"]).long(),
        "attention_mask": torch.from_numpy(inputs["input_mask"]).long(),
        "token_type_ids": torch.from_numpy(inputs["input_type_ids"]).long(),
    }
    patterns = _recorded_patterns(hf_model, torch_inputs, monkeypatch)
    if mode == "eval":
        assert not any(pattern.any() for pattern in patterns)  # HF's eval mode: every random block is 0
    else:
        assert all(pattern.any() for pattern in patterns) and not np.array_equal(*patterns)
    for layer, pattern in enumerate(patterns):
        model.encoder.sublayer("attention", layer, 0).block_sparse.random_blocks = pattern.tolist()

    weights = np.random.default_rng(2).normal(size=(2, length, config.hidden_size)).astype(np.float32)
    pooled_weights = np.random.default_rng(3).normal(size=(2, config.hidden_size)).astype(np.float32)

    hf_model.zero_grad()
    hf_outputs = hf_model(**torch_inputs)
    hf_loss = ((hf_outputs.last_hidden_state * torch.from_numpy(weights)).sum()
               + (hf_outputs.pooler_output * torch.from_numpy(pooled_weights)).sum())
    hf_loss.backward()

    with tf.GradientTape() as tape:
        outputs = model({name: tf.constant(value) for name, value in inputs.items()}, training=mode == "train")
        loss = (tf.reduce_sum(outputs["sequence_output"] * weights)
                + tf.reduce_sum(outputs["pooled_output"] * pooled_weights))
    names = sorted(variables)
    gradients = dict(zip(names, tape.gradient(loss, [variables[name][0] for name in names])))

    sequence = hf_outputs.last_hidden_state.detach().numpy()
    assert np.max(np.abs(outputs["sequence_output"].numpy() - sequence)) < OUTPUT_TOLERANCE
    pooled = hf_outputs.pooler_output.detach().numpy()
    assert np.max(np.abs(outputs["pooled_output"].numpy() - pooled)) < OUTPUT_TOLERANCE
    for name, parameter in hf_model.named_parameters():
        theirs = parameter.grad.numpy()
        ours = tf.convert_to_tensor(gradients[name]).numpy()
        ours = ours.T if variables[name][1] else ours
        if name.endswith("self.key.bias"):
            # Zero in exact arithmetic (softmax cancels it): both sides hold rounding noise only,
            # small beside the query bias's gradient.
            query_bias = dict(hf_model.named_parameters())[name.replace(".key.", ".query.")]
            scale = float(np.max(np.abs(query_bias.grad.numpy())))
            assert max(np.max(np.abs(theirs)), np.max(np.abs(ours))) / scale < GRADIENT_TOLERANCE, name
            continue
        scale = float(np.max(np.abs(theirs)))
        assert scale > 0, name
        assert np.max(np.abs(ours - theirs)) / scale < GRADIENT_TOLERANCE, name
