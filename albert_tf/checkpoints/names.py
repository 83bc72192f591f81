"""The one table of ALBERT's weight names: the original's TF1 names, our variables, HF's and keras-hub's names.

Each row pairs a TF1 name (as google-research/albert writes it) with the attribute path of the
matching Keras variable and, where the format has the weight, its Hugging Face and keras-hub name
with the layout that turns that array into the TF1 one. Our layouts are already the original's
(2-D [in, out] kernels, [n, H] `output_weights`), so our map is names only. Every reader and
writer of the package goes through these TF1 names; nothing else spells them.
"""

import os
import re

# How a foreign array becomes the TF1 one (and back).
SAME = "same"
TRANSPOSE = "transpose"  # torch Linear weights are [out, in]; TF1 kernels are [in, out].
RESHAPE = "reshape"  # Per-head kernels ([H, heads, head_size], ...) hold the same values row-major.
LAYOUTS = (SAME, TRANSPOSE, RESHAPE)

# Rows: (TF1 name, attribute path on the owning layer, (HF name, layout) or None, (keras-hub path,
# layout) or None). HF names are without the `albert.` prefix of HF's task models.

# On `model.embeddings` (a FactorizedEmbedding).
EMBEDDING_NAMES = (
    ("bert/embeddings/word_embeddings", "word_embeddings",
     ("embeddings.word_embeddings.weight", SAME), ("token_embedding/embeddings", SAME)),
    ("bert/embeddings/token_type_embeddings", "token_type_embeddings",
     ("embeddings.token_type_embeddings.weight", SAME), ("segment_embedding/embeddings", SAME)),
    ("bert/embeddings/position_embeddings", "position_embeddings",
     ("embeddings.position_embeddings.weight", SAME), ("position_embedding/embeddings", SAME)),
    ("bert/embeddings/LayerNorm/beta", "layer_norm.beta",
     ("embeddings.LayerNorm.bias", SAME), ("embeddings_layer_norm/beta", SAME)),
    ("bert/embeddings/LayerNorm/gamma", "layer_norm.gamma",
     ("embeddings.LayerNorm.weight", SAME), ("embeddings_layer_norm/gamma", SAME)),
)
WORD_EMBEDDINGS = EMBEDDING_NAMES[0][0]

# On `model.embeddings.projection`; the original creates it only when E != H (so do we). HF and
# keras-hub always have it: an identity projection is the original's model exactly.
PROJECTION_NAMES = (
    ("bert/encoder/embedding_hidden_mapping_in/kernel", "kernel",
     ("encoder.embedding_hidden_mapping_in.weight", TRANSPOSE), ("embedding_projection/kernel", SAME)),
    ("bert/encoder/embedding_hidden_mapping_in/bias", "bias",
     ("encoder.embedding_hidden_mapping_in.bias", SAME), ("embedding_projection/bias", SAME)),
)
PROJECTION_KERNEL, PROJECTION_BIAS = (row[0] for row in PROJECTION_NAMES)

# The scope of one block's variables; `owner` is the group (shared) or layer (unshared) index.
BLOCK_SCOPE = "bert/encoder/transformer/group_{owner}/inner_group_{inner}/"

# On an AttentionSubLayer, relative to BLOCK_SCOPE. The original's first LayerNorm of a block
# is the attention's and is created outside `attention_1`, hence plain `LayerNorm`. keras-hub's
# attention kernels are per head: query/key/value [H, heads, size], their biases [heads, size],
# the output [heads, size, H]; row-major they are the TF1 [H, H].
ATTENTION_NAMES = (
    ("attention_1/self/query/kernel", "query.kernel",
     ("attention.query.weight", TRANSPOSE), ("self_attention_layer/query/kernel", RESHAPE)),
    ("attention_1/self/query/bias", "query.bias",
     ("attention.query.bias", SAME), ("self_attention_layer/query/bias", RESHAPE)),
    ("attention_1/self/key/kernel", "key.kernel",
     ("attention.key.weight", TRANSPOSE), ("self_attention_layer/key/kernel", RESHAPE)),
    ("attention_1/self/key/bias", "key.bias",
     ("attention.key.bias", SAME), ("self_attention_layer/key/bias", RESHAPE)),
    ("attention_1/self/value/kernel", "value.kernel",
     ("attention.value.weight", TRANSPOSE), ("self_attention_layer/value/kernel", RESHAPE)),
    ("attention_1/self/value/bias", "value.bias",
     ("attention.value.bias", SAME), ("self_attention_layer/value/bias", RESHAPE)),
    ("attention_1/output/dense/kernel", "output_dense.kernel",
     ("attention.dense.weight", TRANSPOSE), ("self_attention_layer/attention_output/kernel", RESHAPE)),
    ("attention_1/output/dense/bias", "output_dense.bias",
     ("attention.dense.bias", SAME), ("self_attention_layer/attention_output/bias", SAME)),
    ("LayerNorm/beta", "layer_norm.beta",
     ("attention.LayerNorm.bias", SAME), ("self_attention_layer_norm/beta", SAME)),
    ("LayerNorm/gamma", "layer_norm.gamma",
     ("attention.LayerNorm.weight", SAME), ("self_attention_layer_norm/gamma", SAME)),
)

# On a FeedForwardSubLayer, relative to BLOCK_SCOPE. Note `output` nested inside `intermediate`.
FFN_NAMES = (
    ("ffn_1/intermediate/dense/kernel", "intermediate.kernel",
     ("ffn.weight", TRANSPOSE), ("feedforward_intermediate_dense/kernel", SAME)),
    ("ffn_1/intermediate/dense/bias", "intermediate.bias",
     ("ffn.bias", SAME), ("feedforward_intermediate_dense/bias", SAME)),
    ("ffn_1/intermediate/output/dense/kernel", "output_dense.kernel",
     ("ffn_output.weight", TRANSPOSE), ("feedforward_output_dense/kernel", SAME)),
    ("ffn_1/intermediate/output/dense/bias", "output_dense.bias",
     ("ffn_output.bias", SAME), ("feedforward_output_dense/bias", SAME)),
    ("LayerNorm_1/beta", "layer_norm.beta",
     ("full_layer_layer_norm.bias", SAME), ("feedforward_layer_norm/beta", SAME)),
    ("LayerNorm_1/gamma", "layer_norm.gamma",
     ("full_layer_layer_norm.weight", SAME), ("feedforward_layer_norm/gamma", SAME)),
)

# On `model.pooler`.
POOLER_NAMES = (
    ("bert/pooler/dense/kernel", "kernel", ("pooler.weight", TRANSPOSE), ("pooled_dense/kernel", SAME)),
    ("bert/pooler/dense/bias", "bias", ("pooler.bias", SAME), ("pooled_dense/bias", SAME)),
)
POOLER_PATTERN = "bert/pooler/*"

# The heads, each on the task model's attribute of that name. A keras-hub preset holds no head.
HEAD_TABLES = {
    # AlbertPretrainingModel: its decoder is the tied word-embedding table.
    "masked_lm_head": (
        ("cls/predictions/transform/dense/kernel", "transform.kernel", ("predictions.dense.weight", TRANSPOSE), None),
        ("cls/predictions/transform/dense/bias", "transform.bias", ("predictions.dense.bias", SAME), None),
        ("cls/predictions/transform/LayerNorm/beta", "transform_layer_norm.beta",
         ("predictions.LayerNorm.bias", SAME), None),
        ("cls/predictions/transform/LayerNorm/gamma", "transform_layer_norm.gamma",
         ("predictions.LayerNorm.weight", SAME), None),
        ("cls/predictions/output_bias", "output_bias", ("predictions.bias", SAME), None),
    ),
    "sentence_order_head": (
        ("cls/seq_relationship/output_weights", "output_weights", ("sop_classifier.classifier.weight", SAME), None),
        ("cls/seq_relationship/output_bias", "output_bias", ("sop_classifier.classifier.bias", SAME), None),
    ),
    # AlbertClassifier (GLUE) and AlbertMultipleChoice (RACE): at the top level, [n, H] and [n].
    "classification_head": (
        ("output_weights", "output_weights", ("classifier.weight", SAME), None),
        ("output_bias", "output_bias", ("classifier.bias", SAME), None),
    ),
}

# AlbertQuestionAnswering's `qa_head`: the original's SQuAD v1 head, or its v2 (XLNet-style) one.
QA_V1_NAMES = (
    ("cls/squad/output_weights", "output_weights", None, None),
    ("cls/squad/output_bias", "output_bias", None, None),
)
QA_V2_NAMES = (
    ("start_logits/dense/kernel", "start_logits_dense.kernel", None, None),
    ("start_logits/dense/bias", "start_logits_dense.bias", None, None),
    ("end_logits/dense_0/kernel", "end_logits_dense_0.kernel", None, None),
    ("end_logits/dense_0/bias", "end_logits_dense_0.bias", None, None),
    ("end_logits/LayerNorm/beta", "end_logits_norm.beta", None, None),
    ("end_logits/LayerNorm/gamma", "end_logits_norm.gamma", None, None),
    ("end_logits/dense_1/kernel", "end_logits_dense_1.kernel", None, None),
    ("end_logits/dense_1/bias", "end_logits_dense_1.bias", None, None),
    ("answer_class/dense_0/kernel", "answer_class_dense_0.kernel", None, None),
    ("answer_class/dense_0/bias", "answer_class_dense_0.bias", None, None),
    ("answer_class/dense_1/kernel", "answer_class_dense_1.kernel", None, None),
)
QA_HEAD = "qa_head"

# The task models' heads (their attribute names; every task model keeps its backbone under
# `albert`) and the names of their weights in a file: TF1 names, then our checkpoints' keys.
HEAD_NAMES = {
    "masked_lm_head": ("cls/predictions/*", "model/masked_lm_head/*"),
    "sentence_order_head": ("cls/seq_relationship/*", "model/sentence_order_head/*"),
    "classification_head": ("output_weights", "output_bias", "model/classification_head/*"),
    QA_HEAD: ("cls/squad/*", "start_logits/*", "end_logits/*", "answer_class/*", "model/qa_head/*"),
}

# Checkpoint entries that are not model weights: training state of the original's optimizers.
OPTIMIZER_SLOT_SUFFIXES = ("/adam_m", "/adam_v", "/lamb_m", "/lamb_v")
OPTIMIZER_SCOPE_PREFIX = "AdamWeightDecayOptimizer"
GLOBAL_STEP = "global_step"

# What TF-Hub modules prepend to every name once imported into a graph.
HUB_MODULE_PREFIX = "module/"

# Files and prefixes. The prefix inside the released tarballs (albert_base/model.ckpt-best.index).
RELEASED_CHECKPOINT_NAME = "model.ckpt-best"
# The config beside a TF1 checkpoint (the released tarballs) and beside our runs' checkpoints.
ALBERT_CONFIG_NAME = "albert_config.json"
# Where a TF1 Hub module directory keeps its weights.
HUB_VARIABLES_PREFIX = os.path.join("variables", "variables")
# Where fine-tuning keeps its best weights and its training checkpoints.
BEST_CHECKPOINT_PREFIX = os.path.join("best", "model")
TRAINING_CHECKPOINT_DIR = "checkpoints"
# The object our checkpoints keep the model under: tf.train.Checkpoint(model=..., optimizer=...).
MODEL_KEY = "model"

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


def _table(owner, rows, scope=""):
    return {scope + row[0]: _resolve(owner, row[1]) for row in rows}


def _encoder_variables(encoder):
    """Every block's variables under `group_{owner}/inner_group_{k}`, each sub-layer once."""
    variables = {}
    for kind, rows in (("attention", ATTENTION_NAMES), ("ffn", FFN_NAMES)):
        for layer_index in range(encoder.num_hidden_layers):
            owner = encoder.owner(kind, layer_index)
            for inner in range(encoder.inner_group_num):
                sublayer = encoder.sublayer(kind, layer_index, inner)
                scope = BLOCK_SCOPE.format(owner=owner, inner=inner)
                variables.update(_table(sublayer, rows, scope))
    return variables


def is_backbone(model):
    """Whether `model` is an ALBERT backbone (an `AlbertModel`: embeddings, encoder, pooler)."""
    return all(hasattr(model, part) for part in ("embeddings", "encoder", "pooler"))


def backbone_variables(albert):
    """{TF1 name: variable} for an `AlbertModel`, everything under `bert/`."""
    variables = _table(albert.embeddings, EMBEDDING_NAMES)
    if albert.embeddings.projection is not None:
        variables.update(_table(albert.embeddings.projection, PROJECTION_NAMES))
    variables.update(_encoder_variables(albert.encoder))
    variables.update(_table(albert.pooler, POOLER_NAMES))
    return variables


def tf1_variables(model):
    """{TF1 name: Keras variable} for every weight of an ALBERT model, in the original's naming.

    Covers the backbone (`AlbertModel`) and every task model: pretraining, classifier, SQuAD
    (`AlbertQuestionAnswering`) and RACE (`AlbertMultipleChoice`), told apart by their heads.
    """
    albert = getattr(model, "albert", model)
    if not is_backbone(albert):
        raise TypeError(f"tf1_variables: expected an ALBERT model (a backbone or a task model with one under "
                        f"`albert`), got {type(model).__name__}.")
    variables = backbone_variables(albert)
    for head, rows in HEAD_TABLES.items():
        if hasattr(model, head):
            variables.update(_table(getattr(model, head), rows))
    if hasattr(model, QA_HEAD):
        head = getattr(model, QA_HEAD)
        variables.update(_table(head, QA_V2_NAMES if hasattr(head, "answer_class_dense_0") else QA_V1_NAMES))
    return variables
