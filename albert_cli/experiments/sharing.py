"""Paper Table 4: cross-layer sharing of all / attention / FFN / no parameters, at one size.

The paper (ALBERT-base, E=128; its numbers in `paper.SHARING`): sharing the FFN costs more than
sharing attention; sharing everything costs little at E=128.
"""

from albert_cli.experiments import comparison, paper

TITLE = "Cross-layer parameter sharing (paper Table 4)"
DEFAULTS = {}
VARIANTS = {"all-shared": "all", "shared-attention": "attention", "shared-FFN": "ffn", "not-shared": "none"}


def run(setup, log=print):
    variants = {name: setup.base_config(sharing=sharing) for name, sharing in VARIANTS.items()}
    results = comparison.run_variants(setup, "sharing", variants, paper.SHARING, log)
    return comparison.write(setup, TITLE, results)


draw = comparison.draw  # the figure, also of recorded results (--redraw)
