#!/usr/bin/env bash
# The TFLite Task Library's environment, for bench/task_library_qa.py and its test: Debian's
# libusb-1.0-0 if absent (tflite-support's native module links it), then a virtual environment
# .venv-tflite-support/ at the checkout's root with bench/task_library_requirements.txt, made from
# a Python outside the project's environment (TASK_LIBRARY_PYTHON, default /usr/bin/python3; 3.11
# at most, the last tflite-support has no wheels past it). Debian or Ubuntu, as root or with sudo.
# Idempotent: well under a second when the environment is there with these pins. Two runs at once
# are safe: the second waits for the first's lock (.venv-tflite-support.lock), then finds it done.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv-tflite-support
requirements=bench/task_library_requirements.txt
exec 9>"$venv.lock"
flock 9

# ldconfig lives in /sbin, which a user's PATH may not hold.
ldconfig=$(PATH="$PATH:/usr/sbin:/sbin" command -v ldconfig)
if ! "$ldconfig" -p | grep 'libusb-1\.0\.so\.0' >/dev/null; then  # not -q: ldconfig must not die of SIGPIPE under pipefail
  as_root=()
  [ "$(id -u)" -eq 0 ] || as_root=(sudo)
  "${as_root[@]}" apt-get update -qq
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends libusb-1.0-0
fi
if cmp -s "$requirements" "$venv/installed_requirements.txt" \
    && "$venv/bin/python" -c 'from tflite_support.task import text' 2>/dev/null; then
  exit 0
fi
rm -rf "$venv"
"${TASK_LIBRARY_PYTHON:-/usr/bin/python3}" -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check -r "$requirements"
"$venv/bin/python" -c 'from tflite_support.task import text'
cp "$requirements" "$venv/installed_requirements.txt"
