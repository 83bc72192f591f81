"""Tokenizer parity and speed on real text: ours (Python and in-graph) vs HF's AlbertTokenizer.

Parity: on every GLUE sentence field and corpus line under --data_dir, counts lines whose ids
differ between our Python tokenizer and (a) HF's AlbertTokenizer (transformers 5: the tokenizers
one, from the tokenizer.json our HF exports carry; lines with LaTeX quotes `` or '' excluded: HF
rewrites them, the original does not; it has no digit-comma rule) and (b) our in-graph tokenizer.
Speed: lines/s and tokens/s over the corpus lines, in interleaved rounds, with the load average.

    python bench/bench_tokenizers.py --data_dir=data --rounds=3       # the bundled samples
    python bench/bench_tokenizers.py --data_dir=DIR                   # full GLUE + corpus, laid out as data/

Also times raw SentencePiece (no normalisation, no digit-comma rule) as a floor, and keras-hub's
AlbertTokenizer (which does not lowercase, so its ids differ; speed only).
"""

import argparse
import glob
import os
import sys
import tempfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

import tensorflow as tf  # noqa: E402

from albert_tf.checkpoints.huggingface_tokenizer import TOKENIZER_JSON, tokenizer_json  # noqa: E402
from albert_tf.text.preprocessing import AlbertTextTokenizer  # noqa: E402
from albert_tf.text.tokenization import AlbertTokenizer  # noqa: E402
from bench._common import cpu_model, interleaved_medians, load_average, median, text_lines  # noqa: E402

SPM_MODEL = os.path.join(REPO, "data", "albert_spm", "30k-clean.model")
GRAPH_BATCH = 256


def graph_encode(tokenizer, lines):
    dataset = tf.data.Dataset.from_tensor_slices(lines).batch(GRAPH_BATCH).map(tokenizer)
    return [row for batch in dataset for row in batch.to_list()]


def parity(lines, ours, graph, hf):
    ours_ids = [ours.encode(line) for line in lines]
    graph_ids = graph_encode(graph, lines)
    graph_diff = [line for line, a, b in zip(lines, ours_ids, graph_ids) if a != b]
    no_quotes = [(line, ids) for line, ids in zip(lines, ours_ids) if "``" not in line and "''" not in line]
    hf_diff = [line for line, ids in no_quotes if ids != hf.convert_tokens_to_ids(hf.tokenize(line))]
    return {
        "lines": len(lines),
        "tokens": sum(map(len, ours_ids)),
        "graph_differing": len(graph_diff),
        "hf_compared": len(no_quotes),
        "hf_differing": len(hf_diff),
        "graph_examples": graph_diff[:5],
        "hf_examples": hf_diff[:5],
    }


def speed(lines, ours, graph, hf, rounds):
    import keras_hub  # pylint: disable=g-import-not-at-top

    keras_hub_tokenizer = keras_hub.tokenizers.AlbertTokenizer(proto=SPM_MODEL)
    keras_hub_dataset = tf.data.Dataset.from_tensor_slices(lines).batch(GRAPH_BATCH).map(keras_hub_tokenizer)
    cases = {
        "raw sentencepiece EncodeAsIds": lambda: [ours.sp_model.EncodeAsIds(line) for line in lines],
        "ours, Python (AlbertTokenizer.encode)": lambda: [ours.encode(line) for line in lines],
        "HF AlbertTokenizer": lambda: [hf.convert_tokens_to_ids(hf.tokenize(line)) for line in lines],
        f"ours, in-graph (tf.data, batch {GRAPH_BATCH})": lambda: graph_encode(graph, lines),
        f"keras-hub AlbertTokenizer (tf.data, batch {GRAPH_BATCH})": lambda: [b for b in keras_hub_dataset],
    }
    times = interleaved_medians(cases, rounds)
    return {name: median(values) for name, values in times.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data_dir", default=os.path.join(REPO, "data"))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    import transformers  # pylint: disable=g-import-not-at-top

    ours = AlbertTokenizer(spm_model_file=SPM_MODEL)
    graph = AlbertTextTokenizer(SPM_MODEL)
    with tempfile.TemporaryDirectory() as directory:
        with open(os.path.join(directory, TOKENIZER_JSON), "w", encoding="utf-8") as handle:
            handle.write(tokenizer_json(SPM_MODEL))
        hf = transformers.AlbertTokenizer.from_pretrained(directory)
    print(f"cpu: {cpu_model()}, load average before: {load_average()}")
    result = parity(text_lines(args.data_dir), ours, graph, hf)
    print("parity on", args.data_dir, result)

    corpus = [line.rstrip("\n") for path in sorted(glob.glob(os.path.join(args.data_dir, "corpus", "*.txt")))
              for line in open(path, encoding="utf-8") if line.strip()]
    tokens = sum(len(ours.encode(line)) for line in corpus)
    print(f"speed on {len(corpus)} corpus lines, {tokens} tokens, median of {args.rounds} rounds:")
    for name, seconds in speed(corpus, ours, graph, hf, args.rounds).items():
        lines_rate, tokens_rate = len(corpus) / seconds, tokens / seconds
        print(f"  {name:55s} {seconds:7.2f} s  {lines_rate:9.0f} lines/s  {tokens_rate:10.0f} tokens/s")
    print(f"load average after: {load_average()}")


if __name__ == "__main__":
    main()
