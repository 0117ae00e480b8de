# SPDX-License-Identifier: GPL-2.0-only
# Guest script of ctest's qemu_exactness (bash, as root, inside `run-in-vm.sh --systemd`: the
# host's own Debian root, so losetup, mkfs.xfs, mkfs.btrfs and python3-otf2 are there, on
# Debian's 6.1 kernel, which has fentry and kprobes). Runs every row of the exactness test
# (tests/bpf/exactness) on ext4, xfs and btrfs in one go, in each of the three hook modes: fentry
# (the first choice), kprobe/kretprobe (fentry denied) and tracepoints (both denied, through
# EZIOTRACE_DENY_HOOKS). EZIO_EXACTNESS_HOOKS makes each row fail unless the VFS and the file
# system were recorded with the hook kind asked: a silent fallback cannot pass.
# From run-in-vm.sh --env: EZIO_EXACTNESS_TEST (the test binary, in the host's build tree, seen
# over 9p), EZIO_SCRATCH (the test's scratch dir, given a place on the guest's disk here).
set -u
failed=0
ok() { echo "ok   - $*"; }
bad() {
  echo "FAIL - $*"
  failed=1
}

# A soft lockup's report on the console: its stack traces (default level) and every CPU's.
echo 5 > /proc/sys/kernel/printk
echo 1 > /proc/sys/kernel/softlockup_all_cpu_backtrace

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

# Every row, every mode, the three file systems: one run of the test binary, one file system each.
modes=fentry,kprobe,tracepoint
export EZIO_EXACTNESS_HOOKS=$modes
unset EZIO_EXACTNESS_ROWS EZIOTRACE_DENY_HOOKS
start=$(cut -d' ' -f1 /proc/uptime)
# Its output streamed to the console as it goes: a run cut short by the VM's timeout still shows
# how far it got.
timeout --kill-after=5 1500 "$EZIO_EXACTNESS_TEST" 2>&1 | tee "$EZIO_DISK/exactness.out" |
  sed -u 's/^/  | /'
rc=${PIPESTATUS[0]}
end=$(cut -d' ' -f1 /proc/uptime)
out=$(cat "$EZIO_DISK/exactness.out")
echo "the exactness test took $(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }') s in the guest"
if [ $rc -eq 0 ]; then ok "every row exact"; else bad "the exactness test: exit $rc"; fi
# CI keeps the head and the tail of a long log: each failed expectation printed again here, at
# the end, with the row, mode and file system its SCOPED_TRACE lines name.
if grep -q ': Failure$' <<< "$out"; then
  echo "the failed expectations again (at most 120 lines):"
  awk '/: Failure$/ { keep = 1 } /^\[ *(OK|FAILED|RUN) *\]/ { keep = 0 } keep' <<< "$out" |
    head -n 120 | sed 's/^/  ! /'
fi
grep -q '^\[  PASSED  \] 3 tests\.$' <<< "$out" || bad "3 tests passed (ext4, xfs, btrfs)"
# Every row ran (the tables of tests/bpf/exactness/shapes.cpp), per file system and mode.
nwrites=15 nreads=13
for fs in ext4 xfs btrfs; do
  for mode in ${modes//,/ }; do
    grep -q "^$nwrites write rows, $nreads read rows on $fs with $mode\$" <<< "$out" ||
      bad "$nwrites write rows and $nreads read rows ran on $fs with $mode"
  done
done
umount "$EZIO_SCRATCH"
exit $failed
