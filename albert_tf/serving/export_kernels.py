"""The form an export traces: its kernel set, chosen explicitly, plain TensorFlow ops only, recorded in
it; and its dtype, float32 unless the caller asks for another.

Every TF Serving build runs plain TensorFlow ops; XLA-compiled functions only with
`--xla_cpu_compilation_enabled`. So an export traces "reference" (the default) or "cpu_serving"
(the CPU inference forms, faster where the server has oneDNN; docs/serving.md), whatever set the
model was trained with, and keeps the name as the string variable `export_kernels`. The exporters
decide the dtype, not their callers: a model trained in mixed precision is exported in float32
(`PORTABLE_DTYPE`), which every TF Serving build and device computes.
"""

import tensorflow as tf

from albert_tf.kernels import EXPORT_KERNEL_SETS
from albert_tf.models.serialization import rebuilt

# The dtype policy of portable exports (SavedModels by default, LiteRT models always).
PORTABLE_DTYPE = "float32"


def portable_form(model):
    """`model` (same config and weights) in float32 with the "reference" kernels: plain TensorFlow
    ops that every TF Serving build, LiteRT and any device run."""
    return rebuilt(model, PORTABLE_DTYPE, "reference")


class ExportKernels(tf.Module):
    """A `tf.Module` that traces a model in one of `EXPORT_KERNEL_SETS` (in `dtype`, a Keras dtype
    policy) and records which."""

    def __init__(self, kernels, dtype=PORTABLE_DTYPE):
        super().__init__()
        if kernels not in EXPORT_KERNEL_SETS:
            raise ValueError(f"export kernels must be one of {list(EXPORT_KERNEL_SETS)} (plain TensorFlow "
                             f"ops, no XLA), got {kernels!r}")
        self.kernels = kernels
        self.dtype = dtype
        self.export_kernels = tf.Variable(kernels, trainable=False, name="export_kernels")

    def traced_form(self, model):
        """`model` (same config and weights) computing in the export's dtype with its kernels;
        the weight forms those kernels make when traced (`cpu_serving`) are saved with the export."""
        traced = rebuilt(model, self.dtype, self.kernels)
        saved_with_it = traced.kernel_set.export_module()
        if saved_with_it is not None:
            self.serving_weight_forms = saved_with_it
        return traced
