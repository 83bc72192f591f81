"""The "cpu_serving" kernel set: "cpu_inference"'s oneDNN-friendly forms in plain TensorFlow ops
only, whatever machine traces them: for SavedModel exports.

An export is traced on one machine and served on another, perhaps by a TF Serving build without
XLA's CPU JIT or without oneDNN. So this set holds no XLA-compiled function (the add + LayerNorm
is the reference's, GELU is `tf.nn.gelu`) and does not ask whether the tracing machine has
oneDNN: every Dense is one 2-D MatMul + BiasAdd (+ GELU), Q/K/V are per-head broadcast matmuls
without a transpose, the attention scores are matmul, scale, add the mask, softmax. TensorFlow's
oneDNN rewrites fuse these where the serving machine has oneDNN; elsewhere they are ordinary ops
with the reference's values. Under mixed precision the softmax stays the reference's (float32),
since a bfloat16 softmax is float32 inside only on oneDNN.
"""

import tensorflow as tf

from albert_tf.kernels.cpu import CpuKernels
from albert_tf.kernels.cpu_inference import CpuInferenceKernels
from albert_tf.kernels.weight_casts import WeightCasts
from albert_tf.layers.activations import get_activation
from albert_tf.layers.reference_kernels import ReferenceKernels


def _tanh_gelu(x):
    return tf.nn.gelu(x, approximate=True)


class ReadOnceWeightCasts(WeightCasts):
    """`WeightCasts` that hands every use in a pass the same tensor, without reading the
    variables again: ALBERT's shared block would otherwise read each weight once per layer,
    one kernel call each. Only for graphs that take no gradient (`derived`'s reuse is what
    routes the gradient of each use)."""

    def __init__(self):
        super().__init__()
        self._made = {}

    def joined(self, variables, dtype):
        return self._once(("joined", dtype), variables, lambda: super(ReadOnceWeightCasts, self).joined(variables, dtype))

    def derived(self, key, variables, make):
        return self._once(key, variables, lambda: super(ReadOnceWeightCasts, self).derived(key, variables, make))

    def _once(self, key, variables, make):
        key = (key, tuple(id(variable) for variable in variables))
        if key not in self._made:
            self._made[key] = (variables, make())  # the variables kept alive, so ids stay unique
        return self._made[key][1]


class CpuServingKernels(CpuInferenceKernels):
    name = "cpu_serving"
    weight_casts_type = ReadOnceWeightCasts

    def activation(self, name):
        return _tanh_gelu if name == "gelu" else get_activation(name)

    def dense(self, layer, inputs, activation="linear"):
        # "cpu"'s 2-D MatMul + BiasAdd, with this set's (plain) activation
        return CpuKernels.dense(self, layer, inputs, activation)

    def project_heads(self, layers, inputs, num_heads):
        return self._per_head_projections(layers, inputs, num_heads)

    def attention_probabilities(self, query, key, bias, scale):
        if query.dtype != tf.float32:
            return ReferenceKernels.attention_probabilities(self, query, key, bias, scale)
        return self._fusable_attention_probabilities(query, key, bias, scale)

    def add_and_norm(self, norm, residual, output):
        return ReferenceKernels.add_and_norm(self, norm, residual, output)
