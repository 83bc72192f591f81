"""The scripts' TensorFlow log level: its C++ INFO and WARNING lines off by default, errors kept.

Those lines are about TensorFlow's internals (oneDNN is on, the CPU instructions it was built
for, "Input of GeneratorDatasetOp::Dataset will not be optimized" at every Keras `fit` or
`predict` under a distribution strategy, XLA start-up), not about the user's run; Python
warnings (Keras', TensorFlow's, ours) are not affected. TensorFlow honours
`TF_CPP_MIN_LOG_LEVEL` only once its logging is initialised: two of its shared objects
(`_pywrap_tensorflow_internal`, `_pywrap_profiler_plugin`) each print their start-up lines
before that, so they show twice whatever the variable says; and on a machine with no CUDA driver
its GPU probe logs `failed call to cuInit ... (303)` as an error although nothing that could have
worked failed. `quiet_tensorflow()` (scripts call it before TensorFlow loads) applies the
variable to those start-up lines too, drops that cuInit line where the CUDA driver is missing,
and hides the INFO messages TensorFlow's Python code logs through absl ("Sharding callback
duration"). `TF_CPP_MIN_LOG_LEVEL=0` shows everything again. The library itself never calls it.
"""

import contextlib
import importlib.abc
import importlib.util
import logging
import os
import re
import sys
import tempfile

from absl import logging as absl_logging

LEVEL_VARIABLE = "TF_CPP_MIN_LOG_LEVEL"
DEFAULT_LEVEL = "2"  # INFO and WARNING off; ERROR and FATAL shown
# A C++ log line: severity letter, date and time (TensorFlow's: "0000 00:00:<unix time>"),
# thread, file:line].
_CPP_LINE = re.compile(r"^([IWEF])\d{4} \d\d:\d\d:\d+\.\d+ +\d+ [^ \]]+:\d+\] ")
_SEVERITIES = "IWEF"
_PRE_INIT_NOTICE = "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR"
_CONTINUATION = "To enable the following instructions:"
_NO_CUDA_DRIVER = "Could not find cuda drivers on your machine"
_CUINIT_FAILED = "failed call to cuInit"


def min_level():
    """TF_CPP_MIN_LOG_LEVEL as a number (0: all, 1: no INFO, 2: no WARNING, 3: no ERROR)."""
    try:
        return int(os.environ.get(LEVEL_VARIABLE, "0"))
    except ValueError:
        return 0


def filter_startup_lines(text, level, keep_cuinit_error):
    """`text` (what TensorFlow printed while loading) less the lines `level` hides.

    The CPU-instructions notice spans two lines: its second goes with its first.
    """
    kept, hidden = [], False
    for line in text.splitlines(keepends=True):
        match = _CPP_LINE.match(line)
        if match:
            hidden = (_SEVERITIES.index(match.group(1)) < level
                      or (_CUINIT_FAILED in line and not keep_cuinit_error))
        elif line.startswith(_PRE_INIT_NOTICE) or (hidden and line.startswith(_CONTINUATION)):
            continue
        else:
            hidden = False
        if not hidden:
            kept.append(line)
    return "".join(kept)


@contextlib.contextmanager
def _captured_stderr():
    """Collects what is written to file descriptor 2 (C++ logs too) into the returned list."""
    sys.stderr.flush()
    captured = []
    with tempfile.TemporaryFile(mode="w+b") as sink:
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        try:
            yield captured
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            captured.append(sink.read().decode("utf-8", "replace"))


class _TensorFlowStartupFilter(importlib.abc.MetaPathFinder):
    """Loads `tensorflow` and its extension modules (`_pywrap_*`, some loaded later) with their
    start-up lines filtered; where no CUDA driver exists, probes the devices once as it loads."""

    def __init__(self, level):
        self.level = level
        self.no_cuda_driver = False

    def find_spec(self, name, path, target=None):
        extension = name.startswith("tensorflow.") and name.rsplit(".", 1)[-1].startswith("_pywrap")
        if not (name == "tensorflow" or extension):
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None:
                    spec.loader = _FilteredLoader(spec.loader, self)
                return spec
        return None

    def filtered(self, action):
        """Runs `action()` with what it writes to stderr filtered; returns its result."""
        try:
            os.fstat(2)
        except OSError:  # no standard error to filter
            return action()
        if sys.stderr is None:
            return action()
        captured = []
        try:
            with _captured_stderr() as captured:
                return action()
        finally:
            text = "".join(captured)
            self.no_cuda_driver = self.no_cuda_driver or _NO_CUDA_DRIVER in text
            sys.stderr.write(filter_startup_lines(text, self.level, keep_cuinit_error=not self.no_cuda_driver))
            sys.stderr.flush()


class _FilteredLoader(importlib.abc.Loader):
    """The module's own loader, its output filtered."""

    def __init__(self, loader, startup_filter):
        self.loader = loader
        self.startup_filter = startup_filter

    def __getattr__(self, name):  # get_source, get_resource_reader, ...: the wrapped loader's
        return getattr(self.loader, name)

    def create_module(self, spec):
        return self.startup_filter.filtered(lambda: self.loader.create_module(spec))

    def exec_module(self, module):
        self.startup_filter.filtered(lambda: self.loader.exec_module(module))
        if module.__name__ == "tensorflow" and self.startup_filter.no_cuda_driver:
            # The GPU probe (cuInit) runs at the first device listing: here, so its error is caught.
            self.startup_filter.filtered(module.config.list_physical_devices)


class _TensorFlowInfoFilter(logging.Filter):
    """Drops INFO (and DEBUG) records that TensorFlow's own Python code logs."""

    def __init__(self, package_dir):
        super().__init__()
        self.package_dir = package_dir

    def filter(self, record):
        return record.levelno >= logging.WARNING or not record.pathname.startswith(self.package_dir)


def quiet_tensorflow():
    """Sets TF_CPP_MIN_LOG_LEVEL to 2 unless the user chose, and applies it to what TensorFlow
    logs before honouring it; call before TensorFlow loads (a script's first lines)."""
    os.environ.setdefault(LEVEL_VARIABLE, DEFAULT_LEVEL)
    level = min_level()
    if level == 0 or any(isinstance(finder, _TensorFlowStartupFilter) for finder in sys.meta_path):
        return
    startup_filter = _TensorFlowStartupFilter(level)
    sys.meta_path.insert(0, startup_filter)
    spec = importlib.util.find_spec("tensorflow")
    if spec is None or spec.origin is None:
        return
    info_filter = _TensorFlowInfoFilter(os.path.dirname(spec.origin) + os.sep)
    absl_logging.get_absl_logger().addFilter(info_filter)  # absl's own logger class: created by absl
    logging.getLogger("tensorflow").addFilter(info_filter)
