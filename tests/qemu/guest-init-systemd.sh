#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-only
# /init of the initramfs that `run-in-vm.sh --systemd` builds. Makes the guest's root out of the
# host's own / (virtio-9p, read-only) with a tmpfs overlay on top (so /etc and /var are writable
# and every write is lost at power-off), adds the test's units, and hands PID 1 to the host's
# systemd, which boots to ezio-test.target (kernel command line): ezio-test.service runs the guest
# script between the console markers that run-in-vm.sh looks for, then powers off.
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin

fail() {  # setup failed: say why where run-in-vm.sh reports it, then stop the VM
  echo "EZIO-GUEST-SETUP-FAILED: $*"
  echo o > /proc/sysrq-trigger
  poweroff -f
}

mkdir -p /proc /sys /dev /lower /rw /newroot
mount -t proc proc /proc || fail "mount proc"
mount -t sysfs sysfs /sys || fail "mount sysfs"
mount -t devtmpfs devtmpfs /dev || fail "mount devtmpfs"
echo 1 > /proc/sys/kernel/printk   # keep kernel messages off the console the guest script writes to

while read -r ko; do
  [ -n "$ko" ] || continue
  insmod "$ko" || fail "insmod $ko"
done < /ezio/modules.list

# cache=loose: the files a test reads do not change under it (the host's accounts do: below), and
# every uncached lookup is a round trip to qemu's 9p server.
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=262144 hostroot /lower ||
  fail "mount -t 9p hostroot (the host's / exported by qemu -virtfs)"
mount -t tmpfs -o mode=755 tmpfs /rw || fail "mount tmpfs /rw"
mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work overlay /newroot ||
  fail "mount -t overlay (the host's / under a tmpfs)"
[ -x /newroot/lib/systemd/systemd ] || fail "no /lib/systemd/systemd on the host's root"
# An /etc of its own, a copy of the host's taken now: the host's own tests add and remove users and
# groups while a guest runs (scripts/test.sh runs the guests beside them), and an overlay whose
# lower /etc changes under it is undefined: a file renamed under cache=loose, the host's account
# locks showing through, once groupadd finding no gshadow.lock it had just made (all in CI). The
# host's locks are not copied: no process of the guest holds them. A file the host removes during
# the copy may be missed (cp's error ignored); the account files are checked.
mount -t tmpfs -o mode=755 tmpfs /newroot/etc || fail "mount tmpfs /etc"
cp -a /lower/etc/. /newroot/etc/ 2>/dev/null
rm -f /newroot/etc/*.lock
for f in passwd group shadow gshadow; do
  [ -s "/newroot/etc/$f" ] || fail "copy the host's /etc/$f"
done
# A /tmp of its own: the host's would be emptied (whiteout by whiteout) by systemd-tmpfiles.
mount -t tmpfs -o mode=1777 tmpfs /newroot/tmp || fail "mount tmpfs /tmp"

i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -b /dev/vda ] || fail "no /dev/vda (virtio_blk not bound)"
mkdir -p /newroot/mnt/disk
mount -t ext4 /dev/vda /newroot/mnt/disk || fail "mount -t ext4 /dev/vda /mnt/disk"
mkdir -p /newroot/mnt/disk/out

# The test's files, its units, and what this boot must not start (masks, see systemd/masks).
cp -r /ezio /newroot/ezio || fail "copy /ezio to the new root"
unitdir=/newroot/etc/systemd/system
cp /ezio/systemd/ezio-test.target /ezio/systemd/ezio-test.service "$unitdir/" ||
  fail "install the test units"
sed 's/#.*//' /ezio/systemd/masks | while read -r unit; do
  [ -z "$unit" ] || ln -sf /dev/null "$unitdir/$unit"
done
# No generator either (2 s of the boot under TCG): the units they make (fstab's mounts, gettys,
# sysv scripts, postgresql's clusters) are the host's, not the test's.
mkdir -p /newroot/etc/systemd/system-generators
for g in /newroot/lib/systemd/system-generators/* /newroot/usr/lib/systemd/system-generators/*; do
  [ -e "$g" ] && ln -sf /dev/null "/newroot/etc/systemd/system-generators/${g##*/}"
done
echo "EZIO-INIT: switch_root at $(cut -d' ' -f1 /proc/uptime)s"
: > /newroot/etc/fstab   # the host's describes the host's disks
# The host may be a container: systemd takes /.dockerenv for one and then ignores the kernel
# command line (systemd.unit=) and boots as a container's init would.
rm -f /newroot/.dockerenv /newroot/run/.containerenv

umount /proc /sys
mount --move /dev /newroot/dev || fail "move /dev to the new root"
exec switch_root /newroot /lib/systemd/systemd
