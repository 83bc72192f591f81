"""One readable line from an exception, for the one-line errors the scripts print.

TensorFlow's runtime errors wrap their sentence in the graph function and op that raised it
(`{{function_node __wrapped__...}} corrupted record at 0 [Op:IteratorGetNext] name: `); a user
needs only the sentence.
"""
import re
import string

_TENSORFLOW_WRAPPING = re.compile(r"\{\{[^}]*\}\}\s*|\s*\[Op:[^\]]*\].*$")


def error_line(error, limit=300):
    """`error`'s first line without TensorFlow's function and op names (its type name if empty)."""
    text = getattr(error, "message", None) or str(error)
    lines = text.strip().splitlines()
    line = _TENSORFLOW_WRAPPING.sub("", lines[0]).strip() if lines else ""
    return line[:limit] or type(error).__name__


class _SettingFormatter(string.Formatter):
    """Fills a template's values; a field that is not a value is a setting, spelled by `spell`."""

    def __init__(self, spell):
        super().__init__()
        self.spell = spell

    def get_value(self, key, args, kwargs):
        return kwargs[key] if key in kwargs else self.spell(key)


class NamesSettings:
    """An error whose message names settings (the library's parameters) as `{name}` fields.

    `template` is formatted with `values`; each other field is a setting: `str(error)` shows its
    name, `worded(spell)` shows `spell(name)` (a script's flag, `--name`). The library stays free
    of flags while a script's one-line error still names the flag to change.
    """

    def __init__(self, template, **values):
        self.template, self.values = template, values
        super().__init__(self.worded(str))

    def worded(self, spell):
        return _SettingFormatter(spell).vformat(self.template, (), self.values)


class SettingError(NamesSettings, ValueError):
    """A bad setting value (see `NamesSettings`)."""


class TrainingDiverged(NamesSettings, RuntimeError):
    """The loss (or a dev metric) became NaN or infinite, in pretraining or fine-tuning; nothing after
    the last good checkpoint was saved."""


class SettingFileNotFound(NamesSettings, FileNotFoundError):
    """A setting names a file or directory that does not exist (see `NamesSettings`)."""
