"""Where `albert-pretrain` trains: the backend's devices and processes, its trainer and its checkpoints.

On TensorFlow, a `tf.distribute` strategy and `PretrainingTrainer` (TensorFlow checkpoints); on
JAX and PyTorch, a `keras.distribution` (JAX) and `KerasPretrainingTrainer` (portable
checkpoints). The command asks a `Placement` and is otherwise the same on every backend.
"""

import dataclasses
import os
import sys
from typing import Callable

from albert_cli.cli import UsageError, flag_text
from albert_tf.tasks.run_setup import keep_tensorflow_off_accelerators, start_determinism
from albert_tf.error_text import SettingError


@dataclasses.dataclass(frozen=True)
class Placement:
    """`replicas`: devices a global batch is split over; `workers`: processes; `worker_dir`: where
    this process writes checkpoints; `trainer(config, settings)`; `check_resumable(trainer)` and
    `cannot_resume(error)`: the checks and error of resuming from `worker_dir`."""

    description: str
    replicas: int
    workers: int
    worker_dir: str
    trainer: Callable
    check_resumable: Callable
    cannot_resume: Callable


def tensorflow_placement(flags, strategy_name):
    """A `tf.distribute` strategy from `--strategy` (and the TPU flags); exactly as before JAX and PyTorch."""
    from albert_tf.pretraining.trainer import PretrainingTrainer  # pylint: disable=g-import-not-at-top
    from albert_tf.training import distribute  # pylint: disable=g-import-not-at-top
    from albert_tf.training.portable_checkpoints import check_checkpoint_kind  # pylint: disable=g-import-not-at-top
    from albert_tf.training.resume_check import cannot_resume, check_resumable, fall_back_to_intact  # pylint: disable=g-import-not-at-top

    start_determinism(flags)
    if flags.num_cpu_devices > 1:
        distribute.split_cpu(flags.num_cpu_devices)
    strategy = distribute.get_strategy(strategy_name, flags.tpu_name or flags.master, flags.tpu_zone, flags.gcp_project)
    worker_dir = distribute.worker_output_dir(flags.output_dir, strategy)

    def check(trainer):
        check_checkpoint_kind(worker_dir)
        if flags.resume_from_intact_checkpoint and (note := fall_back_to_intact(worker_dir)):
            sys.stderr.write(f"--output_dir: {note}\n")
        check_resumable(worker_dir, trainer.model, fall_back_setting="resume_from_intact_checkpoint")

    return Placement(type(strategy).__name__, strategy.num_replicas_in_sync, distribute.num_workers(strategy),
                     worker_dir, lambda config, settings: PretrainingTrainer(strategy, config, settings), check,
                     lambda error: cannot_resume(flags.output_dir, error))


def keras_placement(flags, strategy_name):
    """`keras.distribution` on JAX (data parallel over the devices), one device on PyTorch."""
    import keras  # pylint: disable=g-import-not-at-top

    from albert_tf.pretraining.keras_trainer import KerasPretrainingTrainer, check_grad_accum_steps  # pylint: disable=g-import-not-at-top
    from albert_tf.training import keras_distribution, portable_checkpoints  # pylint: disable=g-import-not-at-top

    try:
        check_grad_accum_steps(flags.grad_accum_steps)  # the trainer's check, before the data is built
    except ValueError as error:
        raise UsageError(flag_text(error)) from None
    if flags.num_cpu_devices > 1 and keras.backend.backend() == "jax":
        split_host_cpu(flags.num_cpu_devices)
    try:
        replicas = keras_distribution.set_distribution(strategy_name, flags.num_cpu_devices)
    except ValueError as error:
        flag = "--num_cpu_devices" if flags.num_cpu_devices > 1 and strategy_name in (None, "one_device") else "--strategy"
        raise UsageError(f"{flag}: {error}") from None
    if flags.tpu_name or flags.master:
        sys.stderr.write("warning: --tpu_name / --master are not read on JAX: JAX finds the TPU itself\n")
    keep_tensorflow_off_accelerators()
    start_determinism(flags)
    index, workers = keras_distribution.processes()
    worker_dir = flags.output_dir if index == 0 else os.path.join(flags.output_dir, f"workertemp_{index}")

    def check(trainer):
        del trainer
        portable_checkpoints.check_checkpoint_kind(worker_dir)
        if flags.resume_from_intact_checkpoint and (note := portable_checkpoints.drop_damaged(worker_dir)):
            sys.stderr.write(f"--output_dir: {note}\n")

    def cannot_resume(error):
        return SettingError("{output_dir} {directory}: its latest checkpoint cannot be restored ({detail}); run "
                            "again with {resume_from_intact_checkpoint} to go back to the newest intact one, or use "
                            "another {output_dir}, or the config it was trained with",
                            directory=worker_dir, detail=" ".join(str(error).split())[:300])

    description = f"keras.distribution.DataParallel over {replicas} devices" if replicas > 1 else "one device"
    return Placement(description, replicas, workers,
                     worker_dir, lambda config, settings: KerasPretrainingTrainer(config, settings, replicas),
                     check, cannot_resume)


def split_host_cpu(num_devices):
    """`--num_cpu_devices` on JAX: the CPU as that many devices (tests, CPU runs of `mirrored`),
    asked of XLA before JAX first looks at its devices."""
    flag = f"--xla_force_host_platform_device_count={num_devices}"
    os.environ["XLA_FLAGS"] = " ".join([os.environ.get("XLA_FLAGS", ""), flag]).strip()
