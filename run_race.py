"""Fine-tunes ALBERT on RACE, evaluates, predicts and exports: `albert-race` in a checkout.

    python run_race.py --data_dir=data_root --do_train --do_eval --output_dir=output/race

The flags and what they do: `albert_cli/race.py`, docs/squad_race.md.
"""

from albert_cli.race import console_main

if __name__ == "__main__":
    console_main()
