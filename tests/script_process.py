"""`python SCRIPT ARGS` for the end-to-end tests, without paying for TensorFlow's import every time.

A fresh interpreter per script run would import TensorFlow and Keras (about 5 s of CPU) before
doing a second's work. `run_python` runs the script in a child forked from a
waiting interpreter (one per test process and environment) that has done only what the scripts
do first: `prefer_onednn()`, `quiet_tensorflow()`, `import tensorflow, keras`, no TensorFlow op.
The child is a process of its own, as `subprocess.run` would start: its own working directory,
arguments, `sys.path[0]`, standard streams (stdin empty), exit status (a signal's too), absl
flags and TensorFlow state; it ends through the interpreter's normal exit (atexit handlers,
flushing) or its own signal. What only a fresh interpreter shows (TensorFlow's start-up lines,
what `--help` imports, a script that forgets to set TensorFlow's environment before importing
it) is tested with `subprocess` itself (tests/test_script_output.py, test_script_help.py,
test_tf_defaults.py).
"""

import atexit
import collections
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The waiting interpreter: reads one request per line, forks, reports the child's pid, then its
# exit status (as subprocess's returncode: -N for signal N). The child leaves the loop and runs the
# request at the top level, so that it exits the way `python ARGS` exits.
_SERVER = r"""
import json, os, sys
from albert_cli.cli import prefer_onednn
from albert_cli.tensorflow_logs import quiet_tensorflow
prefer_onednn()
quiet_tensorflow()
import gc, keras, logging, tensorflow
from tensorflow.python.platform import tf_logging
# With no handler on the root logger yet, TensorFlow gave its logger one of its own at import; the
# scripts import it after absl's handler is on the root logger, when it adds none: undone here, its
# logger is configured again at first use.
for handler in logging.getLogger("tensorflow").handlers[:]:
    logging.getLogger("tensorflow").removeHandler(handler)
tf_logging._logger = None
gc.freeze()  # what the children inherit stays out of their collections (and shared, not copied)
requests = os.fdopen(0, "rb", buffering=0)
replies = os.fdopen(int(sys.argv[1]), "w")
line = b""
while True:
    chunk = requests.read(1)
    if not chunk:
        os._exit(0)
    if chunk != b"\n":
        line += chunk
        continue
    request, line = json.loads(line), b""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        break
    replies.write(json.dumps({"pid": pid}) + "\n")
    replies.flush()
    _, status = os.waitpid(pid, 0)
    replies.write(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}) + "\n")
    replies.flush()

import numpy, runpy
replies.close()
os.chdir(request["cwd"])
os.environ.clear()
os.environ.update(request["env"])  # the server's but for PYTEST_CURRENT_TEST, which pytest changes per test
for fd, path, flags in ((0, os.devnull, os.O_RDONLY), (1, request["stdout"], os.O_WRONLY),
                        (2, request["stderr"], os.O_WRONLY)):
    opened = os.open(path, flags)
    os.dup2(opened, fd)
    os.close(opened)
numpy.random.seed()  # as a fresh interpreter's (Python's own `random` is reseeded after a fork)
args = request["args"]
if args[0] == "-m":
    sys.argv, sys.path[0] = args[1:], os.getcwd()
    runpy.run_module(args[1], run_name="__main__", alter_sys=True)
else:
    sys.argv, sys.path[0] = args, os.path.dirname(os.path.realpath(args[0]))
    runpy.run_path(args[0], run_name="__main__")
"""


class _Server:
    """A waiting interpreter started with `env`; `run` forks a child of it per request."""

    def __init__(self, env):
        read_end, self.write_end = os.pipe()
        self.process = subprocess.Popen([sys.executable, "-c", _SERVER, str(self.write_end)], cwd=REPO, env=env,
                                        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, pass_fds=(self.write_end,))
        os.close(self.write_end)
        self.replies, self.pending = read_end, b""

    def _reply(self, deadline):
        while b"\n" not in self.pending:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if not select.select([self.replies], [], [], wait)[0]:
                return None
            chunk = os.read(self.replies, 4096)
            if not chunk:
                raise RuntimeError(f"the script server stopped (exit status {self.process.wait()})")
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return json.loads(line)

    def run(self, args, cwd, env, timeout):
        with tempfile.TemporaryDirectory() as streams:
            paths = {name: os.path.join(streams, name) for name in ("stdout", "stderr")}
            for path in paths.values():
                open(path, "w").close()
            self.process.stdin.write(json.dumps(dict(args=list(args), cwd=str(cwd), env=env, **paths)).encode() + b"\n")
            self.process.stdin.flush()
            pid = self._reply(None)["pid"]
            deadline = None if timeout is None else time.monotonic() + timeout
            reply = self._reply(deadline)
            if reply is None:
                os.kill(pid, signal.SIGKILL)
                self._reply(None)
            outputs = {}
            for name, path in paths.items():
                with open(path, newline=None) as handle:  # as subprocess.run(text=True) decodes
                    outputs[name] = handle.read()
        command = [sys.executable, *args]
        if reply is None:
            raise subprocess.TimeoutExpired(command, timeout, outputs["stdout"], outputs["stderr"])
        return subprocess.CompletedProcess(command, reply["returncode"], outputs["stdout"], outputs["stderr"])

    def close(self):
        self.process.stdin.close()
        self.process.wait()
        os.close(self.replies)


_SERVERS = collections.OrderedDict()
MAX_SERVERS = 2  # each holds TensorFlow (about 0.6 GB): the least recently used one goes


@atexit.register
def _close_servers():
    while _SERVERS:
        _SERVERS.popitem()[1].close()


def run_python(args, cwd=REPO, env=None, timeout=None):
    """`subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd, env=env,
    timeout=timeout)`. The checkout's scripts (`run_*.py`, `export_encoder.py`) and `-m albert_cli...`,
    which start with `prefer_onednn()` and `quiet_tensorflow()`, are forked from a waiting interpreter
    when `env` sets TF_ENABLE_ONEDNN_OPTS and hides TensorFlow's INFO and WARNING lines
    (TF_CPP_MIN_LOG_LEVEL 2 or 3): the child's environment and stderr are then a fresh one's."""
    env = dict(os.environ if env is None else env)
    args = [os.fspath(arg) for arg in args]
    script_dir = os.path.dirname(os.path.realpath(os.path.join(cwd, args[0])))
    project_script = ((args[0].endswith(".py") and script_dir == os.path.realpath(REPO))
                      or (args[0] == "-m" and args[1].startswith("albert_cli.")))
    if not (project_script and "TF_ENABLE_ONEDNN_OPTS" in env and env.get("TF_CPP_MIN_LOG_LEVEL") in ("2", "3")):
        return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=cwd, env=env,
                              timeout=timeout)
    key = tuple(sorted((name, value) for name, value in env.items() if name != "PYTEST_CURRENT_TEST"))
    if key not in _SERVERS:
        if len(_SERVERS) >= MAX_SERVERS:
            _SERVERS.popitem(last=False)[1].close()
        _SERVERS[key] = _Server(env)
    _SERVERS.move_to_end(key)
    return _SERVERS[key].run(args, cwd, env, timeout)
