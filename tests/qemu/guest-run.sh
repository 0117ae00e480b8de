# SPDX-License-Identifier: GPL-2.0-only
# Runs the guest script between the markers run-in-vm.sh looks for on the console, with the
# EZIO_* environment, then syncs and unmounts the disk (--out reads its image). Run by both guest
# inits: guest-init.sh (busybox sh, PID 1) and, under --systemd, ezio-test.service (bash); $1 is
# the shell that runs the guest script.
export PATH=/ezio/bin:$PATH
export HOME=/root TMPDIR=/tmp
export EZIO_BIN=/ezio/bin EZIO_FILES=/ezio/files EZIO_DISK=/mnt/disk EZIO_DISK_DEV=/dev/vda
export EZIO_OUT=/mnt/disk/out
. /ezio/env   # run-in-vm.sh --env
cd "$EZIO_DISK" || { echo "EZIO-GUEST-SETUP-FAILED: no $EZIO_DISK"; exit 1; }
echo "EZIO-GUEST-BEGIN"
"$1" /ezio/guest.sh < /dev/null 2>&1
rc=$?
echo "EZIO-GUEST-END rc=$rc"
cd /
sync
umount /mnt/disk || echo "EZIO-GUEST-WARNING: umount /mnt/disk failed"
