"""GLUE classification and regression as a fine-tuning task (`albert-classify`; its config:
`ClassifierConfig`): TSV or TFDS splits, the classifier head, the task's loss and metrics, GLUE
submission files, the SavedModel and LiteRT exports."""

import dataclasses
import os

from absl import logging

from albert_tf.glue import features as glue_features
from albert_tf.glue import training
from albert_tf.glue.examples import read_examples
from albert_tf.glue.metrics import majority_baseline
from albert_tf.glue.submission import write_submission
from albert_tf.glue.tasks import AX, get_task
from albert_tf.io_utils import write_json
from albert_tf.models import AlbertClassifier
from albert_tf.serving.classifier_export import export_classifier
from albert_tf.serving.litert.mediapipe import check_seq_length, check_single_text_task
from albert_tf.serving.litert.publish import export_tflite
from albert_tf.tasks.config_error import ConfigError, checked
from albert_tf.tasks.export_formats import LITERT, SAVED_MODEL, check_litert_output, export_all
from albert_tf.tasks.task import FineTuningTask, TrainingPlan


class SplitData:
    """One split read, featurized (cached) and ready to batch."""

    def __init__(self, config, task, split, tokenizer, cache_dir, example_set=None):
        """`example_set`: the split's examples, read already (default: from `data_dir` or TFDS)."""
        self.config, self.task = config, task
        if example_set is None:
            example_set = read_examples(task, split, config.data_dir, config.tfds_data_dir)
        if not example_set.examples:
            raise ValueError(f"{example_set.source}: no examples")
        self.examples = example_set.examples
        self.path = glue_features.cached_features(task, split, example_set, tokenizer, config.max_seq_length,
                                                  cache_dir)
        self.labels = [glue_features.label_value(task, example.label) for example in self.examples]

    def dataset(self, batch_size, training=False, seed=None):
        return glue_features.make_dataset(self.task, self.path, batch_size, self.config.max_seq_length,
                                          padding=self.config.padding, training=training, seed=seed)


class GlueFineTuning(FineTuningTask):
    """Fine-tuning on the GLUE task `task_name` names (an `albert_tf.glue.tasks.GlueTask`), or another of its kind
    (`own_data_task.OwnDataTask`)."""

    def __init__(self, config, report=logging.info, glue_task=None):
        """`glue_task`: the task (default: the one `task_name` names)."""
        super().__init__(config, report)
        self.glue_task = self.named_labels(glue_task or get_task(config.task_name))
        self.name = self.glue_task.name
        self.selection_metric = self.glue_task.selection_metric
        self.loss = training.task_loss(self.glue_task)
        self.eval_sets, self.train_data, self.tokenizer, self.cache_dir = [], None, None, None
        self.saved_model_paths = []  # what export() wrote

    def named_labels(self, task):
        """`task` with `label_names` as its `display_labels`, if given (as many as it has labels)."""
        names = self.config.label_names
        if not names:
            return task
        if task.is_regression:
            raise ConfigError("label_names", f"{task.name} is a regression; it has no labels")
        if len(names) != task.num_labels or len(set(names)) != len(names):
            raise ConfigError("label_names", f"{task.name} has {task.num_labels} labels ({', '.join(task.labels)}), "
                              f"got {len(names)} name(s) {names}")
        return dataclasses.replace(task, display_labels=tuple(names))

    def label_names(self):
        return self.glue_task.label_names

    def check_inputs(self):
        """`export_tflite` writes MediaPipe's form: one lowercased text in, class probabilities out."""
        if self.config.export_tflite is None:
            return
        with checked("export_tflite", "; its SavedModel ({export_dir}) serves it"):
            check_single_text_task(self.glue_task)
        check_litert_output(self.config.export_tflite, "classifier", self.config.do_lower_case, "MediaPipe")

    def check_config(self, model_config):
        if self.config.export_tflite is not None:
            with checked("tflite_seq_length"):
                check_seq_length(self.config.tflite_seq_length, model_config)

    def head(self, backbone):
        return AlbertClassifier(backbone=backbone, num_labels=self.glue_task.num_labels)

    def after_init_checkpoint(self, model):
        if self.config.reinit_pooler:
            model.albert.reset_pooler()

    def fit_model(self, model):
        return training.logits_model(model)

    def split_data(self, split):
        """The `SplitData` of `split` ("train", "dev", ...: `GlueTask.tsv_files`' names)."""
        return SplitData(self.config, self.glue_task, split, self.tokenizer, self.cache_dir)

    def read_dev(self, tokenizer, cache_dir):
        self.tokenizer, self.cache_dir = tokenizer, cache_dir  # the test splits are read by `do_predict`
        if self.config.do_train:  # first: a missing train.tsv is refused before the dev features are built
            self.train_data = self.split_data("train")
        if self.config.do_train or self.config.do_eval:
            for prefix, split in self.glue_task.eval_splits:
                data = self.split_data(split)
                self.eval_sets.append(training.EvalSet(prefix, data.dataset(self.config.eval_batch_size),
                                                       data.labels))

    def training_plan(self, tokenizer, cache_dir, seed):
        if self.train_data is None:
            self.train_data = self.split_data("train")
        return TrainingPlan(self.train_data.dataset(self.config.train_batch_size, training=True, seed=seed),
                            self.config.train_step, self.config.warmup_step, self.config.save_checkpoints_steps,
                            "train_step")

    def evaluate(self, fit_model):
        return training.evaluate(self.glue_task, fit_model, self.eval_sets)

    def seeds(self):
        return [self.config.seed + i for i in range(self.config.seeds)]

    def seeds_summary(self, records):
        return training.summarize_seeds(self.glue_task, records)

    def exports(self):
        return bool(self.config.export_dir or self.config.export_tflite)

    def write_evaluation(self, model):
        metrics = self.evaluate(training.logits_model(model))
        if self.train_data is not None:  # what "learning nothing" scores, for context
            for eval_set in self.eval_sets:
                baseline = majority_baseline(self.glue_task, self.train_data.labels, eval_set.labels)
                metrics.update({f"majority_baseline_{eval_set.prefix}{k}": v for k, v in baseline.items()})
        write_json(os.path.join(self.config.output_dir, "eval_results.json"), metrics)
        self.report(f"{self.name} dev: " + ", ".join(f"{name}={value:.4f}" for name, value in metrics.items()))

    def write_predictions(self, model):
        logits_model = training.logits_model(model)
        submission_dir = os.path.join(self.config.output_dir, "submission")
        jobs = [(self.glue_task, stem, split) for stem, split in self.glue_task.submissions]
        if self.glue_task.name == "MNLI":
            jobs.append((AX, AX.name, "test"))  # GLUE's diagnostic set is predicted by the MNLI model
        for job_task, stem, split in jobs:
            try:
                data = SplitData(self.config, job_task, split, self.tokenizer, self.cache_dir)
            except (ValueError, FileNotFoundError) as error:
                if job_task is not AX:
                    raise
                logging.warning("AX diagnostic set not written: %s", error)
                continue
            logits = training.predict_logits(logits_model, data.dataset(self.config.eval_batch_size),
                                             f"predicting {stem}")
            path = write_submission(job_task, stem, data.examples, logits, submission_dir)
            logging.info("wrote %s (%d rows)", path, len(data.examples))
        return None

    def export(self, model, predicted_metrics):
        config = self.config

        def saved_models():
            self.saved_model_paths = [export_classifier(model, self.glue_task, config.spm_model_file, config.export_dir,
                                      do_lower_case=config.do_lower_case, max_seq_length=config.max_seq_length,
                                      tflite_quantization=config.export_serving_tflite, **config.export_options())]
            return self.saved_model_paths

        def tflite_files():
            return export_tflite(model, config.export_tflite, config.spm_model_file, self.glue_task.label_names,
                                 seq_length=config.tflite_seq_length)

        export_all([(LITERT, tflite_files if config.export_tflite else None),
                    (SAVED_MODEL, saved_models if config.export_dir else None)], self.report)
