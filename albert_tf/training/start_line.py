"""The line pretraining and fine-tuning say before they train: what the output directory holds
and what the run will do with it, the same words for both."""

import os


def start_line(verb, output_dir, latest, step, train_steps, steps_setting, start=""):
    """`latest`: the checkpoint found (of `step`) or None; `verb`: "training" or "fine-tuning";
    `steps_setting` names where `train_steps` comes from; `start`: what a fresh run starts from."""
    if latest is None:
        return f"no checkpoint in {output_dir}: {verb}{' ' + start if start else ''} from step 0 to step {train_steps}"
    found = f"{os.path.basename(latest)} (step {step}) in {output_dir}"
    if step >= train_steps:
        return f"finished run: {found} is the last step ({steps_setting}); nothing to train"
    return f"resuming from {found}: {verb} to step {train_steps}"
