"""Serves the classifier page and one model on loopback, for a person's browser or the tests.

    python web/serve.py path/to/classifier_float32.tflite [--port 8000]

then open the printed address. The page's directory is served as it is (its node_modules from
`npm ci`, so MediaPipe's WebAssembly comes from here, no CDN); `/model.tflite` is the given file.
Browsers refuse to compile WebAssembly streamed with another MIME type than application/wasm, and
ES modules with a non-JavaScript one, so both are set here rather than left to the system's table.
"""

import argparse
import contextlib
import functools
import http.server
import os
import sys
import threading

WEB_DIR = os.path.dirname(os.path.abspath(__file__))
MODEL_URL_PATH = "/model.tflite"
TFLITE_IDENTIFIER = b"TFL3"  # a LiteRT flatbuffer's file identifier, bytes 4-8
MIME_TYPES = {".wasm": "application/wasm", ".js": "text/javascript", ".mjs": "text/javascript",
              ".tflite": "application/octet-stream", ".html": "text/html", ".css": "text/css",
              ".json": "application/json"}


class PageHandler(http.server.SimpleHTTPRequestHandler):
    """Files of the page's directory, with `/model.tflite` answered from `model_path`; quiet."""

    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, **MIME_TYPES}

    def __init__(self, *args, model_path, **kwargs):
        self.model_path = model_path
        super().__init__(*args, directory=WEB_DIR, **kwargs)

    def translate_path(self, path):
        if path.split("?", 1)[0] == MODEL_URL_PATH:
            return self.model_path
        return super().translate_path(path)

    def end_headers(self):
        # Cross-origin isolation: the page's performance.now() then ticks in 5 microseconds, not 100.
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        super().end_headers()

    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        del format, args


def check_page_ready(model_path, port=0):
    """Raises ValueError naming what is wrong: the model file, the port, or the page's npm packages."""
    if not 0 <= port <= 65535:
        raise ValueError(f"--port must be from 0 to 65535, got {port}")
    if os.path.isdir(model_path):
        raise ValueError(f"model {model_path}: a directory, not a file (a classifier .tflite with MediaPipe metadata)")
    if not os.path.isfile(model_path):
        raise ValueError(f"model {model_path}: no such file (a classifier .tflite with MediaPipe metadata)")
    try:
        with open(model_path, "rb") as model_file:
            identifier = model_file.read(8)[4:]
    except OSError as error:
        raise ValueError(f"model {model_path}: cannot be read ({error.strerror})") from None
    if identifier != TFLITE_IDENTIFIER:
        raise ValueError(f"model {model_path}: not a LiteRT model (no {TFLITE_IDENTIFIER.decode()} identifier "
                         "at byte 4; export one with run_classifier.py --export_tflite)")
    if not os.path.isdir(os.path.join(WEB_DIR, "node_modules", "@mediapipe", "tasks-text")):
        raise ValueError(f"{os.path.join(WEB_DIR, 'node_modules')}: @mediapipe/tasks-text is not installed; "
                         "run `bash web/install_browser.sh` (or `npm ci` in web/)")


@contextlib.contextmanager
def serving(model_path, port=0):
    """Serves on 127.0.0.1:`port` (0: a free one) in a thread; yields the page's address."""
    check_page_ready(model_path, port)
    handler = functools.partial(PageHandler, model_path=os.path.abspath(model_path))
    with http.server.ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}/"
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
        print(f"error: --port {args.port} on 127.0.0.1: {error.strerror}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0


if __name__ == "__main__":
    sys.exit(main())
