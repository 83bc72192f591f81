"""Fine-tunes ALBERT on SQuAD v1.1 / v2.0, predicts and exports: `albert-squad` in a checkout.

    python run_squad.py --version_2_with_negative --do_train --do_predict \
        --train_file=train-v2.0.json --predict_file=dev-v2.0.json --output_dir=output/squad2

The flags and what they do: `albert_cli/squad.py`, docs/squad_race.md.
"""

from albert_cli.squad import console_main

if __name__ == "__main__":
    console_main()
