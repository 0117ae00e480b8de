#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# ctest bpf.srun_interrupt: `eziotrace record -o DIR -- srun ...` interrupted (docs/cluster.md,
# "Ctrl-C"), with a one-node srun (srun/srun: srun's signal rules, its task run here, recorded by
# real BPF as root). Two SIGINTs within a second to eziotrace: the first reaches srun, which only
# prints its state; the second cancels the step; SIGTERM to eziotrace: passed to srun, which ends
# the task. Both times the part is merged into a readable archive whose EZIOTRACE::STATUS is
# `interrupted`, with why, and the exit status is srun's.
#   srun_interrupt_test.sh EZIOTRACE
set -uo pipefail
eziotrace=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ezio-srun-interrupt.XXXXXX")
pid=
trap '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
export PATH="$here/srun:$PATH"
failed=0
check() {  # check DESCRIPTION COMMAND...
  local desc=$1
  shift
  if "$@"; then echo "ok   - $desc"; else echo "FAIL - $desc"; failed=1; fi
}
prop() {  # prop ARCHIVE NODE NAME: the value of a system tree node's property
  otf2-print -G "$1" | sed -n "s/.*System Tree Node: \"[A-Za-z]*::$2\" <[0-9]*>, Name: \"$3\" <[0-9]*>, Type: [A-Z0-9]*, Value: \"\{0,1\}\([^\"]*\)\"\{0,1\}.*/\1/p"
}
# interrupt NAME SIGNAL...: records `srun -N 1 sh -c ...` into $tmp/NAME, sends the signals to
# eziotrace once the task's program runs (0.3 s apart), and waits for eziotrace.
interrupt() {
  local name=$1
  shift
  # No timeout(1) around it: it would signal the whole process group, srun included (ctest's
  # TIMEOUT bounds the test).
  "$eziotrace" record -o "$tmp/$name" -- srun -N 1 \
    sh -c ": > '$tmp/$name.running'; exec sleep 60" > "$tmp/$name.out" 2>&1 &
  pid=$!
  for _ in $(seq 1 600); do [ -e "$tmp/$name.running" ] && break; sleep 0.1; done
  check "$name: the task's program runs under its recording" [ -e "$tmp/$name.running" ]
  local sig
  for sig in "$@"; do
    kill -"$sig" "$pid"
    sleep 0.3
  done
  wait "$pid"
  echo $? > "$tmp/$name.rc"
  pid=
  cat "$tmp/$name.out"
}
check_archive() {  # check_archive NAME SIGNAL STATUS_RE: the archive of `interrupt NAME`
  local a=$tmp/$1/eziotrace.otf2
  check "$1: eziotrace exits with srun's status ($(cat "$tmp/$1.rc"), the task's: killed by a signal)" \
    grep -qxE "$3" "$tmp/$1.rc"
  check "$1: the part is merged into one archive, otf2-print reads it" otf2-print -G "$a" > /dev/null
  check "$1: STATUS interrupted ($(prop "$a" cluster EZIOTRACE::STATUS))" \
    [ "$(prop "$a" cluster EZIOTRACE::STATUS)" = interrupted ]
  check "$1: STATUS_REASON names the signal ($(prop "$a" cluster EZIOTRACE::STATUS_REASON))" \
    [ "$(prop "$a" cluster EZIOTRACE::STATUS_REASON)" = "SIG$2 to eziotrace during the step" ]
  local hs
  hs=$(prop "$a" cluster EZIOTRACE::HOSTS_STATUS)
  check "$1: HOSTS_STATUS says the host's recording was interrupted ($hs)" \
    grep -q "merged, its recording interrupted (SIG[A-Z]* received)" <<<"$hs"
  check "$1: layers opens it" "$eziotrace" layers "$a"
}
interrupt twice INT INT
check "twice: the first SIGINT reached srun, which only printed its state" \
  grep -q "interrupt (one more within 1 sec to abort)" "$tmp/twice.out"
check "twice: the second cancelled the step" grep -q "sending Ctrl-C to the step" "$tmp/twice.out"
# The task gets SIGINT then SIGTERM at once: killed by either.
check_archive twice INT '130|143'
interrupt term TERM
check_archive term TERM 143
[ $failed -eq 0 ] && echo "srun interrupt: all checks passed"
exit $failed
