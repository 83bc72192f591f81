"""Paper Table 4: cross-layer sharing of all / attention / FFN / no parameters, at one size.

The paper (ALBERT-base, E=128): all-shared 12M parameters, avg 80.1; shared-attention 64M, 81.7;
shared-FFN 38M, 80.2; not-shared 89M, 82.0. Sharing the FFN costs more than sharing attention;
sharing everything costs little at E=128.
"""

from albert_cli.experiments import comparison

TITLE = "Cross-layer parameter sharing (paper Table 4)"
DEFAULTS = {}
VARIANTS = {"all-shared": "all", "shared-attention": "attention", "shared-FFN": "ffn", "not-shared": "none"}
# ALBERT-base, E=128: (parameters, average of SQuAD1.1, SQuAD2.0, MNLI, SST-2, RACE).
PAPER = {"all-shared": ("12M", "80.1"), "shared-attention": ("64M", "81.7"), "shared-FFN": ("38M", "80.2"),
         "not-shared": ("89M", "82.0")}


def run(setup, log=print):
    variants = {name: setup.base_config(sharing=sharing) for name, sharing in VARIANTS.items()}
    results = comparison.run_variants(setup, "sharing", variants, PAPER, log)
    return comparison.write(setup, TITLE, results)
