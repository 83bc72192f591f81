"""The Transformer stack with ALBERT's cross-layer parameter sharing."""

import keras
from keras import ops

from albert_tf.config import SHARING_MODES
from albert_tf.layers.attention import AttentionSubLayer
from albert_tf.layers.attention_mask import attention_bias
from albert_tf.layers.feed_forward import FeedForwardSubLayer
from albert_tf.layers.layer_norm import Float32Outputs
from albert_tf.layers.reference_kernels import ReferenceKernels
from albert_tf.layers.rows import gather_rows


def _key(owner, inner):
    """Sub-layer key and name stem, after the original's scopes `group_g/inner_group_k`."""
    return f"group_{owner}_inner_group_{inner}"


@keras.saving.register_keras_serializable(package="albert_tf")
class SharedTransformerEncoder(Float32Outputs, keras.layers.Layer):
    """Applies `num_hidden_layers` x `inner_group_num` post-LN blocks that reuse parameters.

    The layers are split into `num_hidden_groups` contiguous groups (layer l is in group
    int(l / L * G), as in the original). Each layer runs `inner_group_num` blocks in a row, each an
    attention sub-layer then a feed-forward sub-layer. `sharing` says which sub-layers a group's
    layers share: "all" (ALBERT), "attention", "ffn" or "none" (BERT-style). A shared sub-layer is
    owned by its group, an unshared one by its layer; each owns its own LayerNorm. Inputs are not
    autocast: between sub-layers the hidden states stay float32 under mixed precision.

    Call arguments: `hidden_states` [B, T, H], `input_mask` [B, T] (1 = real token),
    `output_positions` int [B, R], `training`.
    Returns the pair (every block's output, [B, T, H] each, L * inner_group_num of them; the last
    block's output at `output_positions` only, [B, R, H]). The second is the last block run
    again with queries at those R rows alone: a graph that reads nothing else of the last block
    (a pretraining step reads [CLS] and the masked positions, a classifier [CLS]) leaves the full
    last block unused, and TensorFlow prunes it. (Block-sparse attention computes every row, so
    there the rows are gathered from the full last attention sub-layer; only its FFN is saved.)
    A kernel set for a backend that prunes nothing may read them from the full block instead
    (`last_block_rows`).

    `attention_type`, `block_size`, `num_random_blocks`: as in `AlbertConfig`, passed to every
    attention sub-layer. `recompute=True` keeps only each block's input for the backward pass
    and runs the block again there (`keras.remat`, each backend's own): less memory, same gradients, about one
    more forward pass of time. It draws dropout masks again, so it needs dropout 0 to train.

    `kernels`: the kernel set every sub-layer computes through (`albert_tf.kernels`), given by
    its model (alone, "reference"); a runtime choice, not part of its config.
    """

    def __init__(
        self,
        num_hidden_layers,
        hidden_size,
        num_attention_heads,
        intermediate_size,
        num_hidden_groups=1,
        inner_group_num=1,
        sharing="all",
        hidden_act="gelu",
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        initializer_range=0.02,
        attention_type="dense",
        block_size=None,
        num_random_blocks=None,
        recompute=False,
        *,
        kernels=None,
        **kwargs,
    ):
        super().__init__(autocast=False, **kwargs)
        if sharing not in SHARING_MODES:
            raise ValueError(f"unknown sharing {sharing!r}; allowed: {list(SHARING_MODES)}")
        if num_hidden_layers % num_hidden_groups:
            raise ValueError(
                f"num_hidden_layers ({num_hidden_layers}) must be divisible by num_hidden_groups "
                f"({num_hidden_groups})."
            )
        self.num_hidden_layers = num_hidden_layers
        self.hidden_size = hidden_size
        self.num_attention_heads = num_attention_heads
        self.intermediate_size = intermediate_size
        self.num_hidden_groups = num_hidden_groups
        self.inner_group_num = inner_group_num
        self.sharing = sharing
        self.hidden_act = hidden_act
        self.hidden_dropout_prob = hidden_dropout_prob
        self.attention_probs_dropout_prob = attention_probs_dropout_prob
        self.initializer_range = initializer_range
        # One object, shared by every sub-layer.
        self.kernels = kernels or ReferenceKernels()
        self.attention_type = attention_type
        self.block_size = block_size
        self.num_random_blocks = num_random_blocks
        self.recompute = recompute

        # One sub-layer per (owner, inner index); the owner is a group when shared, else a layer.
        # Each is a plain attribute named after the original's scope (`group_0_inner_group_0_ffn`):
        # tf.train.Checkpoint follows attributes, not Keras' tracked dicts or lists.
        common = dict(
            hidden_size=hidden_size,
            hidden_dropout_prob=hidden_dropout_prob,
            initializer_range=initializer_range,
            kernels=self.kernels,
            dtype=self.dtype_policy,
        )
        makers = {
            "attention": lambda name: AttentionSubLayer(
                num_attention_heads=num_attention_heads,
                attention_probs_dropout_prob=attention_probs_dropout_prob,
                attention_type=attention_type,
                block_size=block_size,
                num_random_blocks=num_random_blocks,
                name=name,
                **common,
            ),
            "ffn": lambda name: FeedForwardSubLayer(
                intermediate_size=intermediate_size, hidden_act=hidden_act, name=name, **common
            ),
        }
        for kind, make in makers.items():
            for owner in self.owners(kind):
                for inner in range(inner_group_num):
                    name = f"{_key(owner, inner)}_{kind}"
                    setattr(self, name, make(name))

    @property
    def attention_layers(self):
        """{"group_{owner}_inner_group_{k}": AttentionSubLayer} for every owner and inner index."""
        return self._sublayers("attention")

    @property
    def ffn_layers(self):
        """{"group_{owner}_inner_group_{k}": FeedForwardSubLayer} for every owner and inner index."""
        return self._sublayers("ffn")

    def _sublayers(self, kind):
        return {
            _key(owner, inner): getattr(self, f"{_key(owner, inner)}_{kind}")
            for owner in self.owners(kind)
            for inner in range(self.inner_group_num)
        }

    def is_shared(self, kind):
        """Whether sub-layers of `kind` ("attention" or "ffn") are shared within a group."""
        return self.sharing in ("all", kind)

    def owner(self, kind, layer_index):
        """The group (shared) or layer (unshared) whose sub-layer of `kind` layer l runs.

        The group index is the original's float expression int(l / L * G), kept bit for bit: for
        some L = G (e.g. 22) it maps two layers to one group, and checkpoints follow that.
        """
        if self.is_shared(kind):
            return int(layer_index / self.num_hidden_layers * self.num_hidden_groups)
        return layer_index

    def owners(self, kind):
        return sorted({self.owner(kind, layer) for layer in range(self.num_hidden_layers)})

    def sublayer(self, kind, layer_index, inner_index):
        return getattr(self, f"{_key(self.owner(kind, layer_index), inner_index)}_{kind}")

    def build(self, hidden_states_shape, input_mask_shape=None, output_positions_shape=None):
        for layer in list(self.attention_layers.values()) + list(self.ffn_layers.values()):
            layer.build(hidden_states_shape)
        self.built = True

    def blocks(self):
        """The (attention, ffn) sub-layer pairs in the order they run, L * inner_group_num of them."""
        return [
            (self.sublayer("attention", layer, inner), self.sublayer("ffn", layer, inner))
            for layer in range(self.num_hidden_layers)
            for inner in range(self.inner_group_num)
        ]

    def call(self, hidden_states, input_mask, output_positions, training=None):
        bias = attention_bias(input_mask)
        outputs = []
        with self.kernels.forward_pass(recompute=self.recompute):
            for attention, ffn in self.blocks():
                block_input = hidden_states
                hidden_states = self._run_block(attention, ffn, hidden_states, bias, training)
                outputs.append(hidden_states)
            return outputs, self.kernels.last_block_rows(
                outputs[-1], output_positions,
                lambda: self._block_at_rows(attention, ffn, block_input, bias, output_positions, training), training,
            )

    def _block_at_rows(self, attention, ffn, block_input, bias, positions, training):
        """The block on `block_input` at `positions` only: queries and FFN at those rows."""
        if self.attention_type == "block_sparse":
            attended = gather_rows(attention(block_input, bias, training=training), positions)
        else:
            rows = gather_rows(block_input, positions)
            attended = attention(block_input, bias, training=training, query_states=rows)
        return ffn(attended, training=training)

    def _run_block(self, attention, ffn, hidden_states, bias, training):
        def block(block_input):
            return ffn(attention(block_input, bias, training=training), training=training)

        if self.recompute and training and (self.hidden_dropout_prob or self.attention_probs_dropout_prob):
            raise ValueError(
                "SharedTransformerEncoder: `recompute` would draw new dropout masks in the backward pass; "
                f"train with it at hidden_dropout_prob and attention_probs_dropout_prob 0, got "
                f"{self.hidden_dropout_prob} and {self.attention_probs_dropout_prob}."
            )
        return keras.remat(block)(hidden_states) if self.recompute else block(hidden_states)

    def compute_output_shape(self, hidden_states_shape, input_mask_shape, output_positions_shape):
        outputs = [tuple(hidden_states_shape)] * (self.num_hidden_layers * self.inner_group_num)
        return outputs, tuple(output_positions_shape) + (hidden_states_shape[-1],)

    def get_config(self):
        config = super().get_config()
        config.update(
            {
                "num_hidden_layers": self.num_hidden_layers,
                "hidden_size": self.hidden_size,
                "num_attention_heads": self.num_attention_heads,
                "intermediate_size": self.intermediate_size,
                "num_hidden_groups": self.num_hidden_groups,
                "inner_group_num": self.inner_group_num,
                "sharing": self.sharing,
                "hidden_act": self.hidden_act,
                "hidden_dropout_prob": self.hidden_dropout_prob,
                "attention_probs_dropout_prob": self.attention_probs_dropout_prob,
                "initializer_range": self.initializer_range,
                "attention_type": self.attention_type,
                "block_size": self.block_size,
                "num_random_blocks": self.num_random_blocks,
                "recompute": self.recompute,
            }
        )
        return config
