"""ALBERT pretraining (MLM + SOP): `albert-pretrain` in a checkout.

    python run_pretraining.py
    python run_pretraining.py --flagfile=configs/pretraining_paper.flags --input_file=...

The flags and what they do: `albert_cli/pretrain.py`, docs/pretraining.md.
"""

from albert_cli.pretrain import console_main

if __name__ == "__main__":
    console_main()
