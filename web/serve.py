"""Serves the classifier page and one model on loopback, for a person's browser or the tests.

    python web/serve.py path/to/classifier_float32.tflite [--port 8000]

then open the printed address. Only what the page loads is served, an allow-list: the files named
in `served_files.txt` (the page's own, and the few files of its pinned @mediapipe/tasks-text package
it loads, from `npm ci`, so MediaPipe's WebAssembly comes from here, no CDN) and `/model.tflite`,
the given file. Nothing else: no directory listing, none of this directory's sources or install
scripts, no file reached through a link out of `web/`, no answer to a request whose Host header
names another site (DNS rebinding: a page elsewhere whose name is made to point at 127.0.0.1). At
most `MAX_CLIENTS` connections are served at once, each dropped after `IDLE_SECONDS` of silence; a
client that leaves mid-download is no error. Browsers refuse to compile WebAssembly streamed with
another MIME type than application/wasm, and ES modules with a non-JavaScript one, so both are set
here rather than left to the system's table.
"""

import argparse
import contextlib
import functools
import http.server
import os
import shutil
import stat
import sys
import threading
import urllib.parse

WEB_DIR = os.path.dirname(os.path.abspath(__file__))
SERVED_LIST = os.path.join(WEB_DIR, "served_files.txt")
MODEL_URL_PATH = "/model.tflite"
LOOPBACK = "127.0.0.1"
HOST_NAMES = ("localhost", LOOPBACK)  # what a browser on this machine puts in the Host header
TFLITE_IDENTIFIER = b"TFL3"  # a LiteRT flatbuffer's file identifier, bytes 4-8
IDLE_SECONDS = 20
MAX_CLIENTS = 32  # a browser opens at most 6 connections to a host; the rest are refused, not queued
MIME_TYPES = {".wasm": "application/wasm", ".js": "text/javascript", ".mjs": "text/javascript",
              ".tflite": "application/octet-stream", ".html": "text/html; charset=utf-8",
              ".css": "text/css; charset=utf-8"}


def served_files():
    """The paths under `web/` that are served, from `served_files.txt` (also read by install_browser.sh)."""
    with open(SERVED_LIST, encoding="utf-8") as handle:
        return [line.strip() for line in handle if line.strip() and not line.startswith("#")]


def _open_regular(path, inside=None):
    """A binary handle on the regular file `path` (resolved inside the directory `inside` when given),
    or None: no FIFO or device (a read would hang), no link out of `inside`."""
    if inside is not None:
        path = os.path.realpath(path)
        if os.path.commonpath([path, inside]) != inside:
            return None
    try:  # O_NONBLOCK: opening a FIFO does not wait for a writer; a regular file reads as usual
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | (os.O_NOFOLLOW if inside else 0))
    except OSError:
        return None
    if not stat.S_ISREG(os.fstat(descriptor).st_mode):
        os.close(descriptor)
        return None
    return os.fdopen(descriptor, "rb")


class PageHandler(http.server.BaseHTTPRequestHandler):
    """GET and HEAD of the allow-listed files; anything else is a short error page. Quiet."""

    server_version = "albert-tf-page"

    def __init__(self, *args, files, **kwargs):
        self.files = files  # URL path -> (file path, the directory it must resolve inside, or None)
        super().__init__(*args, **kwargs)

    def setup(self):
        self.timeout = self.server.idle_seconds  # StreamRequestHandler.setup applies it to the socket
        super().setup()

    def do_GET(self):  # noqa: N802 (the base class's naming)
        self._answer(send_body=True)

    def do_HEAD(self):  # noqa: N802
        self._answer(send_body=False)

    def _answer(self, send_body):
        if (self.headers.get("Host") or "").lower() not in self.server.host_headers:
            self.send_error(421, "Misdirected Request", "this server answers only requests for "
                            f"{LOOPBACK}:{self.server.server_address[1]} or localhost")
            return
        url_path = urllib.parse.unquote(urllib.parse.urlsplit(self.path).path)
        entry = self.files.get(url_path)
        handle = _open_regular(*entry) if entry else None
        if handle is None:
            self.send_error(404, "Not Found")
            return
        with handle:
            self.send_response(200)
            self.send_header("Content-Type", MIME_TYPES.get(os.path.splitext(entry[0])[1], "application/octet-stream"))
            self.send_header("Content-Length", str(os.fstat(handle.fileno()).st_size))
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            if send_body:
                shutil.copyfileobj(handle, self.wfile)

    def end_headers(self):
        # Cross-origin isolation: the page's performance.now() then ticks in 5 microseconds, not 100.
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        self.send_header("X-Content-Type-Options", "nosniff")
        super().end_headers()

    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        del format, args


class PageServer(http.server.ThreadingHTTPServer):
    """A thread per connection, at most `max_clients` at once (others are closed at once); a
    connection's end that is the client's doing (it left, it fell silent) prints nothing."""

    block_on_close = False  # stopping does not wait for idle clients

    def __init__(self, address, handler, max_clients, idle_seconds):
        super().__init__(address, handler)
        self.idle_seconds = idle_seconds
        self.slots = threading.BoundedSemaphore(max_clients)
        port = self.server_address[1]
        self.host_headers = {f"{name}:{port}" for name in HOST_NAMES} | (set(HOST_NAMES) if port == 80 else set())

    def process_request(self, request, client_address):
        if not self.slots.acquire(blocking=False):
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:  # no thread was started to release the slot
            self.slots.release()
            raise

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self.slots.release()

    def handle_error(self, request, client_address):
        error = sys.exc_info()[1]
        if not isinstance(error, (ConnectionError, TimeoutError)):
            print(f"serve.py: a request from {client_address[0]} failed: {type(error).__name__}: {error}",
                  file=sys.stderr, flush=True)


def check_page_ready(model_path, port=0):
    """Raises ValueError naming what is wrong: the model file, the port, or the page's npm packages."""
    if not 0 <= port <= 65535:
        raise ValueError(f"--port must be from 0 to 65535, got {port}")
    what = "a classifier .tflite with MediaPipe metadata"
    if os.path.isdir(model_path):
        raise ValueError(f"model {model_path}: a directory, not a file ({what})")
    if not os.path.exists(model_path):
        raise ValueError(f"model {model_path}: no such file ({what})")
    if not os.path.isfile(model_path):
        raise ValueError(f"model {model_path}: not a regular file (a FIFO, socket or device; {what})")
    try:
        with open(model_path, "rb") as model_file:
            identifier = model_file.read(8)[4:]
    except OSError as error:
        raise ValueError(f"model {model_path}: cannot be read ({error.strerror})") from None
    if identifier != TFLITE_IDENTIFIER:
        raise ValueError(f"model {model_path}: not a LiteRT model (no {TFLITE_IDENTIFIER.decode()} identifier "
                         "at byte 4; export one with run_classifier.py --export_tflite)")
    missing = [name for name in served_files()
               if name.startswith("node_modules/") and not os.path.isfile(os.path.join(WEB_DIR, name))]
    if missing:
        raise ValueError(f"{os.path.join(WEB_DIR, 'node_modules')}: the page's npm packages are missing or half "
                         f"installed (no {missing[0]}); run `bash web/install_browser.sh` (it repairs them)")


@contextlib.contextmanager
def serving(model_path, port=0, max_clients=MAX_CLIENTS, idle_seconds=IDLE_SECONDS):
    """Serves on 127.0.0.1:`port` (0: a free one) in a thread; yields the page's address."""
    check_page_ready(model_path, port)
    web_dir = os.path.realpath(WEB_DIR)
    files = {f"/{name}": (os.path.join(web_dir, name), web_dir) for name in served_files()}
    files["/"] = files["/index.html"]
    files[MODEL_URL_PATH] = (os.path.abspath(model_path), None)  # the file the user named, wherever it is
    handler = functools.partial(PageHandler, files=files)
    with PageServer((LOOPBACK, port), handler, max_clients, idle_seconds) as server:
        thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
        thread.start()
        try:
            yield f"http://{LOOPBACK}:{server.server_address[1]}/"
        finally:
            server.shutdown()
            thread.join()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="a classifier .tflite with MediaPipe metadata")
    parser.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (default 8000)")
    args = parser.parse_args(argv)
    try:
        with serving(args.model, args.port) as url:
            print(f"serving {args.model} at {url} (Ctrl-C stops)", flush=True)
            threading.Event().wait()
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"error: --port {args.port} on {LOOPBACK}: {error.strerror}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
