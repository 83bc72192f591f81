"""The "cpu_serving" kernel set: "cpu_inference"'s oneDNN-friendly forms in plain TensorFlow ops
only, whatever machine traces them: for SavedModel exports.

An export is traced on one machine and served on another, perhaps by a TF Serving build without
XLA's CPU JIT or without oneDNN. So this set holds no XLA-compiled function (the add + LayerNorm
is its formula in plain ops, GELU is `tf.nn.gelu`) and does not ask whether the tracing machine has
oneDNN: every Dense is one 2-D MatMul + BiasAdd (+ GELU), Q/K/V are per-head broadcast matmuls
without a transpose, the attention scores are matmul, scale, add the mask, softmax. TensorFlow's
oneDNN rewrites fuse these where the serving machine has oneDNN; elsewhere they are ordinary ops
with the reference's values. Under mixed precision the softmax stays the reference's (float32),
since a bfloat16 softmax is float32 inside only on oneDNN. The weights' cast and per-head forms
are made once and kept as variables (`ServingWeightForms`) that the export holds and saves, not
remade at every request.
"""

import keras
import tensorflow as tf

from albert_tf.kernels.add_and_norm import add_and_norm_ops
from albert_tf.kernels.cpu import CpuKernels
from albert_tf.kernels.cpu_inference import fusable_attention_probabilities, per_head_projections
from albert_tf.layers.reference_kernels import ReferenceKernels
from albert_tf.kernels.weight_casts import WeightCasts
from albert_tf.layers.activations import get_activation


def _tanh_gelu(x):
    return tf.nn.gelu(x, approximate=True)


class ServingWeightForms:
    """The weights in the forms the serving graph multiplies by (cast to the compute dtype, Q/K/V
    per head), made once, when the model is first traced, and kept as variables (`module.forms`):
    an export makes them, hands them to the kernel set and saves `module`.

    Why: made inside the graph, these forms cost a cast, stack or transpose of every shared
    weight at each request (albert-base in bfloat16 at batch 1 x 16 tokens: a sixth of its CPU
    time); as variables, the served graph reads them as they are. They copy the weights at the
    first trace and take no gradient, so they are for graphs that serve fixed weights: an
    export's.
    """

    def __init__(self):
        self.module = tf.Module()  # tracks the forms, so that an export tracking it saves them
        self.module.forms = []
        self._made = {}

    def form(self, key, variables, make):
        """The variable holding `make(values of variables)`, made at the first call with `key`
        (which must name `variables` and what `make` does)."""
        if key not in self._made:
            with tf.init_scope():  # made once, outside any graph being traced
                form = tf.Variable(make([tf.convert_to_tensor(v) for v in variables]), trainable=False,
                                   name="serving_weight_form")
            self._made[key] = (variables, form)  # the variables kept alive, so ids stay unique
            self.module.forms.append(form)
        return self._made[key][1]


class ServingWeightReads(WeightCasts):
    """One pass's reads of the `ServingWeightForms`: each form read once, whatever the number of
    layers that use it."""

    def __init__(self, forms):
        super().__init__()
        self._forms = forms
        self._reads = {}

    def joined(self, variables, dtype):
        if len(variables) == 1 and keras.backend.standardize_dtype(variables[0].dtype) == dtype:
            # the variable is its own form
            return self._read_once(("as is", id(variables[0])), lambda: tf.convert_to_tensor(variables[0]))
        return super().joined(variables, dtype)

    def derived(self, key, variables, make):
        key = (key, tuple(id(variable) for variable in variables))
        return self._read_once(key, lambda: tf.convert_to_tensor(self._forms.form(key, variables, make)))

    def _read_once(self, key, read):
        if key not in self._reads:
            self._reads[key] = read()
        return self._reads[key]


class CpuServingKernels(CpuKernels):
    """"cpu"'s passes and 2-D dense layers (with a plain GELU), "cpu_inference"'s per-head
    projections and attention forms unconditionally, no XLA kernel."""

    name = "cpu_serving"

    def __init__(self, weight_forms=None):
        """`weight_forms`: the `ServingWeightForms` of an export (by default the set's own), one
        for every pass and trace of the model."""
        super().__init__()
        self.weight_forms = ServingWeightForms() if weight_forms is None else weight_forms

    def pass_weight_casts(self):
        return ServingWeightReads(self.weight_forms)

    def activation(self, name):
        return _tanh_gelu if name == "gelu" else get_activation(name)

    def project_heads(self, layers, inputs, num_heads):
        return per_head_projections(layers, inputs, num_heads, self.casts())

    def attention_probabilities(self, query, key, bias, scale):
        if query.dtype != tf.float32:
            return ReferenceKernels.attention_probabilities(query, key, bias, scale)
        return fusable_attention_probabilities(query, key, bias, scale)

    def add_and_norm(self, norm, residual, output):
        """`norm(residual + output)` in float32: the "cpu" set's kernel formula as plain ops, with
        gamma and beta read once per pass."""
        gamma, beta = (self.casts().joined([weight], "float32") for weight in (norm.gamma, norm.beta))
        return add_and_norm_ops(residual, output, gamma, beta)
