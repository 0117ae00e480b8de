#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# The recorder's own cost per recorded call, and the calls lost, under the fastest writer there is:
# 1-byte dd into a file (a read of /dev/zero and a write per byte, all layers on, the default ring)
# at 1 M and 5 M bytes (2 and 10 M syscalls). The recorder's CPU is the whole run's (GNU time:
# recorder and dd) minus dd's (the summary's "s of CPU") minus the recorder's fixed cost
# (`record -- true`, same build, same run); per call it is what load does not distort much, unlike
# the wall time on a shared machine. With -c OTHER_EZIOTRACE the same runs are made with another
# build too (the previous main), interleaved. With SERVICE=1 every recording goes through an
# eziotraced of its build's own (the eziotraced beside each eziotrace, started here on a private
# socket and ended at the end; the system's service is not touched): the daemon's CPU is not
# counted (the programs run in dd's calls, the client reads the rings).
# A build that writes the archive on a thread of its own (ArchivePipeline) says that thread's CPU
# in -v: its part per call is printed ("writer"), the rest is the drain thread's ("drain"); the
# recorder keeps up with calls issued at up to 1 / max(writer, drain) per second ("bound"), one
# core each. A build without it: writer "-", bound 1 / rec (one thread does all).
#   bench/syscall/recorder_rate.sh [-c OTHER_EZIOTRACE] [BUILD_DIR]   (root; prints, asserts nothing)
#   SIZES="1 5" (millions of bytes), REPS=3, SERVICE=0
set -euo pipefail
other=""
if [ "${1:-}" = "-c" ]; then
  other=$(realpath "$2")
  shift 2
fi
build=${1:-$(dirname "$0")/../../build}
ezt=$(realpath "$build/bin/eziotrace")
work=$(mktemp -d /tmp/ezio-bench-rate.XXXXXX)
chmod 755 "$work"  # eziotraced's socket there must be reachable by its group (SERVICE=1)
daemons=()
cleanup() {
  for pid in "${daemons[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
sizes=${SIZES:-1 5}
reps=${REPS:-3}
builds=("$ezt")
[ -n "$other" ] && builds+=("$other")
declare -A path_of
for i in "${!builds[@]}"; do
  b=${builds[$i]}
  path_of[$b]=--no-service
  [ "${SERVICE:-0}" = 1 ] || continue
  sock="$work/eziotraced-$i.sock"
  "$(dirname "$b")/eziotraced" --foreground --group root --socket "$sock" >"$work/daemon-$i.log" 2>&1 &
  daemons+=($!)
  for _ in $(seq 200); do grep -qs 'eziotraced: ready' "$work/daemon-$i.log" && break; sleep 0.1; done
  grep -q 'eziotraced: ready' "$work/daemon-$i.log" || { cat "$work/daemon-$i.log"; exit 1; }
  path_of[$b]=--service=$sock
done

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

# One recording; sets cpu (recorder + dd, s), app_cpu, app_s, events, lost of the syscall layer,
# writer (the archive writer thread's CPU, s; "" when the build has none).
record() {
  local bin=$1
  shift
  rm -rf "$work/t" "$work/f"
  if ! /usr/bin/time -f '%U %S' -o "$work/time" "$bin" record -v "${path_of[$bin]}" -o "$work/t" \
    -- "$@" 2>"$work/log"; then
    echo "recorder_rate.sh: $bin record -- $* failed:" >&2
    tail -5 "$work/log" >&2
    exit 1
  fi
  cpu=$(awk '{print $1 + $2}' "$work/time")
  app_cpu=$(grep -oE ', [0-9.]+ s of CPU\)' "$work/log" | awk '{print $2}')
  app_s=$(grep -oE 'for [0-9.]+ s' "$work/log" | awk '{print $2}')
  events=$(grep -E '^\s+syscall\s' "$work/log" | awk '{print $2}')
  lost=$(grep -E '^\s+syscall\s' "$work/log" | awk '{print $NF}')
  writer=$(grep -oE "writer thread: [0-9.]+ s of CPU" "$work/log" | awk '{print $3}' || true)
}

declare -A fixed
for b in "${builds[@]}"; do
  f=()
  for _ in 1 2 3; do
    record "$b" true
    f+=("$(echo "$cpu - $app_cpu" | bc -l)")
  done
  fixed[$b]=$(printf '%s\n' "${f[@]}" | median)
done

printf 'load average at start: %s; path: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)" \
  "$([ "${SERVICE:-0}" = 1 ] && echo "through each build's eziotraced" || echo in-process)"
printf '%-9s %-40s %10s %9s %7s %12s %12s %12s %8s %8s %9s\n' "bytes" "build" "calls" "lost" \
  "lost%" "rec us/call" "rec Mcalls/s" "dd Mcalls/s" "writer" "drain" "bound M/s"
for m in $sizes; do
  count=$((m * 1000000))
  declare -A per_call=() loss=() rate=() app_rate=() writer_call=()
  for _ in $(seq "$reps"); do
    for b in "${builds[@]}"; do
      record "$b" dd if=/dev/zero of="$work/f" bs=1 count="$count" status=none
      calls=$((events + lost))
      per_call[$b]+="$(echo "($cpu - $app_cpu - ${fixed[$b]}) * 1000000 / $calls" | bc -l) "
      [ -n "$writer" ] && writer_call[$b]+="$(echo "$writer * 1000000 / $calls" | bc -l) "
      loss[$b]+="$(echo "100 * $lost / $calls" | bc -l) "
      app_rate[$b]+="$(echo "$calls / $app_s / 1000000" | bc -l) "
      rate[$b]+="$calls:$lost "
    done
  done
  for b in "${builds[@]}"; do
    us=$(printf '%s\n' ${per_call[$b]} | median)
    lp=$(printf '%s\n' ${loss[$b]} | median)
    wr=- dr=- bound=$(echo "1 / $us" | bc -l)
    if [ -n "${writer_call[$b]:-}" ]; then
      wr=$(printf '%s\n' ${writer_call[$b]} | median)
      dr=$(echo "$us - $wr" | bc -l)
      bound=$(echo "m = $wr; if ($dr > m) m = $dr; 1 / m" | bc -l)
      wr=$(printf '%.3f' "$wr") dr=$(printf '%.3f' "$dr")
    fi
    ar=$(printf '%s\n' ${app_rate[$b]} | median)
    last=${rate[$b]##* }
    [ -z "$last" ] && last=$(echo "${rate[$b]}" | awk '{print $NF}')
    printf '%-9s %-40s %10s %9s %6.1f%% %12.3f %12.2f %12.2f %8s %8s %9.2f\n' "${m}M" \
      "$( [ "$b" = "$ezt" ] && echo "this build" || echo "$b")" \
      "${last%%:*}" "${last##*:}" "$lp" "$us" "$(echo "1 / $us" | bc -l)" "$ar" "$wr" "$dr" "$bound"
  done
done
printf 'fixed cost (record -- true, recorder CPU s):'
for b in "${builds[@]}"; do printf ' %s' "${fixed[$b]}"; done
printf '\nload average at end: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
printf 'medians of %s runs; calls = recorded + lost syscalls; rec = the recorder without its fixed cost\n' "$reps"
