"""Kernel sets: interchangeable implementations of the few operations ALBERT's layers compute
through (see `albert_tf.layers.reference_kernels`, the plain math every set computes).

- "reference": the plain math, for reading, GPUs and TPUs (where `jit_compile` fuses the same
  chains) and exports by default.
- "cpu": for training on CPUs: elementwise chains as XLA kernels with hand-written gradients,
  matmuls on 2-D views with their weights cast once per pass, Q/K/V as one matmul.
- "cpu_inference": "cpu", with the forms that TensorFlow's oneDNN graph rewrites fuse into the
  matmuls, for graphs that take no gradient on oneDNN CPUs.
- "cpu_serving": "cpu_inference"'s forms in plain TensorFlow ops (no XLA), the same on every
  machine: for SavedModel exports (`--export_kernels`).
- "eager": the reference math in fewer, larger calls (Q/K/V as one matmul, the backend's fused
  attention where dropout is off, the last block's rows read from the full block in inference),
  in `keras.ops`, for a backend that runs the model op by op (Keras on PyTorch).

A model takes one by name (`kernels=`, at construction and at load), builds it once and hands it
to its layers (a layer built alone takes "reference"); the name is not part of the model's config
or saved files (a runtime choice, like the device); `albert_tf.models.rebuilt` gives a built model in
another set. All compute the same values to float rounding (tested).

"reference" and "eager" are `keras.ops` and run on every Keras backend; the others are TensorFlow
graphs (XLA kernels, oneDNN rewrites, `tf.Variable`s for exports), so they need the TensorFlow backend.
"""


KERNEL_SETS = ("reference", "cpu", "cpu_inference", "cpu_serving", "eager")
DEFAULT_KERNEL_SET = "reference"
# The sets written in TensorFlow ops: on JAX or PyTorch they are refused by name.
TENSORFLOW_KERNEL_SETS = ("cpu", "cpu_inference", "cpu_serving")
# What an export may trace: plain TensorFlow ops only (never an XLA-compiled function).
EXPORT_KERNEL_SETS = ("reference", "cpu_serving")
# What a deterministic run may use: two identical 300-step runs with the "cpu" set (its XLA
# kernels and oneDNN-fused matmuls) were seen to drift apart (1e-13 at step 100, 85 of 99 tensors
# by step 300) where "reference" stayed bit-identical (docs/pretraining.md, "Resuming").
DETERMINISTIC_KERNEL_SETS = ("reference",)
# What the scripts' `--kernels` accepts: a kernel set, or "auto" (see `choose`).
KERNELS_FLAG_VALUES = ("auto",) + KERNEL_SETS


def get(kernels):
    """The kernel set named `kernels` (or `kernels` itself if it is already one)."""
    if not isinstance(kernels, str):
        return kernels
    if kernels not in KERNEL_SETS:
        raise ValueError(f"unknown kernels {kernels!r}; allowed: {list(KERNEL_SETS)}")
    check_backend(kernels)
    if kernels == "reference":
        from albert_tf.layers.reference_kernels import ReferenceKernels

        return ReferenceKernels()
    if kernels == "cpu":
        from albert_tf.kernels.cpu import CpuKernels

        return CpuKernels()
    if kernels == "cpu_inference":
        from albert_tf.kernels.cpu_inference import CpuInferenceKernels

        return CpuInferenceKernels()
    if kernels == "eager":
        from albert_tf.kernels.eager import EagerKernels

        return EagerKernels()
    from albert_tf.kernels.cpu_serving import CpuServingKernels

    return CpuServingKernels()


def _keras_backend():
    """Keras' backend, imported only when asked: the scripts import this module for its flag values
    before they quiet TensorFlow, which Keras' TensorFlow backend imports."""
    import keras  # pylint: disable=g-import-not-at-top

    return keras.backend.backend()


def check_backend(kernels):
    """Raises ValueError if the kernel set named `kernels` cannot run on Keras' backend."""
    backend = _keras_backend()
    if kernels in TENSORFLOW_KERNEL_SETS and backend != "tensorflow":
        raise ValueError(f"kernels {kernels!r} are TensorFlow's and need the tensorflow backend "
                         f"(KERAS_BACKEND=tensorflow); Keras runs on {backend!r} here: use 'reference'")


def choose(kernels, logical_devices=None, deterministic=False):
    """`kernels`, with "auto" decided once: on the TensorFlow backend "cpu" when
    `logical_devices` (default: `tf.config.list_logical_devices()`) are all CPUs, else
    "reference" (on GPUs and TPUs XLA fuses the same chains itself); "eager" on PyTorch, which
    runs the model op by op, so fewer, larger matmuls save calls (faster than "reference" there:
    docs/benchmarks.md); "reference" on JAX, whose jitted step XLA fuses itself (both without
    importing TensorFlow), and whenever `deterministic` (bit-identical runs), which refuses the
    other sets. Logs the choice."""
    if deterministic and kernels not in ("auto",) + DETERMINISTIC_KERNEL_SETS:
        raise ValueError(f"kernels {kernels!r} are not bit-identical from run to run; deterministic runs "
                         f"take {' or '.join(map(repr, DETERMINISTIC_KERNEL_SETS))} (or 'auto', which picks it)")
    if kernels != "auto":
        check_backend(kernels)
        return kernels
    backend = _keras_backend()
    if deterministic:
        chosen, why = DETERMINISTIC_KERNEL_SETS[0], "the one bit-identical from run to run"
    elif backend == "torch":
        chosen, why = "eager", "Keras runs on 'torch', op by op: fewer, larger matmuls"
    elif backend != "tensorflow":
        chosen, why = DEFAULT_KERNEL_SET, f"XLA fuses the plain math itself; Keras runs on {backend!r}"
    elif all(device.device_type == "CPU" for device in logical_devices or _tensorflow_devices()):
        chosen, why = "cpu", "all devices are CPUs"
    else:
        chosen, why = "reference", "a GPU or TPU is visible"
    from absl import logging

    logging.info("--kernels=auto: using the %r kernel set (%s)", chosen, why)
    return chosen


def _tensorflow_devices():
    import tensorflow as tf  # pylint: disable=g-import-not-at-top (only on the TensorFlow backend)

    return tf.config.list_logical_devices()

