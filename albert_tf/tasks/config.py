"""What every fine-tuning task's config holds: the settings of `albert-classify`, `albert-squad` and
`albert-race` that they share, under the commands' flag names, with their meaning and defaults.

A config is a dataclass checked when it is made (`ConfigError` names the field) and saved as JSON
(`to_dict` / `from_dict`, which refuses a key it does not know). The paths the commands default
to the bundled files (the SentencePiece model, the tiny config) are None here: the library does
not know the command's package data.
"""

import dataclasses
import math

from albert_tf.choices import MAX_BATCH_SIZE, MAX_STRING_BYTES, OPTIMIZER_NAMES, PRECISION_POLICIES, STRATEGY_NAMES
from albert_tf.kernels import EXPORT_KERNEL_SETS, KERNELS_FLAG_VALUES
from albert_tf.tasks.config_error import ConfigError, require

MAX_SEED = 2**32 - 1  # what NumPy's and Keras' seeding take


@dataclasses.dataclass
class FineTuningConfig:
    """The shared settings; a task's config subclasses it (`ClassifierConfig`, `SquadConfig`, `RaceConfig`)."""

    spm_model_file: str = None
    albert_config_file: str = None  # None: the config `init_checkpoint` carries
    init_checkpoint: str = None
    extend_positions: str = None
    output_dir: str = None
    cached_dir: str = None  # None: <output_dir>/features
    do_lower_case: bool = True
    keep_checkpoint_max: int = 5
    optimizer: str = "adamw"
    seed: int = 12345
    strategy: str = None  # None: from the hardware
    tpu_name: str = None
    mixed_precision: str = "float32"
    jit_compile: bool = False
    kernels: str = "auto"
    deterministic: bool = False
    max_seq_length: int = 512
    do_train: bool = False
    do_predict: bool = False
    train_batch_size: int = 32
    learning_rate: float = 5e-5
    save_checkpoints_steps: int = 1000
    export_dir: str = None
    export_version: int = None  # None: the Unix time, or one above the highest version there
    export_kernels: str = "reference"
    export_max_batch_size: int = MAX_BATCH_SIZE
    export_max_string_bytes: int = MAX_STRING_BYTES

    # {field: the values it takes} and {field: its least value}, of this class and its bases.
    CHOICES = {"optimizer": OPTIMIZER_NAMES, "strategy": STRATEGY_NAMES + (None,),
               "mixed_precision": PRECISION_POLICIES, "kernels": KERNELS_FLAG_VALUES,
               "export_kernels": EXPORT_KERNEL_SETS, "extend_positions": ("repeat", None)}
    AT_LEAST = {"keep_checkpoint_max": 1, "seed": 0, "max_seq_length": 3, "train_batch_size": 1,
                "save_checkpoints_steps": 1, "export_version": 1, "export_max_batch_size": 1,
                "export_max_string_bytes": 1}

    def __post_init__(self):
        for cls in reversed(type(self).__mro__):
            for name, choices in vars(cls).get("CHOICES", {}).items():
                require(getattr(self, name) in choices, name, "{%s}: expected one of %s, got {value!r}" % (
                    name, ", ".join(str(choice) for choice in choices if choice is not None)), value=getattr(self, name))
            for name, least in vars(cls).get("AT_LEAST", {}).items():
                value = getattr(self, name)
                bound = "be positive" if least == 1 else "be >= {least}"
                require(value is None or value >= least, name, "{%s} must %s, got {value}" % (name, bound),
                        least=least, value=value)
        require(self.seed <= MAX_SEED, "seed", "{seed} must be at most {most}, got {value}", most=MAX_SEED,
                value=self.seed)
        require(math.isfinite(self.learning_rate) and self.learning_rate > 0, "learning_rate",
                "{learning_rate} must be a finite number > 0, got {value}", value=self.learning_rate)
        require(not self.extend_positions or self.init_checkpoint, "extend_positions",
                "{extend_positions} extends the position table of {init_checkpoint}: give {init_checkpoint} too")
        for name in ("export_dir", "output_dir"):
            require(getattr(self, name) is None or getattr(self, name).strip(), name, "{%s} is empty; give a "
                    "directory" % name)
        self.check()

    def check(self):
        """A task's own checks of fields that must go together (none here)."""

    def export_options(self):
        """{version, kernels, and the request bounds}: the export functions' keyword arguments."""
        return {"version": self.export_version, "kernels": self.export_kernels,
                "max_batch_size": self.export_max_batch_size, "max_string_bytes": self.export_max_string_bytes}

    def to_dict(self):
        """{field: value}, JSON-safe (lists for sequences)."""
        return {name: list(value) if isinstance(value, tuple) else value
                for name, value in dataclasses.asdict(self).items()}

    @classmethod
    def from_dict(cls, values):
        """The config of `to_dict`'s form; a key that is no field of `cls` is a `ConfigError` naming it."""
        names = {field.name for field in dataclasses.fields(cls)}
        for key in values:
            if key not in names:
                raise ConfigError(key, None, "{key!r}: not a setting of {kind}", key=key, kind=cls.__name__)
        return cls(**values)
