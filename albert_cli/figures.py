"""matplotlib, an optional extra (`pip install albert-tf[plots]`): imported only to draw a figure."""

import importlib

from albert_cli.cli import UsageError

INSTALL = "pip install 'albert-tf[plots]' (or pip install matplotlib)"


def matplotlib_module(name="matplotlib"):
    """The matplotlib module `name`, or a UsageError that says what to install."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as error:
        if (error.name or "").split(".")[0] != "matplotlib":
            raise
        raise UsageError(f"drawing figures needs matplotlib, an optional extra: {INSTALL}") from None
