"""Paths of the bundled defaults (configs, the official SentencePiece model, data samples).

They are package data of `albert_cli`: the repository's top-level `configs/` and `data/`, which
this package links to in a checkout and carries as copies in a wheel. Paths are real files, so
they can be given to any flag or reader.
"""

import importlib.resources
import os

_ROOT = importlib.resources.files(__package__)


def bundled_path(*parts):
    """The path of a bundled file, e.g. `bundled_path("configs", "albert_tiny.json")`."""
    path = os.fspath(_ROOT.joinpath(*parts))
    if not os.path.exists(path):
        raise FileNotFoundError(f"bundled file {'/'.join(parts)} is missing from {os.fspath(_ROOT)}; reinstall albert-tf.")
    return path


TINY_CONFIG = bundled_path("configs", "albert_tiny.json")
SPM_MODEL = bundled_path("data", "albert_spm", "30k-clean.model")
# What `run_pretraining.py` builds its default data from (its last documents are held out).
PRETRAINING_CORPUS = bundled_path("data", "corpus", "pretraining_sample.txt")
GLUE_SAMPLES = bundled_path("data", "glue")


# The directories of bundled files, as a command line names them (`configs/albert_base.json`).
_BUNDLED_DIRS = ("configs/", "data/")
_FLAGFILE = ("--flagfile=", "-flagfile=")


def resolve(path):
    """`path`, or the bundled file it names (`configs/...`, `data/...`) where `path` does not exist:
    the repository's examples then run from any directory."""
    if path.startswith(_BUNDLED_DIRS) and not os.path.exists(path):
        bundled = os.fspath(_ROOT.joinpath(*path.split("/")))
        if os.path.exists(bundled):
            return bundled
    return path


def resolve_command_line(argv, _reading=()):
    """`argv` with bundled files found by name (`resolve`), in flag values and in flag files,
    whose lines (nested ones too) replace their `--flagfile=` argument as absl would read them."""
    resolved = []
    for arg in argv:
        name, equals, value = arg.partition("=")
        if arg.startswith(_FLAGFILE):
            path = resolve(value)
            if path in _reading:
                raise ValueError(f"--flagfile={value} includes itself")
            try:
                with open(path, encoding="utf-8") as handle:
                    lines = [line.strip() for line in handle]
            except OSError as error:
                raise ValueError(f"--flagfile={value}: cannot read it ({error.strerror or error})") from None
            flag_lines = [line for line in lines if line and not line.startswith(("#", "//"))]
            resolved.extend(resolve_command_line(flag_lines, _reading + (path,)))
        else:
            resolved.append(f"{name}={resolve(value)}" if equals and name.startswith("-") else resolve(arg))
    return resolved
