#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Do two builds merge the same recordings into the same archive? For changes to the merge that must
# not change its output (archives identical before and after). Records the merge tests'
# workloads once with NEW (`eziotrace --keep-parts`), merges each recording's parts with OLD and
# with NEW, and compares the results: every event and definition file, and `otf2-print` and
# `otf2-print -G` (the anchor files differ in their creation time only). Also compares the
# archive NEW's run merged itself (the kernel events taken from the recorder's copy, not decoded
# from its archive) with NEW's `merge` of the kept parts, by `otf2-print` and `otf2-print -G`.
# Prints one line per recording; exit 1 when any differs. Not registered with ctest (it needs two builds): run by hand,
# as root.
#
#   tests/e2e/merge/same_output.sh OLD_EZIOTRACE [NEW_BUILD_DIR (default: build)]
set -euo pipefail

[[ $# -ge 1 ]] || { echo "usage: $0 OLD_EZIOTRACE [NEW_BUILD_DIR]" >&2; exit 2; }
old=$(realpath "$1")
root=$(cd "$(dirname "$0")/../../.." && pwd)
build=$root/${2:-build}
new=$build/bin/eziotrace
programs=$build/tests/programs-bin
for f in "$old" "$new"; do [[ -x $f ]] || { echo "$f: not an executable" >&2; exit 1; }; done
[[ -x $programs/io_threads ]] || { echo "build the merge tests' programs first" >&2; exit 1; }
[[ $(id -u) == 0 ]] || { echo "eziotrace needs root" >&2; exit 1; }
work=$(mktemp -d /tmp/ezio-same-output.XXXXXX)
trap 'rm -rf "$work"' EXIT
export EZIOTRACE_CACHE_DIR=${EZIOTRACE_CACHE_DIR:-$work/cache}
mkdir -m700 -p "$EZIOTRACE_CACHE_DIR" "$work/wd"

# record <name> <eziotrace options and command...>: keeps the parts in $work/<name>.parts.
record() {
  local name=$1
  shift
  (cd "$work" && "$new" -o "$work/$name" --keep-parts "$@" >"$work/$name.log" 2>&1) || true
  [[ -d $work/$name.parts/kernel ]] || { cat "$work/$name.log" >&2; exit 1; }
}
record threads -- "$programs/io_threads" "$work/wd" "$programs/io_child"
record child -- "$programs/io_child" "$work/wd/child.txt"
record spawn-exec -- "$programs/spawn_children" exec 3 "$work/wd"
record spawn-fork -- "$programs/spawn_children" fork 2 "$work/wd"
record dd -- dd if=/dev/zero of="$work/wd/dd.data" bs=1 count=20000
record script -- bash -c "ls /usr >$work/wd/ls.out; cat /etc/hostname | wc -c >/dev/null"
names=(threads child spawn-exec spawn-fork dd script)
if [[ -x $programs/mpi_io ]]; then
  record mpi -t mpich,posixio -- mpirun.mpich -np 2 "$programs/mpi_io" "$work/wd"
  names+=(mpi)
fi

# merge <binary> <name> <out>: the merged archive, its otf2-print and otf2-print -G.
merge() {
  local parts=$work/$2.parts
  "$1" merge "$parts/eztrace/eztrace" --alignment "$parts/eztrace/eziotrace-alignment" \
    "$parts/kernel/eziotrace.otf2" -o "$3" >"$3.log" 2>&1 || true
  otf2-print "$3/eziotrace.otf2" >"$3.print" 2>&1 || true
  otf2-print -G "$3/eziotrace.otf2" >"$3.defs" 2>&1 || true
}
status=0
for name in "${names[@]}"; do
  merge "$old" "$name" "$work/$name.old"
  merge "$new" "$name" "$work/$name.new"
  if diff -rq -x eziotrace.otf2 "$work/$name.old" "$work/$name.new" >/dev/null &&
    cmp -s "$work/$name.old.print" "$work/$name.new.print" &&
    cmp -s "$work/$name.old.defs" "$work/$name.new.defs"; then
    echo "$name: identical ($(grep -c . "$work/$name.new.print") lines of otf2-print)"
  else
    echo "$name: DIFFERS"
    diff "$work/$name.old.print" "$work/$name.new.print" | head -5 || true
    status=1
  fi
  otf2-print "$work/$name/eziotrace.otf2" >"$work/$name.run.print" 2>&1 || true
  otf2-print -G "$work/$name/eziotrace.otf2" >"$work/$name.run.defs" 2>&1 || true
  if cmp -s "$work/$name.run.print" "$work/$name.new.print" &&
    cmp -s "$work/$name.run.defs" "$work/$name.new.defs"; then
    echo "$name: the run's own merge identical"
  else
    echo "$name: the run's own merge DIFFERS"
    diff "$work/$name.run.print" "$work/$name.new.print" | head -5 || true
    status=1
  fi
done
exit $status
