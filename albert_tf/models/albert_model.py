"""`AlbertModel`: the ALBERT backbone as a functional Keras model."""

import keras

from albert_tf import kernels as kernel_sets
from albert_tf.config import AlbertConfig
from albert_tf.layers.factorized_embedding import FactorizedEmbedding
from albert_tf.layers.initializers import truncated_normal
from albert_tf.layers.shared_encoder import SharedTransformerEncoder
from albert_tf.models.serialization import RebuiltFromAlbertConfig

INPUT_NAMES = ("input_word_ids", "input_mask", "input_type_ids")
# The backbone's optional input, and the output it adds: the last block at those positions only.
MASKED_POSITIONS = "masked_lm_positions"
MASKED_OUTPUT = "masked_sequence_output"


def text_inputs():
    """The backbone's named int32 inputs, each [batch, seq] with any seq <= max positions."""
    return {name: keras.Input(shape=(None,), dtype="int32", name=name) for name in INPUT_NAMES}


def masked_positions_input():
    """`masked_lm_positions` int32 [batch, P]: the positions the masked-LM head reads."""
    return keras.Input(shape=(None,), dtype="int32", name=MASKED_POSITIONS)


def as_config(config):
    return config if isinstance(config, AlbertConfig) else AlbertConfig.from_dict(config)


@keras.saving.register_keras_serializable(package="albert_tf")
class AlbertModel(RebuiltFromAlbertConfig, keras.Model):
    """ALBERT's encoder: factorized embedding, shared Transformer blocks, tanh pooler on [CLS].

    Inputs: a dict of int32 `input_word_ids`, `input_mask` (1 = real token), `input_type_ids`,
    each [batch, seq], and optionally `masked_lm_positions` int32 [B, P] (may be left out).
    Outputs: a dict with `sequence_output` [B, T, H], `pooled_output` [B, H], `encoder_outputs`
    (every block's output, L * inner_group_num of them) and `masked_sequence_output` [B, P, H],
    the last block at `masked_lm_positions` (P = 0 without them), which the masked-LM head reads.

    Args:
        config: an `AlbertConfig` (or its dict).
        dtype: a Keras dtype policy, e.g. "mixed_bfloat16"; LayerNorm, softmax and logits stay float32.
        kernels: the kernel set the layers compute with (`albert_tf.kernels`): "reference" (the
            plain math, any backend), "cpu", "cpu_inference" or "cpu_serving" (TensorFlow's). Same
            values, different speed; built once here and handed to the layers; not saved with the model (`load_model`).
        recompute: keep only each block's input for the backward pass and recompute the rest
            there (`keras.remat`): same gradients, less memory, more time. Not in the
            `AlbertConfig` (it changes no value, and a checkpoint or config file written with it
            serves without it); kept in the Keras config.
    """

    def __init__(self, config, dtype=None, kernels="reference", recompute=False, **kwargs):
        config = as_config(config)
        kernel_set = kernel_sets.get(kernels)
        # === Layers ===
        self.embeddings = FactorizedEmbedding(
            vocab_size=config.vocab_size,
            embedding_size=config.embedding_size,
            hidden_size=config.hidden_size,
            max_position_embeddings=config.max_position_embeddings,
            type_vocab_size=config.type_vocab_size,
            hidden_dropout_prob=config.hidden_dropout_prob,
            initializer_range=config.initializer_range,
            dtype=dtype,
            name="embeddings",
        )
        self.encoder = SharedTransformerEncoder(
            num_hidden_layers=config.num_hidden_layers,
            hidden_size=config.hidden_size,
            num_attention_heads=config.num_attention_heads,
            intermediate_size=config.intermediate_size,
            num_hidden_groups=config.num_hidden_groups,
            inner_group_num=config.inner_group_num,
            sharing=config.sharing,
            hidden_act=config.hidden_act,
            hidden_dropout_prob=config.hidden_dropout_prob,
            attention_probs_dropout_prob=config.attention_probs_dropout_prob,
            initializer_range=config.initializer_range,
            kernels=kernel_set,
            attention_type=config.attention_type,
            block_size=config.block_size,
            num_random_blocks=config.num_random_blocks,
            recompute=recompute,
            dtype=dtype,
            name="encoder",
        )
        self.pooler = keras.layers.Dense(
            config.hidden_size,
            activation="tanh",
            kernel_initializer=truncated_normal(config.initializer_range),
            dtype=dtype,
            name="pooler",
        )

        # === Functional model ===
        inputs = {**text_inputs(), MASKED_POSITIONS: masked_positions_input()}
        super().__init__(inputs=inputs, outputs=self.encode(inputs), **kwargs)

        # === Config ===
        self.config = config
        self.dtype_policy_name = None if dtype is None else keras.dtype_policies.get(dtype).name
        self.kernels = kernel_set.name
        self.recompute = recompute

    def extra_config(self):
        return {"recompute": self.recompute} if self.recompute else {}

    @property
    def kernel_set(self):
        """The kernel set object the layers compute through."""
        return self.encoder.kernels

    def reset_pooler(self):
        """Draws the pooler's weights afresh (truncated normal kernel, zero bias), as at construction.

        For fine-tuning from a checkpoint whose pooler was trained only for the sentence-order
        head (`--reinit_pooler`; Zhang et al. 2021, "Revisiting Few-sample BERT Fine-tuning",
        re-initialise it for small data sets). The original keeps the pretrained pooler.
        """
        kernel, bias = self.pooler.kernel, self.pooler.bias
        kernel.assign(self.pooler.kernel_initializer(kernel.shape, dtype=kernel.dtype))
        bias.assign(keras.ops.zeros(bias.shape, dtype=bias.dtype))

    def __call__(self, inputs, *args, **kwargs):
        # Without `masked_lm_positions`: none, [B, 0], of the ids' own type (Keras wants every
        # named input given, and all of one kind: arrays, tensors or symbolic tensors).
        if isinstance(inputs, dict) and MASKED_POSITIONS not in inputs:
            inputs = {**inputs, MASKED_POSITIONS: inputs["input_word_ids"][:, :0]}
        return super().__call__(inputs, *args, **kwargs)

    def encode(self, inputs):
        """The backbone's one wiring, on its symbolic inputs.

        The encoder runs the last block a second time with queries at [CLS] and the
        `masked_lm_positions` alone (see `SharedTransformerEncoder`): the pooler reads [CLS] and
        `masked_sequence_output` the other rows from there, so a graph that reads only those (a
        classifier, a pretraining step) never computes the full last block.
        """
        embedded = self.embeddings(inputs["input_word_ids"], inputs["input_type_ids"])
        cls_position = keras.ops.zeros_like(inputs["input_word_ids"][:, :1])
        head_positions = keras.ops.concatenate([cls_position, inputs[MASKED_POSITIONS]], axis=1)
        encoder_outputs, head_rows = self.encoder(embedded, inputs["input_mask"], head_positions)
        return {
            "sequence_output": encoder_outputs[-1],
            "pooled_output": self.pooler(head_rows[:, 0, :]),
            "encoder_outputs": encoder_outputs,
            MASKED_OUTPUT: head_rows[:, 1:, :],
        }
