"""SST-2 fine-tuning: epoch time and dev accuracy, dynamic / bucketed vs fixed (128) padding; serving latency.

    python bench/bench_glue.py [--data_dir=data/glue] [--epochs=6]

The trainings start from the same weights; dynamic and fixed see the same batches (bucketed groups
rows by length, so its batches differ). Each mode trains in one `fit` (as run_classifier.py does)
timed per epoch; on a shared machine, `--interleaved` alternates the modes epoch by epoch instead. Serving: our SavedModel (raw text in, tokenized in graph)
versus keras-hub's AlbertTextClassifier of the same size on the same sentences, batch 1 and 32.
"""

import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from albert_cli.cli import prefer_onednn  # noqa: E402

prefer_onednn()  # before TensorFlow loads, as the scripts do

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tensorflow_text  # noqa: E402,F401  (ops of the exported model)
from absl import app, flags  # noqa: E402

from albert_tf import AlbertClassifier, AlbertConfig  # noqa: E402
from albert_tf.glue import features as glue_features  # noqa: E402
from albert_tf.glue import training  # noqa: E402
from albert_tf.glue.examples import read_examples  # noqa: E402
from albert_tf.glue.tasks import get_task  # noqa: E402
from albert_tf.serving.classifier_export import export_classifier  # noqa: E402
from albert_tf.text.tokenization import AlbertTokenizer  # noqa: E402
from bench._common import interleaved_medians, load_average, median, onednn_state  # noqa: E402

flags.DEFINE_string("data_dir", "data/glue", "GLUE directory with SST-2/{train,dev}.tsv.")
flags.DEFINE_string("albert_config_file", "configs/albert_tiny.json", "Model size.")
flags.DEFINE_string("spm_model_file", "data/albert_spm/30k-clean.model", "SentencePiece model.")
flags.DEFINE_integer("epochs", 6, "Epochs per padding mode (the first includes tracing).")
flags.DEFINE_integer("batch_size", 32, "Training batch size.")
flags.DEFINE_float("learning_rate", 1e-4, "Peak learning rate.")
flags.DEFINE_integer("serving_rounds", 20, "Timed serving calls per case.")
flags.DEFINE_integer("accuracy_seeds", 1, "Also train dynamic and bucketed with seeds 2..N (other weights "
                     "and batch order) and report their dev accuracy's mean and spread.")
flags.DEFINE_bool("interleaved", False, "One fit() per epoch, modes alternating (for a shared machine; "
                  "then each epoch also pays fit()'s set-up). Default: one fit() per mode, timed per epoch.")
FLAGS = flags.FLAGS
MAX_SEQ_LENGTH = 128


class EpochTimer(keras.callbacks.Callback):
    """Wall and process CPU seconds of every epoch of one `fit` (steady state: no fit set-up)."""

    def __init__(self, run):
        super().__init__()
        self.run = run

    def on_epoch_begin(self, epoch, logs=None):
        self.started = time.perf_counter(), time.process_time()

    def on_epoch_end(self, epoch, logs=None):
        self.run["epoch_seconds"].append(time.perf_counter() - self.started[0])
        self.run["epoch_cpu"].append(time.process_time() - self.started[1])


def train_both(task, config, train_path, dev, num_train, seed=1, modes=glue_features.PADDING_MODES):
    """Trains one model per padding mode from the same weights (`seed`); returns (runs, steps)."""
    steps = -(-num_train // FLAGS.batch_size)
    runs = {}
    for padding in modes:
        keras.utils.set_random_seed(seed)
        classifier = AlbertClassifier(config, task.num_labels, kernels="cpu")  # as --kernels=auto on a CPU
        model = training.logits_model(classifier)
        optimizer = training.build_optimizer("adamw", FLAGS.learning_rate, steps * FLAGS.epochs, steps // 10)
        model.compile(optimizer=optimizer, loss=training.task_loss(task))
        runs[padding] = {"classifier": classifier, "model": model, "epoch_seconds": [], "epoch_cpu": []}
    if FLAGS.interleaved:
        for epoch in range(FLAGS.epochs):
            for padding, run in runs.items():  # interleaved epochs; the same batches for all but bucketed
                dataset = glue_features.make_dataset(task, train_path, FLAGS.batch_size, MAX_SEQ_LENGTH,
                                                     padding=padding, training=True,
                                                     seed=epoch + 100 * (seed - 1)).take(steps)
                start, start_cpu = time.perf_counter(), time.process_time()
                run["model"].fit(dataset, epochs=1, verbose=0)
                run["epoch_seconds"].append(time.perf_counter() - start)
                run["epoch_cpu"].append(time.process_time() - start_cpu)
    else:
        for padding, run in runs.items():  # one fit per mode, as run_classifier.py trains
            dataset = glue_features.make_dataset(task, train_path, FLAGS.batch_size, MAX_SEQ_LENGTH,
                                                 padding=padding, training=True, seed=seed - 1)
            run["model"].fit(dataset, epochs=FLAGS.epochs, steps_per_epoch=steps, verbose=0,
                             callbacks=[EpochTimer(run)])
    for padding, run in runs.items():
        dev_dataset = glue_features.make_dataset(task, dev["path"], 64, MAX_SEQ_LENGTH, padding=padding)
        run["dev_logits"] = training.predict_logits(run["model"], dev_dataset)
        run["dev_accuracy"] = float((run["dev_logits"].argmax(-1) == dev["labels"]).mean())
    return runs, steps


def serving_latency(task, classifier, config, sentences):
    export_dir = tempfile.mkdtemp(prefix="bench_glue_export_")
    path = export_classifier(classifier, task, FLAGS.spm_model_file, export_dir, max_seq_length=MAX_SEQ_LENGTH)
    ours = tf.saved_model.load(path).signatures["serving_default"]

    import keras_hub  # pylint: disable=g-import-not-at-top

    backbone = keras_hub.models.AlbertBackbone(
        vocabulary_size=config.vocab_size, num_layers=config.num_hidden_layers,
        num_heads=config.num_attention_heads, embedding_dim=config.embedding_size,
        hidden_dim=config.hidden_size, intermediate_dim=config.intermediate_size,
        num_groups=1, num_inner_repetitions=1, max_sequence_length=config.max_position_embeddings)
    preprocessor = keras_hub.models.AlbertTextClassifierPreprocessor(
        keras_hub.models.AlbertTokenizer(proto=FLAGS.spm_model_file), sequence_length=MAX_SEQ_LENGTH)
    theirs = keras_hub.models.AlbertTextClassifier(backbone, num_classes=2, preprocessor=preprocessor)
    cases = {}
    for batch in (1, 32):
        texts = sentences[:batch]
        text_tensor = tf.constant(texts)
        cases[f"albert_tf SavedModel, batch {batch}"] = lambda t=text_tensor: ours(sentence=t)["label"].numpy()
        cases[f"keras-hub AlbertTextClassifier, batch {batch}"] = lambda t=texts: theirs.predict_on_batch(t)
    wall, cpu = interleaved_medians(cases, FLAGS.serving_rounds, warmup=2)
    return {name: (median(wall[name]), median(cpu[name])) for name in cases}


def main(argv):
    del argv
    task = get_task("SST-2")
    config = AlbertConfig.from_json_file(FLAGS.albert_config_file)
    tokenizer = AlbertTokenizer(FLAGS.spm_model_file)
    cache_dir = tempfile.mkdtemp(prefix="bench_glue_features_")
    data = {}
    for split in ("train", "dev"):
        example_set = read_examples(task, split, data_dir=FLAGS.data_dir)
        data[split] = {
            "path": glue_features.cached_features(task, split, example_set, tokenizer, MAX_SEQ_LENGTH, cache_dir),
            "labels": [glue_features.label_value(task, e.label) for e in example_set.examples],
            "texts": [e.text_a for e in example_set.examples],
        }
    runs, steps = train_both(task, config, data["train"]["path"], data["dev"], len(data["train"]["labels"]))
    print(f"load average before serving: {load_average()}")
    print(f"SST-2 train rows {len(data['train']['labels'])}, {steps} steps/epoch, batch {FLAGS.batch_size}, "
          f"{FLAGS.albert_config_file}, oneDNN {onednn_state()}")
    for padding, run in runs.items():
        print(f"  {padding:8s} epoch wall s: {[round(s, 2) for s in run['epoch_seconds']]}, "
              f"CPU s: {[round(s, 2) for s in run['epoch_cpu']]}, dev accuracy {run['dev_accuracy']:.4f}")
    gap = abs(runs["dynamic"]["dev_logits"] - runs["fixed"]["dev_logits"]).max()
    print(f"  max |dev logit difference| between the dynamic and fixed models (same batches): {gap:.2e}")
    for padding in ("dynamic", "bucketed"):
        for kind in ("epoch_seconds", "epoch_cpu"):  # the first epoch includes tracing
            speedup = median(runs["fixed"][kind][1:]) / median(runs[padding][kind][1:])
            print(f"  speed-up {padding} vs fixed-128 ({kind}, median after epoch 1): {speedup:.2f}x")
    if FLAGS.accuracy_seeds > 1:
        accuracy = {padding: [runs[padding]["dev_accuracy"]] for padding in ("dynamic", "bucketed")}
        for seed in range(2, FLAGS.accuracy_seeds + 1):
            more, _ = train_both(task, config, data["train"]["path"], data["dev"], len(data["train"]["labels"]),
                                 seed=seed, modes=tuple(accuracy))
            for padding in accuracy:
                accuracy[padding].append(more[padding]["dev_accuracy"])
        for padding, values in accuracy.items():
            print(f"  dev accuracy over {len(values)} seeds, {padding}: mean {np.mean(values):.4f}, "
                  f"std {np.std(values):.4f}, each {[round(v, 4) for v in values]}")
    latencies = serving_latency(task, runs["dynamic"]["classifier"], config, data["dev"]["texts"])
    for name, (wall, cpu) in latencies.items():
        print(f"  serving {name}: {wall * 1000:.1f} ms wall, {cpu * 1000:.1f} ms CPU (median)")
    print(f"load average after: {load_average()}")


if __name__ == "__main__":
    app.run(main)
