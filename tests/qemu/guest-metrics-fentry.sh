# SPDX-License-Identifier: GPL-2.0-only
# Sourced by guest-systemd-install.sh (the qemu_systemd_install boot, where fentry attaches): the
# always-on metrics choose fentry/fexit on the system calls' functions, and count a known workload
# exactly; then, fentry refused (EZIOTRACE_DENY_HOOKS), the tracepoint path counts the same.
# The FS layer the same way: with fentry on ext4's and xfs's file operations, a known workload on
# each (writes, fsyncs, then reads with the cache dropped) gives its exact counts, bytes and
# latencies; on their tracepoints, what those show (guest-metrics-fs.sh).
# Uses check, ok, bad, limit, $prefix of the sourcing script.
mf_dir=$(mktemp -d /tmp/ezio-mf.XXXXXX)
chmod 755 "$mf_dir"
mf_cg_root=$(findmnt -n -t cgroup2 -o TARGET | head -n 1)
mf_cg=$mf_cg_root/ezio_metrics_fentry
mf_file=/mnt/disk/ezio-metrics-fentry
mf_port=9467

# mf_value NAME OP: the value of the job's series NAME with op=OP (summed over its other labels).
# mf_value NAME OP [CGROUP [FSTYPE]]: the same, of another cgroup, on one file-system type.
mf_value() {
  awk -v name="$1" -v op="op=\"$2\"" -v cg="cgroup=\"/${3:-ezio_metrics_fentry}\"" \
    -v fs="${4:+fstype=\"$4\"}" \
    'index($0, name "{") == 1 && index($0, cg) && index($0, op) && (fs == "" || index($0, fs)) { s += $NF } END { print s + 0 }' "$mf_dir/scrape"
}

# mf_in_cgroup CGROUP COMMAND: sh -c COMMAND in the cgroup (moved there stopped: a write to
# cgroup.procs would be its own), waited for.
mf_in_cgroup() {
  local i
  # shellcheck disable=SC2016 # $$ and $1 are the inner shell's
  sh -c 'kill -STOP $$; exec sh -c "$1"' sh "$2" &
  i=$!
  for _ in $(seq 1 100); do [ "$(awk '{print $3}' /proc/$i/stat)" = T ] && break; sleep 0.1; done
  echo $i >"$mf_cg_root/$1/cgroup.procs"
  kill -CONT $i
  wait $i
}

mf_round() {  # mf_round MODE [ENV...]: eziotraced with metrics, the workload, the checks
  local mode=$1 pid i
  shift
  env "$@" "$prefix/eziotraced" --foreground --socket "$mf_dir/sock" --group root \
    --metrics $mf_port --metrics-layers syscall,vfs,fs --metrics-latency-every 1 >"$mf_dir/out" 2>"$mf_dir/err" &
  pid=$!
  for i in $(seq 1 120); do grep -q ready "$mf_dir/out" && break; sleep 0.5; done
  check "eziotraced --metrics starts ($mode)" grep -q "eziotraced: ready" "$mf_dir/out"
  check "service status says the system calls are counted by $mode" \
    eval "limit '$prefix/eziotrace' service status --socket '$mf_dir/sock' | grep -q 'counted by $mode'"
  # In a cgroup of its own (moved there stopped: a write to cgroup.procs would be its own), dd's
  # 1000 writes of 4 KiB, then 7 fsyncs and 3 fdatasyncs.
  rm -f "$mf_file"
  sh -c "kill -STOP \$\$; dd if=/dev/zero of=$mf_file bs=4096 count=1000 status=none && exec python3 -c '
import os
fd = os.open(\"$mf_file\", os.O_WRONLY)
for _ in range(7): os.fsync(fd)
for _ in range(3): os.fdatasync(fd)
'" &
  i=$!
  for _ in $(seq 1 100); do [ "$(awk '{print $3}' /proc/$i/stat)" = T ] && break; sleep 0.1; done
  echo $i >"$mf_cg/cgroup.procs"
  kill -CONT $i
  check "$mode: the workload ran" wait $i
  limit curl -sf "http://127.0.0.1:$mf_port/metrics" >"$mf_dir/scrape"
  check "the metrics say mode $mode" grep -qx "eziotrace_syscall_hook{mode=\"$mode\"} 1" "$mf_dir/scrape"
  check "$mode: bytes written = what dd wrote (4096000; $(mf_value eziotrace_syscall_bytes_total write))" \
    [ "$(mf_value eziotrace_syscall_bytes_total write)" = 4096000 ]
  check "$mode: VFS bytes written on the file = 4096000 ($(mf_value eziotrace_vfs_bytes_total write))" \
    [ "$(mf_value eziotrace_vfs_bytes_total write)" = 4096000 ]
  check "$mode: fsync calls = 7 ($(mf_value eziotrace_syscall_calls_total fsync))" \
    [ "$(mf_value eziotrace_syscall_calls_total fsync)" = 7 ]
  check "$mode: fdatasync calls = 3 ($(mf_value eziotrace_syscall_calls_total fdatasync))" \
    [ "$(mf_value eziotrace_syscall_calls_total fdatasync)" = 3 ]
  check "$mode: VFS fsync calls = 7 ($(mf_value eziotrace_vfs_calls_total fsync))" \
    [ "$(mf_value eziotrace_vfs_calls_total fsync)" = 7 ]
  check "$mode: every write has its latency ($(mf_value eziotrace_syscall_latency_seconds_count write))" \
    [ "$(mf_value eziotrace_syscall_latency_seconds_count write)" = "$(mf_value eziotrace_syscall_calls_total write)" ]
  mf_fs_checks "$mode"
  kill -TERM $pid
  wait $pid
  [ $failed -eq 0 ] || sed 's/^/  | /' "$mf_dir/err" | tail -n 20
}

# shellcheck source=guest-metrics-fs.sh
. "$EZIO_FILES/guest-metrics-fs.sh"
mkdir -p "$mf_cg"
mf_fs_setup
mf_round fentry
mf_round tracepoint EZIOTRACE_DENY_HOOKS=fentry
mf_fs_teardown
rmdir "$mf_cg"
rm -rf "$mf_dir" "$mf_file"
