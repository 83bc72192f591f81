"""A fine-tuning run's checkpoints on this Keras backend, chosen in one place (`for_this_backend`).

`evaluated_training` saves, checks, restores and repairs its checkpoints through one of two kinds
with the same methods: TensorFlow's object-based checkpoints (`tf.train.Checkpoint`, the
`checkpoints/ckpt-N.*` and `best/model.*` files TensorFlow runs have always written) on the
TensorFlow backend, and portable checkpoints (`albert_tf.checkpoints.portable`: `ckpt-N/` and
`best/model/` directories of safetensors) on JAX and PyTorch, whose variables TensorFlow cannot save.
Both sit at the same paths and hold the same things: the model, the optimizer, the dropout seed
states and the run records (`run_records.EvalRecords`).
"""

import keras
import tensorflow as tf

from albert_tf.checkpoints.portable import is_portable_checkpoint, latest_portable_checkpoint, read_state
from albert_tf.error_text import SettingError, error_line
from albert_tf.training import resume_check, run_records
from albert_tf.training.checkpoint_saving import latest_checkpoint
from albert_tf.training.portable_checkpoints import (PortableCheckpoint, PortableCheckpointManager,
                                                     check_checkpoint_kind, damage)


class TensorFlowCheckpoints:
    """`tf.train.Checkpoint` and `tf.train.CheckpointManager`, as on TensorFlow before JAX and PyTorch ran."""

    @staticmethod
    def manager(state, records, directory, max_to_keep):
        return tf.train.CheckpointManager(tf.train.Checkpoint(**state, records=records), directory,
                                          max_to_keep=max_to_keep)

    @staticmethod
    def best_checkpoint(model, records):
        """What `best/` holds: the weights and the records naming their step (`.write(prefix)`)."""
        return tf.train.Checkpoint(model=model, records=records)

    @staticmethod
    def check_resumable(directory, model):
        check_checkpoint_kind(directory)
        resume_check.check_resumable(directory, model)

    @staticmethod
    def restore(manager, state, latest):
        """Restores `latest` into `manager`'s objects; returns the records it held (None: a checkpoint
        written before the records rode in it, restored without them)."""
        stored = run_records.stored_records(latest)
        restored = manager.checkpoint if stored is not None else tf.train.Checkpoint(**state)
        try:
            restored.restore(latest).assert_existing_objects_matched()
        except (AssertionError, ValueError, tf.errors.OpError, IndexError) as error:
            raise resume_check.cannot_resume(manager.directory, error) from None
        return stored

    @staticmethod
    def resume_callbacks():
        return []  # a restore takes effect at once

    @staticmethod
    def read_weights(model, prefix):
        tf.train.Checkpoint(model=model).read(prefix).expect_partial()

    @staticmethod
    def latest(directory):
        return latest_checkpoint(directory)

    @staticmethod
    def exists(prefix):
        return tf.io.gfile.exists(prefix + ".index")

    @staticmethod
    def damaged(prefix):
        return resume_check.damaged(prefix)

    best_step = staticmethod(run_records.best_step)


class TorchRandomStateAtFirstBatch(keras.callbacks.Callback):
    """Sets PyTorch's global random state, as a resume restored it, again when the first batch
    begins. Keras' unseeded dropout draws from it on PyTorch, and so does making `fit`'s data
    iterator (once per `fit`): the uninterrupted run made its iterator before step 1, not at the
    checkpoint, so without this the resumed run's masks would be drawn one draw later."""

    def __init__(self):
        super().__init__()
        import torch  # pylint: disable=g-import-not-at-top

        self.restored = torch.get_rng_state()

    def on_train_batch_begin(self, batch, logs=None):
        import torch  # pylint: disable=g-import-not-at-top

        if self.restored is not None:
            torch.set_rng_state(self.restored)
            self.restored = None


class PortableCheckpoints:
    """Portable checkpoints (`training.portable_checkpoints`), on JAX and PyTorch."""

    @staticmethod
    def manager(state, records, directory, max_to_keep):
        # The dropout seed states (and PyTorch's random state) ride in every portable checkpoint.
        return PortableCheckpointManager(PortableCheckpoint(state["model"], state["optimizer"], records=records),
                                         directory, max_to_keep)

    @staticmethod
    def resume_callbacks():
        """Callbacks for the `fit` that follows a restore, right after it (PyTorch's random state)."""
        return [TorchRandomStateAtFirstBatch()] if keras.backend.backend() == "torch" else []

    @staticmethod
    def best_checkpoint(model, records):
        return PortableCheckpoint(model, records=records)

    @classmethod
    def check_resumable(cls, directory, model):
        check_checkpoint_kind(directory)
        latest = cls.latest(directory)
        if latest is None:
            return
        problem = cls.damaged(latest)
        if problem is not None:
            raise SettingError("{output_dir}: the latest checkpoint {latest} is damaged ({problem}); delete it and "
                               "run again to resume from the one before, or use another {output_dir}",
                               latest=latest, problem=problem)
        problems = resume_check.mismatches(latest, model)
        if problems:
            raise _not_this_model(directory, latest, problems)

    @staticmethod
    def restore(manager, state, latest):
        del state  # every portable checkpoint holds the records
        try:
            manager.checkpoint.read(latest)
        except ValueError as error:
            raise _not_this_model(manager.directory, latest, error_line(error)) from None
        return manager.checkpoint.state["records"]

    @staticmethod
    def read_weights(model, prefix):
        PortableCheckpoint(model).read(prefix)

    @staticmethod
    def latest(directory):
        return latest_portable_checkpoint(directory)

    @staticmethod
    def exists(prefix):
        return is_portable_checkpoint(prefix)

    damaged = staticmethod(damage)

    @classmethod
    def best_step(cls, prefix):
        """The step whose weights `best/` holds (its own records), or None (none there, or damaged)."""
        if not cls.exists(prefix):
            return None
        try:
            records = run_records.EvalRecords()
            records.deserialize(read_state(prefix)["records"])
        except (ValueError, OSError, KeyError, TypeError):
            return None  # damaged: restoring it names the damage
        return None if records.best is None else records.best["step"]


def _not_this_model(directory, latest, detail):
    return SettingError("{output_dir} {directory} holds {latest}, which does not fit this model ({detail}); use "
                        "another {output_dir}, or the config and task it was trained with",
                        directory=directory, latest=latest, detail=" ".join(str(detail).split())[:300])


def for_this_backend():
    """The checkpoints of the Keras backend this process runs on."""
    return TensorFlowCheckpoints if keras.backend.backend() == "tensorflow" else PortableCheckpoints


def holding(prefix):
    """The kind of the checkpoint at `prefix`: portable ones are read on every backend (a model
    fine-tuned on JAX or PyTorch is evaluated and exported on TensorFlow), TensorFlow's on it; a
    SettingError for TensorFlow's off it."""
    if is_portable_checkpoint(prefix):
        return PortableCheckpoints
    backend = keras.backend.backend()
    if backend != "tensorflow" and TensorFlowCheckpoints.exists(prefix):
        raise SettingError("{output_dir}: its best model {prefix} is a TensorFlow checkpoint, which the " + backend
                           + " backend does not restore: run the same command with KERAS_BACKEND=tensorflow",
                           prefix=prefix)
    return for_this_backend()
