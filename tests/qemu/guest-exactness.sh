# SPDX-License-Identifier: GPL-2.0-only
# Guest script of ctest's qemu_exactness (bash, as root, inside `run-in-vm.sh --systemd`: the
# host's own Debian root, so losetup, mkfs.xfs, mkfs.btrfs and python3-otf2 are there, on
# Debian's 6.1 kernel, which has fentry and kprobes). Runs the exactness test
# (tests/bpf/exactness) on ext4, xfs and btrfs (fewer rows) twice: with fentry (the first choice)
# and with fentry denied (EZIOTRACE_DENY_HOOKS), so kprobe/kretprobe. EZIO_EXACTNESS_HOOKS makes
# each row fail unless the VFS and the file system were recorded with the hook kind asked: a
# silent fallback to tracepoints cannot pass.
# From run-in-vm.sh --env: EZIO_EXACTNESS_TEST (the test binary, in the host's build tree, seen
# over 9p), EZIO_SCRATCH (the test's scratch dir, given a place on the guest's disk here).
set -u
failed=0
ok() { echo "ok   - $*"; }
bad() {
  echo "FAIL - $*"
  failed=1
}

# Preconditions: each missing one fails the test, never skips it.
kver=$(uname -r)
case "$kver" in
  6.1.*) ok "kernel is 6.1 ($kver)" ;;
  *) bad "kernel is 6.1 (it is $kver)"; exit 1 ;;
esac
for tool in losetup mkfs.xfs mkfs.ext4 mkfs.btrfs fallocate; do
  command -v "$tool" >/dev/null || { bad "$tool on the host's root"; exit 1; }
done
python3 -c 'import otf2' || { bad "python3-otf2 on the host's root"; exit 1; }
[ -x "$EZIO_EXACTNESS_TEST" ] || { bad "test binary $EZIO_EXACTNESS_TEST"; exit 1; }
for fs in xfs btrfs; do
  grep -qw $fs /proc/filesystems || { bad "$fs in /proc/filesystems (--module $fs)"; exit 1; }
done
ok "losetup, mkfs.xfs, mkfs.btrfs, python3-otf2, xfs, btrfs and the test binary are there"

# The scratch dir is in the build tree, the overlay's tmpfs in the guest: the loop images go on
# the guest's disk instead, off the guest's memory.
mkdir -p "$EZIO_DISK/scratch" "$EZIO_SCRATCH" && mount --bind "$EZIO_DISK/scratch" "$EZIO_SCRATCH" ||
  { bad "bind-mount the scratch dir"; exit 1; }

# The rows: the shapes HPC formats and the issue's report write (aligned and unaligned 512 KiB,
# 1 B, pwritev), O_DIRECT, buffered and direct reads, all with fentry. With kprobes the programs
# are the same and only their attach points differ: one row per hook the kprobe pass attaches (the
# buffered and direct write paths, the read path), to keep the guest's time in CI down.
fentry_writes=1B,1B-unaligned,512KiB-x10,512KiB-x10-unaligned,pwritev-5-vectors-x2,odirect-512KiB-x4
fentry_reads=read-512KiB-x10-unaligned,read-odirect-512KiB-x4
kprobe_writes=512KiB-x10-unaligned,odirect-512KiB-x4
kprobe_reads=read-512KiB-x10-unaligned
# btrfs (the third file system of the test, /2), in the fewest recordings that cover its three
# kinds of call: the buffered write and the read with fentry, O_DIRECT (through btrfs's own
# direct I/O, which dirties pages when it checksums) with kprobes; its write and read test each
# make a file system, so the kprobe pass runs only the write test.
fentry_btrfs=512KiB-x10-unaligned,read-512KiB-x10-unaligned
kprobe_btrfs=odirect-512KiB-x4

# Runs the test binary with `filter`, prints its output and how long it took, fails unless it
# passed `tests` tests; the output is left in $out.
run_test() {
  local mode=$1 filter=$2 tests=$3 start end rc
  start=$(cut -d' ' -f1 /proc/uptime)
  out=$(timeout --kill-after=5 1200 "$EZIO_EXACTNESS_TEST" "--gtest_filter=$filter" 2>&1)
  rc=$?
  end=$(cut -d' ' -f1 /proc/uptime)
  echo "$out" | sed "s/^/  $mode | /"
  echo "$mode: $filter took $(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }') s in the guest"
  if [ $rc -eq 0 ]; then ok "$mode: $filter: every row exact"; else bad "$mode: $filter: exit $rc"; fi
  grep -q "^\[  PASSED  \] $tests tests\?\.\?\$" <<< "$out" ||
    bad "$mode: $tests tests passed ($filter)"
}

for mode in fentry kprobe; do
  writes_var=${mode}_writes reads_var=${mode}_reads
  writes=${!writes_var} reads=${!reads_var}
  export EZIO_EXACTNESS_ROWS=$writes,$reads
  nwrites=$(tr ',' '\n' <<< "$writes" | wc -l) nreads=$(tr ',' '\n' <<< "$reads" | wc -l)
  if [ $mode = kprobe ]; then export EZIOTRACE_DENY_HOOKS=fentry; else unset EZIOTRACE_DENY_HOOKS; fi
  export EZIO_EXACTNESS_HOOKS=$mode
  run_test $mode 'FileSystems/Exactness.*/0:FileSystems/Exactness.*/1' 4
  for fs in ext4 xfs; do
    grep -q "^$nwrites write rows on $fs\$" <<< "$out" || bad "$mode: $nwrites write rows ran on $fs"
    grep -q "^$nreads read rows on $fs\$" <<< "$out" || bad "$mode: $nreads read rows ran on $fs"
  done
  btrfs_var=${mode}_btrfs
  export EZIO_EXACTNESS_ROWS=${!btrfs_var}
  if [ $mode = kprobe ]; then
    run_test $mode 'FileSystems/Exactness.Writes/2' 1
    grep -q '^1 write rows on btrfs$' <<< "$out" || bad "$mode: 1 write row ran on btrfs"
  else
    run_test $mode 'FileSystems/Exactness.*/2' 2
    grep -q '^1 write rows on btrfs$' <<< "$out" || bad "$mode: 1 write row ran on btrfs"
    grep -q '^1 read rows on btrfs$' <<< "$out" || bad "$mode: 1 read row ran on btrfs"
  fi
done
umount "$EZIO_SCRATCH"
exit $failed
