"""Which sentence embedding of a pretrained ALBERT to export for MediaPipe's TextEmbedder: the
pooled output ([CLS] through the pretrained pooler) or the mean of the last layer over the tokens.

Scored on STS-B dev without training: the Spearman correlation of each pair's cosine similarity
with the gold score. Each sentence is tokenized as MediaPipe tokenizes it (one text, segment 0;
tests/test_mediapipe_export.py shows the ids agree) and run alone at its own length.

    python run_pretraining.py --output_dir=/tmp/pretraining
    python bench/embedding_pooling.py --init_checkpoint=/tmp/pretraining --data_dir=data/glue \\
        --json=bench/results/embedding_pooling_stsb.json
"""

import argparse
import json
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

import numpy as np  # noqa: E402

SPM_MODEL = os.path.join(REPO, "data", "albert_spm", "30k-clean.model")


def embeddings(albert, tokenizer, texts, seq_length):
    """{"pooled": [n, hidden], "mean": [n, hidden]} of `texts`."""
    import tensorflow as tf

    rows = {"pooled": [], "mean": []}
    for text in texts:
        ids = [tokenizer.cls_id] + tokenizer.encode(text)[:seq_length - 2] + [tokenizer.sep_id]
        inputs = {"input_word_ids": tf.constant([ids]), "input_mask": tf.ones([1, len(ids)], tf.int32),
                  "input_type_ids": tf.zeros([1, len(ids)], tf.int32)}
        outputs = albert(inputs, training=False)
        rows["pooled"].append(outputs["pooled_output"][0].numpy())
        rows["mean"].append(outputs["sequence_output"][0].numpy().mean(0))
    return {name: np.array(values) for name, values in rows.items()}


def cosine(a, b):
    return np.sum(a * b, 1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--init_checkpoint", required=True, help="run_pretraining.py's --output_dir")
    parser.add_argument("--albert_config_file", help="default: <init_checkpoint>/albert_config.json")
    parser.add_argument("--data_dir", required=True, help="GLUE directory: <data_dir>/STS-B/dev.tsv")
    parser.add_argument("--spm_model_file", default=SPM_MODEL)
    parser.add_argument("--seq_length", type=int, default=128)
    parser.add_argument("--json", help="write the record here")
    args = parser.parse_args()

    from scipy.stats import spearmanr

    from albert_tf import AlbertConfig, AlbertModel, checkpoints
    from albert_tf.glue.examples import read_examples
    from albert_tf.glue.tasks import get_task
    from albert_tf.text.tokenization import AlbertTokenizer

    config = AlbertConfig.from_json_file(args.albert_config_file or os.path.join(args.init_checkpoint,
                                                                                 "albert_config.json"))
    albert = AlbertModel(config)
    report = checkpoints.load(albert, args.init_checkpoint)
    examples = read_examples(get_task("STS-B"), "dev", args.data_dir).examples
    tokenizer = AlbertTokenizer(args.spm_model_file)
    first = embeddings(albert, tokenizer, [example.text_a for example in examples], args.seq_length)
    second = embeddings(albert, tokenizer, [example.text_b for example in examples], args.seq_length)
    gold = np.array([float(example.label) for example in examples])
    record = {"command": "python " + " ".join(sys.argv), "checkpoint": str(report), "pairs": len(examples),
              "spearman": {name: float(spearmanr(cosine(first[name], second[name]), gold)[0]) for name in first}}
    print(json.dumps(record, indent=1))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(record, handle, indent=1)
            handle.write("\n")


if __name__ == "__main__":
    main()
