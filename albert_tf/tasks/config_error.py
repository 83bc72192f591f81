"""The one exception a task's config raises: a field (or fields) that cannot run as given.

A `SettingError` (a ValueError): its message names fields as `{name}`, so that `str(error)` says
`train_file` to a Python caller and a command's one-line error says `--train_file` (the fields are
the commands' flag names).
"""

import contextlib

from albert_tf.error_text import NamesSettings, SettingError


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


def field_error(field, error, advice=""):
    """The `ConfigError` `{field}: <error><advice>` of a library error about `field`'s value; the
    settings `error` names (`NamesSettings`) stay settings, and so do those `advice` names as `{name}`."""
    if isinstance(error, NamesSettings):
        template, values = error.template, error.values
    else:
        template, values = "{error_text}", {"error_text": str(error)}
    return ConfigError(field, None, "{%s}: %s%s" % (field, template, advice), **values)


@contextlib.contextmanager
def checked(field, advice=""):
    """A library check of `field`'s value in the block: its ValueError or FileNotFoundError becomes
    `field_error(field, error, advice)`."""
    try:
        yield
    except (ValueError, FileNotFoundError) as error:
        raise field_error(field, error, advice) from None
