"""The command-line layer of albert-tf: the scripts' entry points and their bundled defaults.

`albert_tf` (the model library) and `data_prep` (the data library) know nothing of this package;
this package wires both to flags. The bundled configs, SentencePiece model and samples are its
package data (`configs/` and `data/` here are the repository's top-level directories), so the
installed commands work from any directory.
"""
