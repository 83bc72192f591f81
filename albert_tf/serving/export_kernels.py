"""The kernel set an export traces: chosen explicitly, plain TensorFlow ops only, recorded in it.

Every TF Serving build runs plain TensorFlow ops; XLA-compiled functions only with
`--xla_cpu_compilation_enabled`. So an export traces "reference" (the default) or "cpu_serving"
(the CPU inference forms, faster where the server has oneDNN; docs/serving.md), whatever set the
model was trained with, and keeps the name as the string variable `export_kernels`.
"""

import tensorflow as tf

from albert_tf.kernels import EXPORT_KERNEL_SETS, with_kernels


class ExportKernels(tf.Module):
    """A `tf.Module` that traces a model in one of `EXPORT_KERNEL_SETS` and records which."""

    def __init__(self, kernels):
        super().__init__()
        if kernels not in EXPORT_KERNEL_SETS:
            raise ValueError(f"export kernels must be one of {list(EXPORT_KERNEL_SETS)} (plain TensorFlow "
                             f"ops, no XLA), got {kernels!r}")
        self.kernels = kernels
        self.export_kernels = tf.Variable(kernels, trainable=False, name="export_kernels")

    def traced_form(self, model):
        """`model` (same config and weights) computing with the export's kernels; the weight
        forms those kernels make when traced (`cpu_serving`) are saved with the export."""
        traced = with_kernels(model, self.kernels)
        saved_with_it = traced.kernel_set.export_module()
        if saved_with_it is not None:
            self.serving_weight_forms = saved_with_it
        return traced
