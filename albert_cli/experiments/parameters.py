"""Parameter counts from a config alone, so the xlarge models need not be built to be counted.

`tests/test_experiments_size_and_speed.py` checks `backbone_parameters` against `count_params()`
of built models in every sharing mode, with and without the E->H projection.
"""

from albert_tf.config import AlbertConfig

# The paper's Table 1 sizes. BERT is the same model with no sharing and E = H.
PAPER_MODELS = {
    "bert_base": dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, embedding_size=768, sharing="none"),
    "bert_large": dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, embedding_size=1024, sharing="none"),
    "bert_xlarge": dict(hidden_size=2048, num_hidden_layers=24, num_attention_heads=16, embedding_size=2048, sharing="none"),
    "albert_base": dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, embedding_size=128, sharing="all"),
    "albert_large": dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16, embedding_size=128, sharing="all"),
    "albert_xlarge": dict(hidden_size=2048, num_hidden_layers=24, num_attention_heads=16, embedding_size=128, sharing="all"),
    "albert_xxlarge": dict(hidden_size=4096, num_hidden_layers=12, num_attention_heads=64, embedding_size=128, sharing="all"),
}


def paper_config(name, vocab_size=30000):
    """The released config of a Table 1 model (intermediate size 4H, 512 positions)."""
    values = PAPER_MODELS[name]
    return AlbertConfig(vocab_size=vocab_size, intermediate_size=4 * values["hidden_size"], **values)


def backbone_parameters(config):
    """Weights of `AlbertModel(config)`: embeddings, projection, encoder, pooler (no task heads)."""
    vocab, emb, hidden, inter = config.vocab_size, config.embedding_size, config.hidden_size, config.intermediate_size
    embeddings = (vocab + config.max_position_embeddings + config.type_vocab_size) * emb + 2 * emb
    projection = emb * hidden + hidden if emb != hidden else 0
    attention = 4 * (hidden * hidden + hidden) + 2 * hidden  # Q, K, V, output; LayerNorm
    ffn = 2 * hidden * inter + inter + hidden + 2 * hidden  # in, out; LayerNorm
    shared_owners = config.num_hidden_groups * config.inner_group_num
    layer_owners = config.num_hidden_layers * config.inner_group_num
    attention_owners = shared_owners if config.sharing in ("all", "attention") else layer_owners
    ffn_owners = shared_owners if config.sharing in ("all", "ffn") else layer_owners
    pooler = hidden * hidden + hidden
    return embeddings + projection + attention_owners * attention + ffn_owners * ffn + pooler
