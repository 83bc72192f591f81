"""Train-and-score for the experiments that compare pretrained variants under one budget."""

from albert_cli.experiments.finetune import fine_tune_and_score
from albert_cli.experiments.parameters import backbone_parameters
from albert_cli.experiments.pretrain import heldout_metrics, pretrain
from albert_tf.pretraining.trainer import PretrainingTrainer


def train_and_score(setup, name, config, train_file, heldout_files, log=print, trainer_class=PretrainingTrainer):
    """One variant: pretrained on `train_file`, then held-out metrics on each of `heldout_files`
    ({label: file}; keys prefix the metric names), then fine-tuned and scored on the GLUE dev split.
    `trainer_class`: the library's trainer, or the MLM-only one (`mlm_only.MlmOnlyTrainer`).

    Returns (row of results, the trainer, so that the caller can measure the model further).
    """
    log(f"{name}: pretraining {setup.train_steps} steps ({backbone_parameters(config):,} parameters)")
    trainer = pretrain(config, train_file, setup, log=log, trainer_class=trainer_class)
    row = {"variant": name, "parameters": backbone_parameters(config), "config": config.to_dict()}
    for label, path in heldout_files.items():
        metrics = heldout_metrics(trainer, path, setup)
        row.update({f"{label}_{key}": value for key, value in metrics.items()})
    log(f"{name}: fine-tuning {setup.finetune_task} {setup.finetune_steps} steps")
    scores = fine_tune_and_score(trainer.model.albert, setup)
    row.update({f"{setup.finetune_task}_dev_{key}": value for key, value in scores.items()})
    log(f"{name}: {row}")
    return row, trainer
