"""Imports albert_tf before any test module imports TensorFlow, so tests run with its CPU defaults."""

import albert_tf  # noqa: F401
