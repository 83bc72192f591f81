"""Tests run with TensorFlow's oneDNN CPU kernels on, as the scripts ask for them."""

from albert_cli.cli import prefer_onednn

prefer_onednn()  # before any test module imports TensorFlow
