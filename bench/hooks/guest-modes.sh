# SPDX-License-Identifier: GPL-2.0-only
# Guest script of bench/hooks/qemu.sh (busybox sh, in the qemu 6.1 guest of
# tests/qemu/run-in-vm.sh, where fentry attaches): the syscall layer's cost in both of its hook
# modes, in one boot. Per mode (fentry on the recorded syscalls' functions; the sys_enter/sys_exit
# tracepoints, fentry and kprobes refused), ns per call of
#   - 1-byte write()s to /dev/null by the traced process (a recorded I/O call), --layers syscall;
#   - getppid() by another process while eziotrace records a sleeping one (a syscall never
#     recorded: what the hooks take from the rest of the node), and that process's writes;
# each the fastest batch of ezio_bench_hook_cost, best of REPS runs, beside the same calls with no
# BPF. Prints one line per figure: "<mode> <what> <ns>". Figures under TCG are ~10x slower than
# native ones: only the ratios within this boot mean something.
reps=${REPS:-2}
export EZIOTRACE_CACHE_DIR=/tmp/ezio-cache  # this initramfs has no /run

best_of() {  # best_of COMMAND...: the smallest of REPS runs' figures
  i=0
  while [ $i -lt "$reps" ]; do "$@"; i=$((i + 1)); done | awk 'NR == 1 || $1 < m {m = $1} END {print m}'
}

# untraced WHAT_ARGS...: ezio_bench_hook_cost ARGS in a process eziotrace does not trace, while it
# records `sleep 600` with --layers syscall.
untraced() {
  eziotrace record -v --layers syscall -o /tmp/other --force -- sleep 600 >/tmp/other.log 2>&1 &
  rec=$!
  t=0
  until grep -q 'loaded and attached' /tmp/other.log; do
    if ! kill -0 $rec 2>/dev/null || [ $t -ge 3000 ]; then
      cat /tmp/other.log >&2
      echo "the recorder did not start" >&2
      return 1
    fi
    sleep 0.1
    t=$((t + 1))
  done
  ezio_bench_hook_cost "$@"
  kill -INT $rec
  wait $rec
  # What loading the layer's programs took (the fentry programs, or 2 on the tracepoints).
  grep -o 'programs loaded and attached in [0-9.]* ms ([^)]*)' /tmp/other.log | sed "s/^/# $mode: /" >&2
  # Of which the hooking, once both halves are loaded (fentry: the syscalls' shared bodies first).
  grep -o 'BPF programs attached in [0-9.]* ms' /tmp/other.log | sed "s/^/# $mode: /" >&2
  # And what the verifier went through for them (bpf_prog_info.verified_insns).
  grep -o 'the verifier went through .*' /tmp/other.log | sed "s/^/# $mode: /" >&2
}

traced() {
  eziotrace record --layers syscall -o /tmp/traced --force -- ezio_bench_hook_cost "$@" \
    2>/tmp/traced.log
}

echo "none write $(best_of ezio_bench_hook_cost)"
echo "none getppid $(best_of ezio_bench_hook_cost --getppid)"
for mode in fentry tracepoint; do
  if [ $mode = tracepoint ]; then export EZIOTRACE_DENY_HOOKS=fentry,kprobe; fi
  rm -rf /tmp/ezio-cache
  eziotrace probes > "$EZIO_OUT/probes-$mode.txt" 2>&1
  grep '^syscall' "$EZIO_OUT/probes-$mode.txt"
  echo "$mode traced-write $(best_of traced)"
  echo "$mode other-getppid $(best_of untraced --getppid)"
  echo "$mode other-write $(best_of untraced)"
done
