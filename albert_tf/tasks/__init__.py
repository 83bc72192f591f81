"""Fine-tuning tasks as library objects: each task's config (a validated dataclass with the commands'
flag names), what differs from one task to another, and the errors they raise."""

from albert_tf.tasks.classifier_config import ClassifierConfig
from albert_tf.tasks.config import FineTuningConfig
from albert_tf.tasks.config_error import ConfigError
from albert_tf.tasks.race_config import RaceConfig
from albert_tf.tasks.squad_config import SquadConfig

__all__ = ["ClassifierConfig", "ConfigError", "FineTuningConfig", "RaceConfig", "SquadConfig"]
