"""The page of web/ in a real headless Chromium, for the tests that open it: the install it needs,
bench/bench_browser.py's drivers, and how close its scores must be to MediaPipe Python's.

`browser` (a module fixture; a test module binds it by name: `browser = browser_page.browser`) runs
web/install_browser.sh, which installs Debian's chromium and the page's pinned npm packages when they
are missing (about a second when they are not; apt-get needs root or sudo): the README's test command
needs no step of its own for these tests, and a machine where the browser cannot be installed fails
here, nothing is skipped.
"""

import os
import subprocess

import pytest

from glue_test_data import REPO, load_bench_script

# The page runs MediaPipe's C++ compiled to WebAssembly (XNNPACK's WebAssembly kernels), Python its
# native build: float32 sums in other orders at most.
FLOAT_TOLERANCE = 1e-5

bench_browser = load_bench_script("bench_browser")


@pytest.fixture(scope="module")
def browser():
    subprocess.run(["bash", os.path.join(REPO, "web", "install_browser.sh")], check=True)
