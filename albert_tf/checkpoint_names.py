"""The original's TF1 variable names for our weights, as declarative tables.

Each table pairs a TF1 name (as google-research/albert writes it) with the attribute path of the
matching Keras variable. Every layout is already the original's (2-D [in, out] kernels, [n, H]
`output_weights`), so the map is names only: no reshapes, no transposes.
"""

import re

from albert_tf.models import AlbertClassifier, AlbertModel, AlbertPretrainingModel

# On `model.embeddings` (a FactorizedEmbedding).
EMBEDDING_NAMES = (
    ("bert/embeddings/word_embeddings", "word_embeddings"),
    ("bert/embeddings/token_type_embeddings", "token_type_embeddings"),
    ("bert/embeddings/position_embeddings", "position_embeddings"),
    ("bert/embeddings/LayerNorm/beta", "layer_norm.beta"),
    ("bert/embeddings/LayerNorm/gamma", "layer_norm.gamma"),
)

# On `model.embeddings.projection`; the original creates it only when E != H (so do we).
PROJECTION_NAMES = (
    ("bert/encoder/embedding_hidden_mapping_in/kernel", "kernel"),
    ("bert/encoder/embedding_hidden_mapping_in/bias", "bias"),
)

# The scope of one block's variables; `owner` is the group (shared) or layer (unshared) index.
BLOCK_SCOPE = "bert/encoder/transformer/group_{owner}/inner_group_{inner}/"

# On an AttentionSubLayer, relative to BLOCK_SCOPE. The original's first LayerNorm of a block
# is the attention's and is created outside `attention_1`, hence plain `LayerNorm`.
ATTENTION_NAMES = (
    ("attention_1/self/query/kernel", "query.kernel"),
    ("attention_1/self/query/bias", "query.bias"),
    ("attention_1/self/key/kernel", "key.kernel"),
    ("attention_1/self/key/bias", "key.bias"),
    ("attention_1/self/value/kernel", "value.kernel"),
    ("attention_1/self/value/bias", "value.bias"),
    ("attention_1/output/dense/kernel", "output_dense.kernel"),
    ("attention_1/output/dense/bias", "output_dense.bias"),
    ("LayerNorm/beta", "layer_norm.beta"),
    ("LayerNorm/gamma", "layer_norm.gamma"),
)

# On a FeedForwardSubLayer, relative to BLOCK_SCOPE. Note `output` nested inside `intermediate`.
FFN_NAMES = (
    ("ffn_1/intermediate/dense/kernel", "intermediate.kernel"),
    ("ffn_1/intermediate/dense/bias", "intermediate.bias"),
    ("ffn_1/intermediate/output/dense/kernel", "output_dense.kernel"),
    ("ffn_1/intermediate/output/dense/bias", "output_dense.bias"),
    ("LayerNorm_1/beta", "layer_norm.beta"),
    ("LayerNorm_1/gamma", "layer_norm.gamma"),
)

# On `model.pooler`.
POOLER_NAMES = (
    ("bert/pooler/dense/kernel", "kernel"),
    ("bert/pooler/dense/bias", "bias"),
)

# On `AlbertPretrainingModel.masked_lm_head`; its decoder is the tied word-embedding table.
MASKED_LM_NAMES = (
    ("cls/predictions/transform/dense/kernel", "transform.kernel"),
    ("cls/predictions/transform/dense/bias", "transform.bias"),
    ("cls/predictions/transform/LayerNorm/beta", "transform_layer_norm.beta"),
    ("cls/predictions/transform/LayerNorm/gamma", "transform_layer_norm.gamma"),
    ("cls/predictions/output_bias", "output_bias"),
)

# On `AlbertPretrainingModel.sentence_order_head`.
SENTENCE_ORDER_NAMES = (
    ("cls/seq_relationship/output_weights", "output_weights"),
    ("cls/seq_relationship/output_bias", "output_bias"),
)

# On `AlbertClassifier.classification_head`: the GLUE head lives at the top level.
CLASSIFIER_NAMES = (
    ("output_weights", "output_weights"),
    ("output_bias", "output_bias"),
)

# Checkpoint entries that are not model weights: training state of the original's optimizers.
OPTIMIZER_SLOT_SUFFIXES = ("/adam_m", "/adam_v", "/lamb_m", "/lamb_v")
OPTIMIZER_SCOPE_PREFIX = "AdamWeightDecayOptimizer"
GLOBAL_STEP = "global_step"

# What TF-Hub modules prepend to every name once imported into a graph.
HUB_MODULE_PREFIX = "module/"

_GROUP_PATTERN = re.compile(r"/group_\d+/")


def is_training_state(name):
    """Whether a checkpoint entry is optimizer state or the step counter (never a weight)."""
    return (
        name == GLOBAL_STEP
        or name.endswith(OPTIMIZER_SLOT_SUFFIXES)
        or any(part.startswith(OPTIMIZER_SCOPE_PREFIX) for part in name.split("/"))
    )


def group0_name(name):
    """The name `--init_from_group0` reads a variable from: any group_N becomes group_0."""
    return _GROUP_PATTERN.sub("/group_0/", name)


def _resolve(owner, attribute_path):
    for attribute in attribute_path.split("."):
        owner = getattr(owner, attribute)
    return owner


def _table(owner, names, scope=""):
    return {scope + name: _resolve(owner, path) for name, path in names}


def _encoder_variables(encoder):
    """Every block's variables under `group_{owner}/inner_group_{k}`, each sub-layer once."""
    variables = {}
    for kind, names in (("attention", ATTENTION_NAMES), ("ffn", FFN_NAMES)):
        for layer_index in range(encoder.num_hidden_layers):
            owner = encoder.owner(kind, layer_index)
            for inner in range(encoder.inner_group_num):
                sublayer = encoder.sublayer(kind, layer_index, inner)
                scope = BLOCK_SCOPE.format(owner=owner, inner=inner)
                variables.update(_table(sublayer, names, scope))
    return variables


def backbone_variables(albert):
    """{TF1 name: variable} for an `AlbertModel`, everything under `bert/`."""
    variables = _table(albert.embeddings, EMBEDDING_NAMES)
    if albert.embeddings.projection is not None:
        variables.update(_table(albert.embeddings.projection, PROJECTION_NAMES))
    variables.update(_encoder_variables(albert.encoder))
    variables.update(_table(albert.pooler, POOLER_NAMES))
    return variables


def tf1_variables(model):
    """{TF1 name: Keras variable} for every weight of an ALBERT model, in the original's naming."""
    if isinstance(model, AlbertModel):
        return backbone_variables(model)
    if isinstance(model, AlbertPretrainingModel):
        variables = backbone_variables(model.albert)
        variables.update(_table(model.masked_lm_head, MASKED_LM_NAMES))
        variables.update(_table(model.sentence_order_head, SENTENCE_ORDER_NAMES))
        return variables
    if isinstance(model, AlbertClassifier):
        variables = backbone_variables(model.albert)
        variables.update(_table(model.classification_head, CLASSIFIER_NAMES))
        return variables
    raise TypeError(
        "tf1_variables: expected an AlbertModel, AlbertPretrainingModel or AlbertClassifier, "
        f"got {type(model).__name__}."
    )
