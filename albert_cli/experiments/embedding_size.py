"""Paper Table 3: the embedding size E, for the all-shared and the not-shared model.

The paper (ALBERT-base, H=768): not-shared improves slowly with E (E=64: 87M, avg 81.3 ... E=768:
108M, 82.3); all-shared is best at E=128 (12M, 80.1), with E=64 79.0, E=256 79.6, E=768 79.8.
"""

from albert_cli.experiments import comparison

TITLE = "Embedding size (paper Table 3)"
DEFAULTS = {"train_steps": 200, "finetune_steps": 100}
EMBEDDING_SIZES = (64, 128, 256)
SHARING = {"all-shared": "all", "not-shared": "none"}
# ALBERT-base: (parameters, average of SQuAD1.1, SQuAD2.0, MNLI, SST-2, RACE); E=H is 768 there.
PAPER = {
    "not-shared E=64": ("87M", "81.3"), "not-shared E=128": ("89M", "81.7"), "not-shared E=256": ("93M", "81.8"),
    "not-shared E=H": ("108M", "82.3"), "all-shared E=64": ("10M", "79.0"), "all-shared E=128": ("12M", "80.1"),
    "all-shared E=256": ("16M", "79.6"), "all-shared E=H": ("31M", "79.8"),
}


def variant_name(sharing_name, embedding_size, hidden_size):
    return f"{sharing_name} E={'H' if embedding_size == hidden_size else embedding_size}"


def run(setup, log=print):
    sizes = sorted(set(EMBEDDING_SIZES) | {setup.hidden_size})
    variants = {
        variant_name(name, size, setup.hidden_size): setup.base_config(sharing=sharing, embedding_size=size)
        for name, sharing in SHARING.items() for size in sizes
    }
    results = comparison.run_variants(setup, "embedding_size", variants, PAPER, log)
    return comparison.write(setup, TITLE, results, notes=f"H = {setup.hidden_size}.\n")
