"""Does a long context help? Masked-LM accuracy on a passage's last tokens, with and without the rest.

    python bench/long_context_mlm.py --init_checkpoint=output/pretraining-books-4096 \\
        --albert_config_file=configs/albert_cpu_small_vocab8k_4096.json \\
        --spm_model_file=gutenberg/books8k.model --heldout_file=gutenberg/text/heldout.txt \\
        --json=long_context_mlm.json

The held-out documents (split_corpus's heldout.txt: the tail of every book, never trained on)
are cut into passages of `--passage_length` tokens ([CLS] text [SEP]) whose last
`--target_length` - 2 text tokens, the target span, never overlap from one passage to the next
(their contexts may). Documents shorter than one passage are skipped and counted. In each span,
`--mask_rate` of the tokens are masked as whole words, every piece replaced by [MASK] (drawn
from `--seed`, so every condition and every checkpoint sees the same masks), and the model
predicts them in three conditions. With `--mask_draws` K > 1 each span is asked K times, each
time with other words masked (disjoint draws; at K = ceil(1 / `--mask_rate`) every token of the
span is predicted once): more predictions per passage, so smaller standard errors for the same
passages. The three conditions:

- `whole_passage`: one `--passage_length` input, the context before the span and the span;
- `span_only`: a `--target_length` input, [CLS] span [SEP], the same span tokens;
- `context_removed`: the `whole_passage` input with every token before the span made padding
  (masked out), at the same positions and under the same attention pattern as `whole_passage`:
  it separates what the context gives from what the longer input's positions and block-sparse
  pattern change.

Accuracies are over all predictions; each paired difference comes with two standard errors: over
passages (the unit that is sampled; predictions in one passage are not independent) and over
predictions (as if they were). `z` is the difference over a standard error (null where it is 0
or undefined).
"""

import argparse
import math
import os
import sys

import numpy as np

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO_ROOT)

from albert_tf.choices import PRECISION_POLICIES  # noqa: E402
from data_prep.corpus import line_token_ids  # noqa: E402
from data_prep.pretraining_instances import start_piece_flags  # noqa: E402

CONDITIONS = ("whole_passage", "span_only", "context_removed")
COMPARISONS = (("whole_passage", "span_only"), ("whole_passage", "context_removed"),
               ("context_removed", "span_only"))


def read_documents(path, tokenizer):
    """The documents of a one-sentence-per-line file (blank line between documents) as flat lists
    of token ids, tokenized line by line as the pretraining data builder does."""
    documents, document = [], []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            ids = line_token_ids(line, tokenizer)
            if ids is None:
                if document:
                    documents.append(document)
                document = []
            else:
                document.extend(ids)
    if document:
        documents.append(document)
    return documents


def passages(documents, passage_length, target_length):
    """(document index, start) of every passage: `passage_length` - 2 text tokens whose last
    `target_length` - 2 (the span) follow the previous passage's span in the same document.
    Returns (the passages, the number of documents too short for one)."""
    text_length, span_length = passage_length - 2, target_length - 2
    found, too_short = [], 0
    for index, document in enumerate(documents):
        starts = range(0, len(document) - text_length + 1, span_length)
        too_short += not starts
        found.extend((index, start) for start in starts)
    return found, too_short


def whole_word_mask(span, word_starts, mask_rate, rng, taken=frozenset()):
    """Sorted positions in `span` to mask: whole words in random order, each taken if it fits the
    budget of round(`mask_rate` x len(span)) tokens, until the budget is spent. Words with a
    position in `taken` (an earlier draw's) are passed over."""
    starts = [i for i in range(len(span)) if i == 0 or word_starts[span[i]]]
    words = [range(start, end) for start, end in zip(starts, starts[1:] + [len(span)])]
    budget = max(1, round(mask_rate * len(span)))
    chosen = []
    for word_index in rng.permutation(len(words)):
        word = words[word_index]
        if len(chosen) + len(word) <= budget and word.start not in taken:
            chosen.extend(word)
        if len(chosen) == budget:
            break
    return sorted(chosen)


def disjoint_masks(span, word_starts, mask_rate, draws, rng):
    """`draws` whole-word masks of `span` (whole_word_mask's) that share no word; a draw that finds
    no word left is dropped. The first is whole_word_mask's own for the same `rng` state."""
    masks, taken = [], set()
    for _ in range(draws):
        positions = whole_word_mask(span, word_starts, mask_rate, rng, taken)
        if positions:
            masks.append(positions)
            taken.update(positions)
    return masks


def condition_inputs(text, positions, span_length, tokenizer):
    """The three conditions' inputs for one passage's text (span last; `positions` masked within
    the span): {condition: (input_word_ids, input_mask, masked_lm_positions)}, unbatched."""
    ids = np.array([tokenizer.cls_id, *text, tokenizer.sep_id], np.int32)
    span_start = len(ids) - 1 - span_length  # index of the span's first token
    targets = span_start + np.asarray(positions, np.int32)
    ids[targets] = tokenizer.mask_id
    mask = np.ones_like(ids)
    removed_ids, removed_mask = ids.copy(), mask.copy()
    removed_ids[1:span_start], removed_mask[1:span_start] = tokenizer.pad_id, 0
    short_ids = np.concatenate([ids[:1], ids[span_start:]])
    return {"whole_passage": (ids, mask, targets),
            "span_only": (short_ids, np.ones_like(short_ids), targets - span_start + 1),
            "context_removed": (removed_ids, removed_mask, targets)}


def predict_correct(model, rows, batch_size):
    """For each (input_word_ids, input_mask, masked_lm_positions, true ids) row, the per-position
    correctness (argmax of the MLM logits) and cross-entropy. Rows of a batch may mask different
    numbers of positions (a last, smaller draw): the shorter are padded with position 0 and cut."""
    import tensorflow as tf  # pylint: disable=g-import-not-at-top

    call = tf.function(lambda inputs: model(inputs)["mlm_logits"], reduce_retracing=True)
    correct, losses = [], []
    for first in range(0, len(rows), batch_size):
        batch = rows[first:first + batch_size]
        counts = [len(row[2]) for row in batch]
        padded = [(*row[:2], *(np.pad(column, (0, max(counts) - len(column))) for column in row[2:]))
                  for row in batch]
        inputs = {name: np.stack([row[column] for row in padded])
                  for column, name in enumerate(("input_word_ids", "input_mask", "masked_lm_positions"))}
        inputs["input_type_ids"] = np.zeros_like(inputs["input_word_ids"])
        logits = np.asarray(call(inputs), np.float64)
        truth = np.stack([row[3] for row in padded])
        log_probs = logits - logits.max(-1, keepdims=True)
        log_probs -= np.log(np.exp(log_probs).sum(-1, keepdims=True))
        row_losses = -np.take_along_axis(log_probs, truth[..., None], -1)[..., 0]
        row_correct = logits.argmax(-1) == truth
        correct.extend(row_correct[i, :count] for i, count in enumerate(counts))
        losses.extend(row_losses[i, :count] for i, count in enumerate(counts))
    return correct, losses


def by_passage(per_row, row_passages):
    """predict_correct's (correct, losses) per row joined into one array per passage (its draws)."""
    joined = []
    for values in per_row:
        groups = {}
        for passage, value in zip(row_passages, values):
            groups.setdefault(passage, []).append(value)
        joined.append([np.concatenate(groups[passage]) for passage in sorted(groups)])
    return tuple(joined)


def paired_difference(correct_a, correct_b):
    """Accuracy a - b over all predictions, for per-passage arrays of 0/1 correctness, with its
    standard error over passages (the ratio estimator's, clustered by passage; with equal
    predictions per passage it is the sample std of the passages' differences over sqrt(passages))
    and over predictions (the sample std of the per-prediction differences over sqrt(N))."""
    if not sum(len(a) for a in correct_a):
        return {"difference": None, "se_passages": None, "z_passages": None, "se_predictions": None,
                "z_predictions": None}
    per_prediction = np.concatenate([np.asarray(a, float) - np.asarray(b, float) for a, b in zip(correct_a, correct_b)])
    counts = np.array([len(a) for a in correct_a], float)
    sums = np.array([np.sum(np.asarray(a, float) - np.asarray(b, float)) for a, b in zip(correct_a, correct_b)])
    difference = float(sums.sum() / counts.sum())
    n_passages = len(counts)
    se_passages = (float(np.sqrt(n_passages / (n_passages - 1) * np.sum((sums - difference * counts) ** 2))
                         / counts.sum()) if n_passages > 1 else None)
    se_predictions = float(np.std(per_prediction, ddof=1) / math.sqrt(len(per_prediction)))
    return {"difference": difference, "se_passages": se_passages, "z_passages": _over(difference, se_passages),
            "se_predictions": se_predictions, "z_predictions": _over(difference, se_predictions)}


def _over(difference, standard_error):
    """z, or None where the standard error is 0 or undefined (one passage)."""
    return difference / standard_error if standard_error else None


def _number(value, form=".4f"):
    return "-" if value is None else f"{value:{form}}"


def check_args(args, config):
    """ValueError naming the flag for settings the comparison cannot run with."""
    if not 3 <= args.target_length < args.passage_length:
        raise ValueError(f"--target_length must be at least 3 and below --passage_length ({args.passage_length}); "
                         f"got {args.target_length}")
    if args.passage_length > config.max_position_embeddings:
        raise ValueError(f"--passage_length {args.passage_length} is longer than the config's "
                         f"max_position_embeddings ({config.max_position_embeddings})")
    if not 0 < args.mask_rate < 1:
        raise ValueError(f"--mask_rate must be between 0 and 1 (exclusive); got {args.mask_rate}")
    if not 1 <= args.mask_draws <= math.ceil(1 / args.mask_rate):
        raise ValueError(f"--mask_draws must be between 1 and ceil(1 / --mask_rate) = {math.ceil(1 / args.mask_rate)} "
                         f"(disjoint draws of whole words); got {args.mask_draws}")
    for flag in ("batch_size", "max_passages"):
        if getattr(args, flag) is not None and getattr(args, flag) < 1:
            raise ValueError(f"--{flag} must be a positive integer; got {getattr(args, flag)}")


def evaluate(args):
    """The comparison's results (the JSON record) for parsed flags."""
    from albert_tf import checkpoints  # pylint: disable=g-import-not-at-top
    from albert_tf.config import AlbertConfig
    from albert_tf.models.pretraining_model import AlbertPretrainingModel
    from albert_tf.text.tokenization import AlbertTokenizer


    for flag in ("heldout_file", "spm_model_file", "albert_config_file"):
        if not os.path.isfile(getattr(args, flag)):
            raise ValueError(f"--{flag}: no file at {getattr(args, flag)!r}")
    config = AlbertConfig.from_json_file(args.albert_config_file)
    check_args(args, config)
    tokenizer = AlbertTokenizer(args.spm_model_file)
    if tokenizer.vocab_size != config.vocab_size:
        raise ValueError(f"--spm_model_file has {tokenizer.vocab_size} pieces; --albert_config_file's "
                         f"vocab_size is {config.vocab_size}")
    documents = read_documents(args.heldout_file, tokenizer)
    found, too_short = passages(documents, args.passage_length, args.target_length)
    found = found[:args.max_passages]
    if not found:
        raise ValueError(f"--heldout_file: no document of {args.heldout_file!r} holds {args.passage_length - 2} "
                         "tokens of text (one passage)")
    model = AlbertPretrainingModel(config, dtype=args.mixed_precision, kernels=args.kernels)
    report = checkpoints.load(model, args.init_checkpoint, extend_positions=args.extend_positions)
    print(report)
    span_length, text_length = args.target_length - 2, args.passage_length - 2
    word_starts, rng = start_piece_flags(tokenizer.vocab, tokenizer.is_spm), np.random.default_rng(args.seed)
    rows, row_passages, row_in_context_only = {name: [] for name in CONDITIONS}, [], []
    for passage_index, (document_index, start) in enumerate(found):
        text = documents[document_index][start:start + text_length]
        for positions in disjoint_masks(text[-span_length:], word_starts, args.mask_rate, args.mask_draws, rng):
            truth = np.asarray(text[-span_length:], np.int32)[positions]
            for name, inputs in condition_inputs(text, positions, span_length, tokenizer).items():
                rows[name].append((*inputs, truth))
            row_passages.append(passage_index)
            row_in_context_only.append(found_only_in_context(text, positions, span_length))
    results = {name: by_passage(predict_correct(model, rows[name], args.batch_size), row_passages)
               for name in CONDITIONS}
    (in_context_only,) = by_passage((row_in_context_only,), row_passages)
    subset = {name: tuple([values[in_context_only[i]] for i, values in enumerate(per_passage)]
                          for per_passage in result)
              for name, result in results.items()}
    predictions = sum(len(c) for c in results["whole_passage"][0])
    return {
        "init_checkpoint": args.init_checkpoint, "albert_config_file": args.albert_config_file,
        "heldout_file": args.heldout_file, "passage_length": args.passage_length,
        "target_length": args.target_length, "mask_rate": args.mask_rate, "mask_draws": args.mask_draws,
        "seed": args.seed,
        "masking": "whole words, every piece [MASK]", "mixed_precision": args.mixed_precision,
        "documents": len(documents), "documents_too_short": too_short,
        "passages": len(found),
        "passages_per_document": {str(i): sum(d == i for d, _ in found) for i in sorted({d for d, _ in found})},
        "predictions": predictions,
        **summary(results),
        "found_only_in_context": {"predictions": int(sum(np.sum(flags) for flags in in_context_only)),
                                  **summary(subset)},
    }


def summary(results):
    """Each condition's accuracy and loss, and the paired differences, of {condition: (correct, losses)}."""
    return {
        "conditions": {name: {"accuracy": _mean(correct), "loss": _mean(loss)} for name, (correct, loss) in results.items()},
        "comparisons": {f"{a} - {b}": paired_difference(results[a][0], results[b][0]) for a, b in COMPARISONS},
    }


def _mean(per_passage):
    values = np.concatenate(per_passage)
    return float(np.mean(values)) if values.size else None


def found_only_in_context(text, positions, span_length):
    """For each masked position of the span, whether its token is in the context before the span and
    nowhere among the span's unmasked tokens: what only the whole passage can show the model."""
    span, context = text[-span_length:], set(text[:-span_length])
    masked = set(positions)
    visible = {token for i, token in enumerate(span) if i not in masked}
    return np.array([span[i] in context and span[i] not in visible for i in positions], bool)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--init_checkpoint", required=True)
    parser.add_argument("--albert_config_file", required=True, help="a config with max_position_embeddings "
                        ">= --passage_length (e.g. block-sparse at 4,096)")
    parser.add_argument("--extend_positions", choices=("repeat",), default=None,
                        help="load a checkpoint with fewer position rows by repeating them (as the scripts do)")
    parser.add_argument("--spm_model_file", required=True)
    parser.add_argument("--heldout_file", required=True, help="split_corpus's heldout.txt")
    parser.add_argument("--passage_length", type=int, default=4096)
    parser.add_argument("--target_length", type=int, default=512,
                        help="the span_only input's length: the span is its text, this minus [CLS] and [SEP]")
    parser.add_argument("--mask_rate", type=float, default=0.15)
    parser.add_argument("--mask_draws", type=int, default=1,
                        help="ask each span this many times with disjoint masks (ceil(1 / --mask_rate): every token once)")
    parser.add_argument("--seed", type=int, default=12345)
    parser.add_argument("--batch_size", type=int, default=2)
    parser.add_argument("--mixed_precision", choices=PRECISION_POLICIES, default="float32")
    parser.add_argument("--kernels", choices=("reference", "cpu"), default="reference",
                        help="the kernel set (as run_pretraining.py's); cpu is faster on CPUs")
    parser.add_argument("--max_passages", type=int, default=None)
    parser.add_argument("--json", default=None, help="write the results here")
    args = parser.parse_args()
    try:
        result = evaluate(args)
    except (OSError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.json:
        from albert_tf.io_utils import write_json  # pylint: disable=g-import-not-at-top

        write_json(args.json, result)
    print(f"{result['passages']} passages of {args.passage_length} tokens from {result['documents']} documents "
          f"({result['documents_too_short']} too short), {result['predictions']} predictions "
          f"({args.mask_draws} mask draws per span)")
    for part, title in ((result, "all predictions"),
                        (result["found_only_in_context"], "predictions whose token only the context holds")):
        print(f"\n{title} ({part['predictions']})")
        print("| condition | masked-LM accuracy | loss |\n|---|---|---|")
        for name, row in part["conditions"].items():
            print(f"| {name} | {_number(row['accuracy'])} | {_number(row['loss'])} |")
        print("| comparison | difference | SE over passages (z) | SE over predictions (z) |\n|---|---|---|---|")
        for name, row in part["comparisons"].items():
            print(f"| {name} | {_number(row['difference'], '+.4f')} | {_number(row['se_passages'])} "
                  f"({_number(row['z_passages'], '+.2f')}) | {_number(row['se_predictions'])} "
                  f"({_number(row['z_predictions'], '+.2f')}) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
