# SPDX-License-Identifier: GPL-2.0-only
# Sourced by guest-metrics-fentry.sh: the metrics' FS layer on ext4 (the guest's disk) and xfs (a
# loop device on it), in each mode of a round. Per file system, in a cgroup of its own: dd's 1000
# writes of 4 KiB, 7 fsyncs and 3 fdatasyncs (10 calls of the file system's fsync), the cache
# dropped, dd's 1000 reads of 4 KiB back.
mf_xfs_img=/mnt/disk/ezio-metrics-xfs.img
mf_xfs_dir=/mnt/ezio-metrics-xfs

mf_fs_setup() {
  local fs
  printf '%s\n' 'import os, sys' 'fd = os.open(sys.argv[1], os.O_WRONLY)' \
    'for _ in range(7): os.fsync(fd)' 'for _ in range(3): os.fdatasync(fd)' >"$mf_dir/syncs.py"
  for fs in ext4 xfs; do mkdir -p "$mf_cg_root/ezio_metrics_fs_$fs"; done
  mkdir -p $mf_xfs_dir
  # xfsprogs 6.1 refuses a file system under 300 MB.
  check "an xfs loop device on the guest's disk" eval "fallocate -l 320M $mf_xfs_img &&
    mkfs.xfs -q -f $mf_xfs_img && mount -o loop $mf_xfs_img $mf_xfs_dir"
}

mf_fs_teardown() {
  local fs
  umount $mf_xfs_dir
  rm -f $mf_xfs_img
  for fs in ext4 xfs; do rmdir "$mf_cg_root/ezio_metrics_fs_$fs"; done
}

mf_fs_workload() {  # mf_fs_workload FSTYPE FILE
  rm -f "$2"
  check "$1: writes and syncs ran" mf_in_cgroup "ezio_metrics_fs_$1" \
    "dd if=/dev/zero of=$2 bs=4096 count=1000 status=none && exec python3 $mf_dir/syncs.py $2"
  sync
  echo 3 >/proc/sys/vm/drop_caches
  check "$1: reads ran" mf_in_cgroup "ezio_metrics_fs_$1" \
    "dd if=$2 of=/dev/null bs=4096 count=1000 status=none"
}

mf_fs_check() {  # mf_fs_check MODE FSTYPE SERIES OP EXPECTED
  local got
  got=$(mf_value "$3" "$4" "ezio_metrics_fs_$2" "$2")
  check "$1: $2 $3 $4 = $5 ($got)" [ "$got" = "$5" ]
}

mf_fs_checks() {  # mf_fs_checks MODE: the workload on each file system, a scrape, the checks
  local mode=$1 fs reads
  mf_fs_workload ext4 /mnt/disk/ezio-metrics-fs
  mf_fs_workload xfs $mf_xfs_dir/ezio-metrics-fs
  limit curl -sf "http://127.0.0.1:$mf_port/metrics" >"$mf_dir/scrape"
  for fs in ext4 xfs; do
    check "the metrics say $fs is heard by $mode" \
      grep -qx "eziotrace_fs_hook{fstype=\"$fs\",mode=\"$mode\"} 1" "$mf_dir/scrape"
    # Tracepoints: ext4 counts each page written (4 KiB each here) and has no read; xfs each call.
    reads=1000
    [ "$mode/$fs" = tracepoint/ext4 ] && reads=0
    mf_fs_check "$mode" $fs eziotrace_fs_calls_total write 1000
    mf_fs_check "$mode" $fs eziotrace_fs_bytes_total write 4096000
    mf_fs_check "$mode" $fs eziotrace_fs_calls_total fsync 10
    mf_fs_check "$mode" $fs eziotrace_fs_calls_total read $reads
    mf_fs_check "$mode" $fs eziotrace_fs_bytes_total read $((reads * 4096))
  done
  if [ "$mode" = fentry ]; then
    # Every operation timed: as many in each histogram as were counted.
    for fs in ext4 xfs; do
      for op in read write fsync; do
        mf_fs_check "$mode" $fs eziotrace_fs_latency_seconds_count $op \
          "$(mf_value eziotrace_fs_calls_total $op ezio_metrics_fs_$fs $fs)"
      done
    done
  fi
  # ext4's fsync pair is timed on the tracepoints too.
  mf_fs_check "$mode" ext4 eziotrace_fs_latency_seconds_count fsync 10
  rm -f /mnt/disk/ezio-metrics-fs $mf_xfs_dir/ezio-metrics-fs
}
