#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Screenshots of the demo in ViTE, as a newcomer opens it: the layered Pajé timeline
# (`eziotrace export --format paje`) and the plain OTF2 archive. Writes docs/view-paje.png and
# docs/view-otf2.png. Needs root (recording), a built tree (scripts/build.sh), Xvfb, vite, xwd and
# ImageMagick (scripts/setup.sh installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
ezt=$root/build/bin/eziotrace
work=$(mktemp -d /tmp/eziotrace-shots.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

mkdir -p "$work/data"
(cd "$work" && "$ezt" -o demo_eziotrace -- "$root/build/demo/demo_io" "$work/data" >/dev/null 2>&1)
archive=$work/demo_eziotrace/eziotrace.otf2
"$ezt" export --format paje "$archive" -o "$work/demo.trace"

display=:$((200 + $$ % 50))
Xvfb "$display" -screen 0 1600x1000x24 -nolisten tcp >/dev/null 2>&1 &
pids+=($!)
sleep 1

# ViTE's window on the virtual screen, cropped to the window.
shoot() {
  DISPLAY=$display HOME=$work vite "$1" >/dev/null 2>&1 &
  local vite=$!
  sleep 8
  DISPLAY=$display xwd -root -silent | /usr/bin/convert xwd:- -bordercolor black -border 1 \
    -fuzz 2% -trim +repage "$2"
  kill "$vite" 2>/dev/null || true
  wait "$vite" 2>/dev/null || true
  echo "wrote $2" >&2
}
shoot "$work/demo.trace" "$root/docs/view-paje.png"
shoot "$archive" "$root/docs/view-otf2.png"
