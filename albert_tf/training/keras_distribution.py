"""`--strategy` off TensorFlow: `keras.distribution` data parallelism on JAX, one device on PyTorch.

On JAX, `mirrored` and `tpu` shard each global batch over every device JAX sees (GPUs, TPU cores,
or the CPU split by `--num_cpu_devices`), and `multi_worker_mirrored` first joins the processes of
a multi-host job (`keras.distribution.initialize`, which reads the coordinator from the
environment a TPU pod or a cluster manager sets), then shards over all of their devices. Keras'
distribution API exists for JAX alone; PyTorch here runs on one device (multi-GPU PyTorch would
need `torch.distributed` with a DistributedDataParallel wrapper, which Keras does not provide).
"""

import keras

DATA_PARALLEL_STRATEGIES = ("mirrored", "multi_worker_mirrored", "tpu")


def set_distribution(strategy_name, num_cpu_devices=1):
    """Sets the Keras distribution for `strategy_name` (None / `one_device`: none) on this backend;
    returns the number of devices a global batch is split over. ValueError for a strategy or a
    device count the backend cannot run, before any work. `num_cpu_devices` above 1: the CPU split
    into that many devices, which the caller asked JAX for before JAX started
    (`XLA_FLAGS=--xla_force_host_platform_device_count=N`)."""
    backend = keras.backend.backend()
    if strategy_name not in (None, "one_device") + DATA_PARALLEL_STRATEGIES:
        raise ValueError(f"unknown strategy {strategy_name!r}")
    if backend != "jax":
        if strategy_name not in (None, "one_device") or num_cpu_devices > 1:
            what = f"strategy {strategy_name}" if strategy_name not in (None, "one_device") else "several CPU devices"
            raise ValueError(f"{what} needs KERAS_BACKEND=jax or tensorflow; the {backend} backend trains on "
                             "one device")
        return 1
    if strategy_name == "multi_worker_mirrored":
        keras.distribution.initialize()
    devices = keras.distribution.list_devices()
    if num_cpu_devices > 1 and len(devices) != num_cpu_devices:
        raise ValueError(f"asked for {num_cpu_devices} CPU devices, JAX sees {len(devices)} (it was started "
                         "before the flag took effect)")
    if strategy_name in (None, "one_device"):
        return 1
    keras.distribution.set_distribution(keras.distribution.DataParallel(devices=devices))
    return len(devices)


def processes():
    """(this process's index, the number of processes): (0, 1) but in a multi-process JAX job."""
    if keras.backend.backend() != "jax":
        return 0, 1
    import jax  # pylint: disable=g-import-not-at-top

    return jax.process_index(), jax.process_count()


def is_chief():
    """True in the process that writes the run's files (process 0)."""
    return processes()[0] == 0
