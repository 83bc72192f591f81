"""What dynamic-range int8 costs: a fine-tuned classifier's LiteRT exports, float32 and
dynamic_int8 (`run_classifier.py --export_tflite=DIR`), scored on a GLUE dev set.

Every dev example is run alone at its own length (batch 1, as a device serves it), tokenized by
the training tokenizer. Prints each model's dev metrics, the change, how often the two argmaxes
agree, the largest logit difference and the mean interpreter time per example.

    python run_classifier.py --task_name=SST-2 --data_dir=$GLUE_DIR --do_train --do_eval \
        --train_step=3000 --warmup_step=200 --learning_rate=5e-4 --max_seq_length=64 \
        --output_dir=/tmp/sst2 --export_tflite=/tmp/sst2/tflite
    python bench/tflite_accuracy.py --tflite_dir=/tmp/sst2/tflite --task_name=SST-2 \
        --data_dir=$GLUE_DIR --max_seq_length=64
"""

import argparse
import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

import numpy as np  # noqa: E402

from bench._common import load_average  # noqa: E402

SPM_MODEL = os.path.join(REPO, "data", "albert_spm", "30k-clean.model")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tflite_dir", required=True, help="holds classifier_{float32,dynamic_int8}.tflite")
    parser.add_argument("--task_name", default="SST-2")
    parser.add_argument("--data_dir", required=True, help="GLUE directory: <data_dir>/<TASK>/dev.tsv")
    parser.add_argument("--spm_model_file", default=SPM_MODEL)
    parser.add_argument("--max_seq_length", type=int, default=512)
    parser.add_argument("--threads", type=int, default=1, help="interpreter threads")
    args = parser.parse_args()

    from ai_edge_litert.interpreter import Interpreter

    from albert_tf.glue.examples import read_examples
    from albert_tf.glue.features import example_ids, label_value
    from albert_tf.glue.metrics import task_metrics
    from albert_tf.glue.tasks import get_task
    from albert_tf.text.tokenization import AlbertTokenizer

    task = get_task(args.task_name)
    split = task.eval_splits[0][1]
    examples = read_examples(task, split, args.data_dir).examples
    tokenizer = AlbertTokenizer(args.spm_model_file)
    rows = [example_ids(example, tokenizer, args.max_seq_length) for example in examples]
    labels = [label_value(task, example.label) for example in examples]

    logits, seconds = {}, {}
    for quantization in ("float32", "dynamic_int8"):
        path = os.path.join(args.tflite_dir, f"classifier_{quantization}.tflite")
        runner = Interpreter(model_path=path, num_threads=args.threads).get_signature_runner()
        outputs, start = [], time.process_time()
        for ids, types in rows:
            inputs = {"input_word_ids": np.array([ids], np.int32), "input_mask": np.ones((1, len(ids)), np.int32),
                      "input_type_ids": np.array([types], np.int32)}
            outputs.append(runner(**inputs)["logits"][0])
        seconds[quantization] = (time.process_time() - start) / len(rows)
        logits[quantization] = np.array(outputs)

    print(f"{task.name} {split}: {len(rows)} examples, batch 1, max_seq_length {args.max_seq_length}, "
          f"load {load_average()}")
    metrics = {name: task_metrics(task, labels, values) for name, values in logits.items()}
    for name in logits:
        print(f"  {name:13s} " + ", ".join(f"{k}={v:.4f}" for k, v in metrics[name].items())
              + f"  ({1000 * seconds[name]:.2f} CPU-ms per example)")
    change = {k: metrics["dynamic_int8"][k] - metrics["float32"][k] for k in metrics["float32"]}
    print("  change        " + ", ".join(f"{k}={v:+.4f}" for k, v in change.items()))
    if not task.is_regression:
        agree = np.mean(np.argmax(logits["float32"], -1) == np.argmax(logits["dynamic_int8"], -1))
        print(f"  argmax agreement {agree:.4f}")
    print(f"  max |logits int8 - float32| = {np.abs(logits['dynamic_int8'] - logits['float32']).max():.4f}")


if __name__ == "__main__":
    main()
