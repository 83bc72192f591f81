"""Pretraining: the TFRecord schema and reader, and the MLM + SOP trainer behind `run_pretraining.py`."""
