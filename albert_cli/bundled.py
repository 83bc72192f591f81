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
