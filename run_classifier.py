"""Fine-tunes, evaluates and exports ALBERT on a GLUE task: `albert-classify` in a checkout.

    python run_classifier.py --task_name=SST-2 --do_train --do_eval --train_step=300 \\
        --output_dir=output/glue/SST-2 --export_dir=output/glue/SST-2/export

The flags and what they do: `albert_cli/classify.py`, docs/fine_tuning.md.
"""

from albert_cli.classify import console_main

if __name__ == "__main__":
    console_main()
