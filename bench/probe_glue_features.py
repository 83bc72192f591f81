"""What does a checkpoint's frozen encoder know about a GLUE task? Linear probes, pretrained vs random.

    python bench/probe_glue_features.py --init_checkpoint=output/pretraining_cpu_gutenberg \\
        --albert_config_file=configs/albert_cpu_small.json --data_dir=$GLUE_DIR --task_name=SST-2

Fine-tuning moves every weight, so a task a small model can learn from scratch (SST-2's bag of
words) hides what pretraining gave it. A probe does not: the encoder stays frozen, and a logistic
regression (scikit-learn, standardized features) is fit on its features of `--train_rows` training
rows and scored on the whole dev set. Three features each: the pooled output (tanh pooler on
[CLS], what the classifier reads), the last block's [CLS] row, and the mean of the last block over
real tokens; from `--init_checkpoint` and from random weights (`--seed`). Classification tasks only.
It also prints how saturated and how alike the pooled outputs are, and whether the position
embeddings beyond `--max_seq_length` were ever trained.
"""

import argparse
import math
import os
import sys

import numpy as np

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO_ROOT)

FEATURES = ("pooled_output", "cls_row", "token_mean")


def encode(backbone, batches):
    """The three features of every row, and the labels, from (features, labels) batches as
    `albert_tf.glue.features.make_dataset` makes them (padded, with `input_mask`)."""
    import tensorflow as tf  # pylint: disable=g-import-not-at-top

    call = tf.function(lambda inputs: backbone(inputs), reduce_retracing=True)
    columns, labels = {name: [] for name in FEATURES}, []
    for inputs, batch_labels in batches:
        outputs = call(inputs)
        sequence = np.asarray(outputs["sequence_output"], np.float32)
        mask = np.asarray(inputs["input_mask"], np.float32)[..., None]
        columns["pooled_output"].append(np.asarray(outputs["pooled_output"], np.float32))
        columns["cls_row"].append(sequence[:, 0])
        columns["token_mean"].append((sequence * mask).sum(1) / mask.sum(1))
        labels.append(np.asarray(batch_labels))
    return {name: np.concatenate(parts) for name, parts in columns.items()}, np.concatenate(labels)


def pooled_spread(pooled):
    """(share of pooled units beyond ±0.99, mean cosine between two rows' pooled outputs): a
    saturated pooler passes the classifier little gradient, a collapsed one little contrast."""
    saturated = float(np.mean(np.abs(pooled) > 0.99))
    unit = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
    rows = len(unit)
    # The sum over all ordered pairs of rows, itself included, is |sum of the unit rows|^2: no
    # rows x rows matrix (QQP's dev set has 40k rows).
    return saturated, float((np.square(unit.sum(0)).sum() - rows) / (rows * rows - rows))


def position_row_norms(backbone, max_seq_length):
    """Mean norm of the position-embedding rows below `max_seq_length` and from it up: rows that
    pretraining at that length never reached keep their initial scale. NaN where no row is beyond."""
    norms = np.linalg.norm(np.asarray(backbone.embeddings.position_embeddings), axis=1)
    beyond = norms[max_seq_length:]
    return float(norms[:max_seq_length].mean()), float(beyond.mean()) if len(beyond) else math.nan


def probe_scores(train, dev, task):
    """Dev metrics of a logistic regression fit on each training feature."""
    from sklearn.linear_model import LogisticRegression  # pylint: disable=g-import-not-at-top
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from albert_tf.glue.metrics import task_metrics  # pylint: disable=g-import-not-at-top

    scores = {}
    for name in FEATURES:
        probe = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
        probe.fit(train[0][name], train[1])  # (features, labels), as `encode` returns them
        scores[name] = task_metrics(task, dev[1], probe.predict_proba(dev[0][name]))
    return scores


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--init_checkpoint", required=True)
    parser.add_argument("--albert_config_file", required=True)
    parser.add_argument("--data_dir", required=True, help="GLUE TSVs, <data_dir>/<TASK>/{train,dev}.tsv")
    parser.add_argument("--task_name", default="SST-2")
    parser.add_argument("--spm_model_file", default=os.path.join(REPO_ROOT, "data", "albert_spm", "30k-clean.model"))
    parser.add_argument("--max_seq_length", type=int, default=64)
    parser.add_argument("--train_rows", type=int, default=10000, help="training rows the probe is fit on (a seeded sample)")
    parser.add_argument("--seed", type=int, default=1, help="the random-weights encoder's and the sample's seed")
    parser.add_argument("--batch_size", type=int, default=256)
    args = parser.parse_args()

    import tempfile  # pylint: disable=g-import-not-at-top

    import keras

    from albert_tf import checkpoints
    from albert_tf.config import AlbertConfig
    from albert_tf.glue.examples import read_examples
    from albert_tf.glue.features import make_dataset, write_features
    from albert_tf.glue.tasks import get_task
    from albert_tf.models.albert_model import AlbertModel
    from albert_tf.text.tokenization import AlbertTokenizer

    try:
        task = get_task(args.task_name)
        if task.is_regression:
            raise ValueError(f"--task_name: {task.name} is a regression task; probes here are for classification")
        config = AlbertConfig.from_json_file(args.albert_config_file)
        tokenizer = AlbertTokenizer(args.spm_model_file)
        with tempfile.TemporaryDirectory() as feature_dir:
            datasets = {}
            for split in ("train", "dev"):
                examples = read_examples(task, split, data_dir=args.data_dir).examples
                if split == "train" and len(examples) > args.train_rows:
                    keep = np.random.default_rng(args.seed).choice(len(examples), args.train_rows, replace=False)
                    examples = [examples[i] for i in sorted(keep)]
                path = os.path.join(feature_dir, f"{split}.tf_record")
                write_features(task, examples, tokenizer, args.max_seq_length, path)
                datasets[split] = make_dataset(task, path, args.batch_size, args.max_seq_length)
            results, spreads = {}, {}
            for start in ("pretrained", "random"):
                keras.utils.set_random_seed(args.seed)
                backbone = AlbertModel(config)
                if start == "pretrained":
                    report = checkpoints.load(backbone, args.init_checkpoint)
                    print(f"loaded {len(report.loaded)} of {len(backbone.weights)} encoder weights from {report.path}")
                train, dev = (encode(backbone, datasets[split]) for split in ("train", "dev"))
                results[start] = probe_scores(train, dev, task)
                spreads[start] = (*pooled_spread(dev[0]["pooled_output"]),
                                  *position_row_norms(backbone, args.max_seq_length))
    except (OSError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    metric = task.selection_metric
    print(f"{task.name} dev {metric}, linear probes on frozen features ({len(train[1])} training rows)")
    print("| feature | pretrained | random weights |\n|---|---|---|")
    for name in FEATURES:
        print(f"| {name} | {results['pretrained'][name][metric]:.4f} | {results['random'][name][metric]:.4f} |")
    print(f"\nPooled outputs on the {len(dev[1])} dev rows, and the position embeddings\n"
          "| | pretrained | random weights |\n|---|---|---|")
    for column, label in enumerate(("pooled units beyond ±0.99", "mean cosine between rows' pooled outputs",
                                    f"mean norm of position rows 0-{args.max_seq_length - 1}",
                                    f"mean norm of position rows {args.max_seq_length} and up")):
        print(f"| {label} | {spreads['pretrained'][column]:.4f} | {spreads['random'][column]:.4f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
