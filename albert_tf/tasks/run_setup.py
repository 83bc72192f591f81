"""What a training run settles before its first op, the same for fine-tuning and pretraining: where
TensorFlow runs, determinism, the kernel set, and whether the config can recompute its blocks."""

from albert_tf.tasks.config_error import ConfigError, require


def keep_tensorflow_off_accelerators():
    """On JAX and PyTorch TensorFlow only reads the data (tf.data): hide the GPUs from it, so that it
    does not take their memory from the backend. Call before TensorFlow runs anything."""
    import keras  # pylint: disable=g-import-not-at-top

    if keras.backend.backend() != "tensorflow":
        import tensorflow as tf  # pylint: disable=g-import-not-at-top

        tf.config.set_visible_devices([], "GPU")


def start_determinism(settings):
    """`settings.deterministic`: op determinism, one inter-op thread and the seeds (`settings.seed`),
    set before TensorFlow runs any op (so before the distribution strategy is made)."""
    if settings.deterministic:
        from albert_tf.training.determinism import make_deterministic  # pylint: disable=g-import-not-at-top

        make_deterministic(settings.seed)


def settle_kernels(settings):
    """Decides `settings.kernels="auto"` once, after the strategy is made (a TPU's devices are
    visible only then), and writes the chosen set back, so every model of the run uses it; a set
    that is not bit-identical from run to run with `deterministic`, or is TensorFlow's off
    TensorFlow, is a ConfigError naming `kernels`."""
    import tensorflow as tf  # pylint: disable=g-import-not-at-top

    from albert_tf.kernels import choose  # pylint: disable=g-import-not-at-top

    try:
        settings.kernels = choose(settings.kernels, tf.config.list_logical_devices(), settings.deterministic)
    except ValueError as error:
        with_deterministic = " with {deterministic}" if settings.deterministic else ""
        raise ConfigError("kernels", None, "{kernels}={value}%s: {error}" % with_deterministic,
                          value=settings.kernels, error=str(error)) from None


def require_recompute_trainable(config):
    """`recompute` trains only without dropout in the encoder (recomputation would draw new masks)."""
    require(not (config.hidden_dropout_prob or config.attention_probs_dropout_prob), "recompute",
            "{recompute} needs hidden_dropout_prob and attention_probs_dropout_prob 0 in the config (recomputing a "
            "block draws new dropout masks), got {hidden} and {attention}", hidden=config.hidden_dropout_prob,
            attention=config.attention_probs_dropout_prob)
