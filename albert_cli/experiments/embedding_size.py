"""Paper Table 3: the embedding size E, for the all-shared and the not-shared model.

The paper (ALBERT-base, H=768; its numbers in `paper.EMBEDDING_SIZE`): not-shared improves slowly
with E; all-shared is best at E=128.
"""

from albert_cli.experiments import comparison, paper

TITLE = "Embedding size (paper Table 3)"
DEFAULTS = {}
EMBEDDING_SIZES = (64, 128, 256)
SHARING = {"all-shared": "all", "not-shared": "none"}


def variant_name(sharing_name, embedding_size, hidden_size):
    return f"{sharing_name} E={'H' if embedding_size == hidden_size else embedding_size}"


def run(setup, log=print):
    sizes = sorted(set(EMBEDDING_SIZES) | {setup.hidden_size})
    variants = {
        variant_name(name, size, setup.hidden_size): setup.base_config(sharing=sharing, embedding_size=size)
        for name, sharing in SHARING.items() for size in sizes
    }
    results = comparison.run_variants(setup, "embedding_size", variants, paper.EMBEDDING_SIZE, log)
    return comparison.write(setup, TITLE, results, notes=f"H = {setup.hidden_size}.\n")


draw = comparison.draw  # the figure, also of recorded results (--redraw)
