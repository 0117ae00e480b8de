#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Quick start command 1: set up, build, record the bundled demo workload and print its analysis.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh main >/dev/null
ezt=$PWD/build/bin/eziotrace
work=${EZIO_DEMO_DIR:-$PWD/demo-output}
mkdir -p "$work"
rm -rf "$work/data" "$work/demo_eziotrace"
mkdir -p "$work/data"
cd "$work"
echo "== eziotrace -o demo_eziotrace -- demo_io $work/data" >&2
"$ezt" -o demo_eziotrace -- "$OLDPWD/build/demo/demo_io" "$work/data"
archive=$work/demo_eziotrace/eziotrace.otf2
echo "== eziotrace layers $archive" >&2
"$ezt" layers "$archive"
echo "== eziotrace profile --total $archive" >&2
"$ezt" profile --total "$archive"
echo "== eziotrace advise $archive" >&2
"$ezt" advise "$archive"
report=$("$ezt" report -o "$work/demo_eziotrace/report.html" "$archive")
cat >&2 <<EOT
== the archive: $archive
   the HTML report:     $report
   the layered view:    $ezt view $archive   (ViTE; needs a display)
   for Perfetto:        $ezt export --format perfetto $archive -o demo.json
   per file:            $ezt files $archive
   latency histograms:  $ezt latency $archive --svg latency.svg
   print it:            otf2-print $archive | less
EOT
