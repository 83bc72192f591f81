"""Paths and writers shared by the SQuAD and RACE tests."""

import json
import os

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPM_MODEL = os.path.join(REPO, "data", "albert_spm", "30k-clean.model")
TINY_CONFIG = os.path.join(REPO, "configs", "albert_tiny.json")
SQUAD_TRAIN = os.path.join(REPO, "data", "squad", "train-v2.0-sample.json")
SQUAD_DEV = os.path.join(REPO, "data", "squad", "dev-v2.0-sample.json")


def write_squad(path, paragraphs, version="v2.0"):
    """Writes `paragraphs` ([{"context", "qas"}]) as an official-format SQuAD file; returns `path`."""
    with open(path, "w", encoding="utf-8") as handle:
        json.dump({"version": version, "data": [{"title": "t", "paragraphs": paragraphs}]}, handle)
    return str(path)


def answerable_subset(source, path):
    """A v1.1 file: `source` without its unanswerable questions (and without `is_impossible`)."""
    with open(source, encoding="utf-8") as handle:
        dataset = json.load(handle)
    for article in dataset["data"]:
        for paragraph in article["paragraphs"]:
            paragraph["qas"] = [{k: v for k, v in qa.items() if k not in ("is_impossible", "plausible_answers")}
                                for qa in paragraph["qas"] if not qa.get("is_impossible")]
    dataset["version"] = "1.1"
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(dataset, handle)
    return str(path)
