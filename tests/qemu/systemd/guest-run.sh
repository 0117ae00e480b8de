# Run by ezio-test.service (bash, as root, systemd being PID 1): the guest script between the
# markers run-in-vm.sh looks for on the console, as guest-init.sh does without systemd.
export PATH=/ezio/bin:$PATH
export HOME=/root TMPDIR=/tmp
export EZIO_BIN=/ezio/bin EZIO_FILES=/ezio/files EZIO_DISK=/mnt/disk EZIO_DISK_DEV=/dev/vda
export EZIO_OUT=/mnt/disk/out
. /ezio/env   # run-in-vm.sh --env
cd "$EZIO_DISK" || { echo "EZIO-GUEST-SETUP-FAILED: no $EZIO_DISK"; exit 1; }
echo "EZIO-GUEST-BEGIN"
bash /ezio/guest.sh < /dev/null 2>&1
rc=$?
echo "EZIO-GUEST-END rc=$rc"
# poweroff-immediate follows (ezio-test.service): nothing is unmounted for us, and --out reads
# the disk image.
cd /
sync
umount /mnt/disk || echo "EZIO-GUEST-WARNING: umount /mnt/disk failed"
