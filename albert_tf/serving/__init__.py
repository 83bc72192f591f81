"""Exports: SavedModels for TF Serving and TF-Hub-style reuse (text in, tokenized in the graph), all
on one base (`export_module.ExportModule`); LiteRT files for devices in `litert/`."""
