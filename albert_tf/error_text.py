"""One readable line from an exception, for the one-line errors the scripts print.

TensorFlow's runtime errors wrap their sentence in the graph function and op that raised it
(`{{function_node __wrapped__...}} corrupted record at 0 [Op:IteratorGetNext] name: `); a user
needs only the sentence.
"""
import re

_TENSORFLOW_WRAPPING = re.compile(r"\{\{[^}]*\}\}\s*|\s*\[Op:[^\]]*\].*$")


def error_line(error, limit=300):
    """`error`'s first line without TensorFlow's function and op names (its type name if empty)."""
    text = getattr(error, "message", None) or str(error)
    lines = text.strip().splitlines()
    line = _TENSORFLOW_WRAPPING.sub("", lines[0]).strip() if lines else ""
    return line[:limit] or type(error).__name__
