"""Exports a pretrained ALBERT encoder and its text preprocessing: `albert-export-encoder` in a checkout.

    python export_encoder.py --init_checkpoint=output/pretraining --export_dir=output/hub

The flags and what they do: `albert_cli/export_encoder.py`, docs/serving.md.
"""

from albert_cli.export_encoder import console_main

if __name__ == "__main__":
    console_main()
