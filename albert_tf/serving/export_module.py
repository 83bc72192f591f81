"""What every SavedModel export shares, written once: the request bounds, the form the model is
traced in (dtype and kernel set), the token-id signature and its checks, the empty-batch guard and
the signature registry. The four exports (`encoder_export`, `classifier_export`, `squad_export`,
`race_export`) subclass `ExportModule` and declare only their text signature and their outputs.

Every TF Serving build runs plain TensorFlow ops; XLA-compiled functions only with
`--xla_cpu_compilation_enabled`. So an export traces "reference" (the default) or "cpu_serving"
(the CPU inference forms, faster where the server has oneDNN; docs/serving.md), whatever set the
model was trained with, and keeps the name as the string variable `export_kernels`. The exporters
decide the dtype, not their callers: a model trained in mixed precision is exported in float32
(`PORTABLE_DTYPE`), which every TF Serving build and device computes.
"""

import tensorflow as tf

from albert_tf.kernels import EXPORT_KERNEL_SETS
from albert_tf.kernels.cpu_serving import CpuServingKernels, ServingWeightForms
from albert_tf.models.albert_model import INPUT_NAMES
from albert_tf.models.serialization import rebuilt
from albert_tf.serving.request_checks import check_bounds, checked_text, checked_token_ids

# The dtype policy of portable exports (SavedModels by default, LiteRT models always).
PORTABLE_DTYPE = "float32"
# The signature of clients that tokenize themselves: the model's own inputs in, the export's outputs out.
TOKEN_IDS_SIGNATURE = "serve_token_ids"


class ExportModule(tf.Module):
    """A `tf.Module` serving `model` traced in `dtype` with `kernels` (one of `EXPORT_KERNEL_SETS`),
    within `bounds` (positive ints, e.g. `max_batch_size`, kept as attributes).

    A subclass sets what differs: `token_input_names` and `token_shape` (the token-id inputs),
    `token_rows_bound` (the bound on their rows), `SIGNATURES` ({signature name: attribute}) and,
    for a text signature, `text_specs()` and `_serve_text`; `named_outputs` turns the model's
    outputs into the export's.
    """

    token_input_names = INPUT_NAMES
    token_shape = (None, None)
    token_rows_bound = "max_batch_size"
    min_padding_length = 1  # of the row the model reads for an empty batch
    SIGNATURES = {"serving_default": "serve_text", TOKEN_IDS_SIGNATURE: "serve_token_ids"}

    def __init__(self, model, kernels="reference", dtype=PORTABLE_DTYPE, **bounds):
        super().__init__()
        if kernels not in EXPORT_KERNEL_SETS:
            raise ValueError(f"export kernels must be one of {list(EXPORT_KERNEL_SETS)} (plain TensorFlow "
                             f"ops, no XLA), got {kernels!r}")
        check_bounds(**bounds)
        for name, value in bounds.items():
            setattr(self, name, value)
        self.kernels, self.dtype = kernels, dtype
        self.export_kernels = tf.Variable(kernels, trainable=False, name="export_kernels")
        # The weight forms "cpu_serving" makes at the first trace: variables of the export, saved with it.
        weight_forms = ServingWeightForms()
        self.serving_weight_forms = weight_forms.module
        self.model = rebuilt(model, dtype, CpuServingKernels(weight_forms) if kernels == "cpu_serving" else kernels)
        config = getattr(self.model, "albert", self.model).config  # a task model's encoder, or the encoder
        self.vocab_sizes = {"input_word_ids": ("vocab_size", config.vocab_size),
                            "input_type_ids": ("type_vocab_size", config.type_vocab_size)}
        self.serve_token_ids = tf.function(self._serve_token_ids, input_signature=[self.token_ids_spec()])
        if self.text_specs() is not None:
            self.serve_text = tf.function(self._serve_text, input_signature=self.text_specs())

    def text_specs(self):
        """The `tf.TensorSpec`s of the text signature's inputs, or None (no text signature)."""
        return None

    def token_ids_spec(self):
        return {name: tf.TensorSpec(self.token_shape, tf.int32, name=name) for name in self.token_input_names}

    def checked_text(self, texts):
        """`texts` ({input name: string tensor}) once within `max_batch_size` and `max_string_bytes`."""
        return checked_text(texts, self.max_batch_size, self.max_string_bytes)

    def _serve_token_ids(self, inputs):
        checked = checked_token_ids(inputs, getattr(self, self.token_rows_bound), self.token_rows_bound,
                                    self.vocab_sizes)
        return self.named_outputs(self.model_outputs(checked))

    def model_outputs(self, inputs):
        """The model's outputs on `inputs` (float ones in float32). An empty batch has no [CLS]
        column to read: the model reads one row of padding instead, and the outputs keep none of it
        (a slice of the whole tensor otherwise)."""
        word_ids = inputs["input_word_ids"]
        def padding_row(value):
            shape = tf.shape(value)
            return tf.zeros(tf.concat([[1], shape[1:-1], [tf.maximum(shape[-1], self.min_padding_length)]], 0),
                            value.dtype)

        padding = {name: padding_row(value) for name, value in inputs.items()}
        outputs = self.model(tf.cond(tf.size(word_ids) > 0, lambda: dict(inputs), lambda: padding), training=False)
        rows = tf.shape(word_ids)[0]
        return tf.nest.map_structure(
            lambda value: (tf.cast(value, tf.float32) if value.dtype.is_floating else value)[:rows], outputs)

    def named_outputs(self, outputs):
        """The export's outputs from the model's (by default the model's own)."""
        return outputs

    def signatures(self):
        """{signature name: concrete function}, as `tf.saved_model.save` takes them."""
        return {name: getattr(self, attribute).get_concrete_function() for name, attribute in self.SIGNATURES.items()}
