"""A package's top-level names imported at first use, so that light importers (the data builder's
worker processes) do not pay for TensorFlow."""

import importlib


def lazy_names(package, exports):
    """(`__all__`, `__getattr__`, `__dir__`) for a package's `__init__`, from {name: module holding it}."""
    names = sorted(exports)

    def __getattr__(name):
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(exports[name]), name)

    def __dir__():
        return names

    return names, __getattr__, __dir__
