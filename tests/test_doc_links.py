"""Every relative link of the README and docs/ lands on a file that exists and, with `#anchor`, on
a heading of it (GitHub's anchor rule)."""

import glob
import os
import re

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PAGES = ["README.md", *sorted(os.path.relpath(path, REPO) for path in glob.glob(os.path.join(REPO, "docs", "*.md"))),
         "bench/results/history.md"]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def anchors(path):
    """GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces to hyphens."""
    with open(path, encoding="utf-8") as handle:
        text = re.sub(r"```.*?```", "", handle.read(), flags=re.S)
    headings = re.findall(r"^#+ (.+)$", text, flags=re.M)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-") for heading in headings}


@pytest.mark.parametrize("page", PAGES)
def test_relative_links_land_on_an_existing_file_and_heading(page):
    with open(os.path.join(REPO, page), encoding="utf-8") as handle:
        targets = LINK.findall(handle.read())
    for target in targets:
        if re.match(r"[a-z]+:", target):
            continue  # a web address
        path, _, anchor = target.partition("#")
        resolved = os.path.normpath(os.path.join(REPO, os.path.dirname(page), path)) if path else os.path.join(REPO, page)
        assert os.path.exists(resolved), f"{page}: {target} (no such file)"
        if anchor:
            assert anchor in anchors(resolved), f"{page}: {target} (no such heading)"
