"""The command-line layer of albert-tf: the scripts' entry points and their bundled defaults.

`albert_tf` is the library and knows nothing of this package; `data_prep` is the data tooling;
this package wires both to flags. The bundled configs, SentencePiece model and samples are its
package data (`configs/` and `data/` here are the repository's top-level directories), so the
installed commands work from any directory.
"""
