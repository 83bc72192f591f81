#!/usr/bin/env bash
# What the browser page's test needs beside Python: Debian's `chromium` (a real browser from the
# distribution's packages; puppeteer-core drives it and downloads none), Node.js with npm if absent,
# and the page's pinned npm packages (`npm ci`: @mediapipe/tasks-text, puppeteer-core). Debian or
# Ubuntu, as root or with sudo. Idempotent: about a second when everything is already installed.
set -euo pipefail
cd "$(dirname "$0")"

missing=()
command -v chromium >/dev/null || missing+=(chromium)
command -v npm >/dev/null || missing+=(nodejs npm)
if [ ${#missing[@]} -gt 0 ]; then
  as_root=()
  [ "$(id -u)" -eq 0 ] || as_root=(sudo)
  "${as_root[@]}" apt-get update -qq
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# npm ls passes packages whose files were deleted (an interrupted copy, a cleaned cache): the files
# web/serve.py serves are checked too, and a half-installed node_modules is made again.
installed() {
  npm ls >/dev/null 2>&1 || return 1
  local name
  while read -r name; do
    case "$name" in ''|'#'*) ;; *) [ -f "$name" ] || return 1 ;; esac
  done < served_files.txt
}
if ! installed; then
  PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund
fi
