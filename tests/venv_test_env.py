"""Virtual environments for tests that install this project the way users do, without downloading:
the new environment sees this interpreter's packages (TensorFlow & co., pip, setuptools)."""

import os
import site
import subprocess
import sys


def venv_seeing_this_interpreters_packages(path):
    """A virtual environment at `path` that also imports what this interpreter imports; returns its bin directory.

    `--system-site-packages` would give it the base Python's packages, not those of the venv
    pytest may run in: a `.pth` file adds this interpreter's site directories instead (their own
    `.pth` files processed), after the new environment's own.
    """
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=300)
    python = str(path / "bin" / "python")
    own_site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                              check=True, capture_output=True, text=True, timeout=60).stdout.strip()
    with open(os.path.join(own_site, "outer_site_packages.pth"), "w") as handle:
        handle.write("import site; " + "; ".join(f"site.addsitedir({directory!r})" for directory in site_dirs()) + "\n")
    return path / "bin"


def site_dirs():
    """This interpreter's site-packages directories (a venv's, and the base Python's if it inherits them)."""
    return [directory for directory in site.getsitepackages() + [site.getusersitepackages()] if directory in sys.path]


def env_without_pythonpath(**overrides):
    """os.environ without PYTHONPATH: what runs sees only what is installed."""
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env.update(overrides)
    return env
