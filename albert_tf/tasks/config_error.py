"""The one exception a task's config raises: a field (or fields) that cannot run as given.

A `SettingError` (a ValueError): its message names fields as `{name}`, so that `str(error)` says
`train_file` to a Python caller and a command's one-line error says `--train_file` (the fields are
the commands' flag names).
"""

from albert_tf.error_text import SettingError


class ConfigError(SettingError):
    """`field`: the field at fault; `template`: the message, naming fields as `{name}` (default
    `{field}: message`)."""

    def __init__(self, field, message, template=None, **values):
        self.field = field
        super().__init__(template or "{%s}: {message}" % field, message=message, **values)


def require(condition, field, template, **values):
    """Raises `ConfigError(field, ...)` with `template` (fields as `{name}`) unless `condition` holds."""
    if not condition:
        raise ConfigError(field, None, template, **values)
