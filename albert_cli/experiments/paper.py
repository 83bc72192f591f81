"""The paper's numbers that the experiments print beside their own: the one copy in the code.

Lan et al., "ALBERT", arXiv 1909.11942v6, Tables 1-5, ALBERT-base rows unless named otherwise.
"Avg" is the paper's average over SQuAD1.1, SQuAD2.0, MNLI, SST-2 and RACE. `None` marks a number
we could not check against our reference material; it is printed as `NOT_CHECKED`, never guessed.
tests/test_experiments_paper.py checks the parameter counts against our own count of each config
and docs/paper_experiments.md against these tables.
"""

NOT_CHECKED = "not in our reference copy"

# Table 1: parameters.
PARAMETERS = {"bert_base": "108M", "bert_large": "334M", "bert_xlarge": None, "albert_base": "12M",
              "albert_large": "18M", "albert_xlarge": "60M", "albert_xxlarge": "235M"}
# Table 2, "Speedup": data throughput in training relative to BERT-large.
SPEEDUP = {"bert_base": "4.7x", "bert_large": "1.0", "bert_xlarge": None, "albert_base": "5.6x",
           "albert_large": "1.7x", "albert_xlarge": "0.6x", "albert_xxlarge": "0.3x"}
# Table 3: (parameters, Avg) of the not-shared and all-shared ALBERT-base at each E (H = 768).
EMBEDDING_SIZE = {
    "not-shared E=64": ("87M", "81.3"), "not-shared E=128": ("89M", "81.7"), "not-shared E=256": ("93M", "81.8"),
    "not-shared E=H": ("108M", "82.3"), "all-shared E=64": ("10M", "79.0"), "all-shared E=128": ("12M", "80.1"),
    "all-shared E=256": ("16M", "79.6"), "all-shared E=H": ("31M", "79.8"),
}
# Table 4, the E=128 rows: (parameters, Avg).
SHARING = {"all-shared": ("12M", "80.1"), "shared-attention": ("64M", "81.7"), "shared-FFN": ("38M", None),
           "not-shared": ("89M", None)}
# Table 5: held-out MLM, NSP and SOP accuracy (%) and Avg, by the sentence loss pretrained with.
SENTENCE_LOSS = {
    "none": {"mlm": "54.9", "nsp": "52.4", "sop": "53.3", "average": "79.0"},
    "nsp": {"mlm": "54.5", "nsp": "90.5", "sop": "52.0", "average": "79.2"},
    "sop": {"mlm": "54.0", "nsp": "78.9", "sop": "86.5", "average": "80.1"},
}


def shown(value):
    """A paper number as the tables print it."""
    return NOT_CHECKED if value is None else value
