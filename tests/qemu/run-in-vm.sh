#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Boots Debian's 6.1 kernel in qemu (TCG, no KVM) with a busybox initramfs, runs a guest script in it
# and exits with that script's exit status. See docs/qemu-test.md.
#
# usage: run-in-vm.sh [options] BINARIES GUEST_SCRIPT
#   BINARIES      an executable, or a directory whose top-level executables are all taken; each is
#                 copied to /ezio/bin (on the guest's PATH) with every shared library ldd lists.
#                 Pass - for none.
#   GUEST_SCRIPT  run by busybox sh inside the VM, cwd = the ext4 disk; its stdout+stderr is
#                 printed here. It sees EZIO_BIN, EZIO_FILES, EZIO_DISK (/mnt/disk, ext4 on
#                 EZIO_DISK_DEV=/dev/vda) and EZIO_OUT (a directory on that disk, see --out).
# options:
#   --bin FILE          one more executable for /ezio/bin, with its libraries; repeatable
#   --file SRC[:DEST]   also put SRC into the initramfs (default DEST: /ezio/files/<name>); repeatable
#   --module NAME       also load kernel module NAME (and its dependencies); repeatable
#   --out DIR           after the run, copy the guest's $EZIO_OUT to the host's DIR
#   --disk-mb N         size of the virtio ext4 disk (default 256)
#   --mem MB, --smp N   guest memory (default 1024) and CPUs (default 2)
#   --timeout S         hard limit on the whole VM run (default 300)
#   --keep DIR          keep the work files (initramfs, disk image, console.log) in DIR
#   --env NAME=VALUE    export NAME=VALUE to the guest script; repeatable
#   --systemd           boot this host's own root file system (virtio-9p, read-only, a tmpfs
#                       overlay on top) with its systemd as PID 1, to ezio-test.target, whose
#                       ezio-test.service runs the guest script with bash (tests/qemu/systemd/)
# exit status: the guest script's; 124 if the VM hit the timeout; 125 if the harness itself failed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
prog=run-in-vm.sh
die() { echo "$prog: error: $*" >&2; exit 125; }

bins=() files=() modules=() envs=() out_dir='' disk_mb=256 mem=1024 smp=2 vm_timeout=300 keep=''
systemd=0
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bins+=("$2"); shift 2 ;;
    --file) files+=("$2"); shift 2 ;;
    --module) modules+=("$2"); shift 2 ;;
    --out) out_dir=$2; shift 2 ;;
    --disk-mb) disk_mb=$2; shift 2 ;;
    --mem) mem=$2; shift 2 ;;
    --smp) smp=$2; shift 2 ;;
    --timeout) vm_timeout=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --env) envs+=("$2"); shift 2 ;;
    --systemd) systemd=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    -?*) die "unknown option $1 (see --help)" ;;
    *) break ;;
  esac
done
[ $# -eq 2 ] || die "usage: $prog [options] BINARIES GUEST_SCRIPT (see --help)"
binaries=$1 guest_script=$2
[ -f "$guest_script" ] || die "guest script $guest_script not found"
[ "$binaries" = - ] || [ -e "$binaries" ] || die "$binaries not found"

# Kernel, qemu and busybox: fetched once, then cached (fails loudly when they cannot be had).
kdir=$(bash "$here/fetch-kernel.sh") || die "cannot obtain qemu, busybox or the Debian 6.1 kernel (see above)"
# shellcheck source=/dev/null
. "$kdir/kernel.env"
moddir=$kdir/lib/modules/$EZIO_KVER

if [ -n "$keep" ]; then
  rm -rf "$keep"; mkdir -p "$keep"; work=$(cd "$keep" && pwd)
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/ezio-vm.XXXXXX")
  trap 'rm -rf "$work"' EXIT
fi
root=$work/initramfs
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,ezio/bin,ezio/files,ezio/modules}

# --- binaries and their shared libraries --------------------------------------------------------
add_libs() {  # copies every library ldd lists for $1 (and the dynamic loader) to the same path
  local out lib
  out=$(ldd "$1" 2>&1) || return 0            # static binary or not an ELF: nothing to add
  if grep -q 'not found' <<<"$out"; then die "$1 needs libraries that are missing here:
$(grep 'not found' <<<"$out")"; fi
  for lib in $(sed -n 's/.*=> \(\/[^ ]*\) (0x.*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (0x.*/\1/p' <<<"$out"); do
    [ -e "$root$lib" ] && continue
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
}
add_bin() {
  local dst=$root/ezio/bin/$(basename "$1")
  cp -L "$1" "$dst"
  # --systemd copies /ezio once more, onto the tmpfs overlay: debug info, most of a debug build's
  # size (eziotrace: 141 MB, 9 MB without), would take a third of the guest's memory twice.
  [ $systemd -eq 0 ] || strip --strip-debug "$dst" 2>/dev/null || true
  chmod 755 "$dst"
  add_libs "$1"
}
if [ "$binaries" != - ]; then
  if [ -d "$binaries" ]; then
    found=0
    for f in "$binaries"/*; do
      [ -f "$f" ] && [ -x "$f" ] || continue
      add_bin "$f"; found=1
    done
    [ $found -eq 1 ] || die "no executable file in directory $binaries"
  else
    add_bin "$binaries"
  fi
fi
for f in ${bins[@]+"${bins[@]}"}; do
  [ -f "$f" ] || die "--bin $f not found"
  add_bin "$f"
done
for spec in ${files[@]+"${files[@]}"}; do
  src=${spec%%:*}; dest=${spec#*:}
  [ "$dest" != "$spec" ] || dest=/ezio/files/$(basename "$src")
  [ -e "$src" ] || die "--file $src not found"
  mkdir -p "$root$(dirname "$dest")"
  cp -rL "$src" "$root$dest"
done
cp /bin/busybox "$root/bin/busybox"
cp "$guest_script" "$root/ezio/guest.sh"
cp "$here/guest-run.sh" "$root/ezio/guest-run.sh"
# The guest script's environment beside EZIO_*: sourced before it runs (values single-quoted).
: > "$root/ezio/env"
for e in ${envs[@]+"${envs[@]}"}; do
  name=${e%%=*}
  [[ "$name" =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] && [ "$name" != "$e" ] || die "--env $e is not NAME=VALUE"
  value=${e#*=}
  printf "export %s='%s'\n" "$name" "${value//\'/\'\\\'\'}" >> "$root/ezio/env"
done
if [ $systemd -eq 1 ]; then
  # The guest's root is this host's own /: its systemd must be there (fails, never skips).
  [ -x /lib/systemd/systemd ] || die "--systemd: no systemd on this host (/lib/systemd/systemd)"
  cp "$here/guest-init-systemd.sh" "$root/init"
  cp -r "$here/systemd" "$root/ezio/systemd"
else
  cp "$here/guest-init.sh" "$root/init"
fi
chmod 755 "$root/init" "$root/ezio/guest.sh"

# --- kernel modules, dependencies first ---------------------------------------------------------
# crc32c_generic: ext4's checksums ask for "crc32c" through the crypto API (a softdep, not a depends).
want=(virtio_pci virtio_blk crc32c_generic ext4 loop ${modules[@]+"${modules[@]}"})
# --systemd: the host's root over virtio-9p (9p needs 9pnet and netfs), a tmpfs overlay on it.
[ $systemd -eq 0 ] || want+=(9pnet_virtio 9p overlay)
# shellcheck source=kmodules.sh
. "$here/kmodules.sh"
kmod_init "$moddir" "$root"
for m in "${want[@]}"; do kmod_add "$m"; done

# --- initramfs and disk -------------------------------------------------------------------------
(cd "$root" && find . | /bin/busybox cpio -o -H newc 2>/dev/null | gzip -1) > "$work/initrd.gz"
# Made afresh for every boot: a guest run again after a soft lockup must not find the first
# run's files (an existing archive makes `eziotrace record` refuse, as it should).
make_disk() {
  rm -f "$work/disk.img"
  truncate -s "${disk_mb}M" "$work/disk.img"
  mkfs.ext4 -q -F -L ezio-disk "$work/disk.img" || die "mkfs.ext4 of the disk image failed"
}

# --- boot ---------------------------------------------------------------------------------------
# TCG only: /dev/kvm exists on these machines but KVM fails on an MSR. -no-reboot turns the panic
# that follows an init that dies (panic=-1) into a qemu exit, so a broken guest cannot spin forever.
console=$work/console.log
# no_timer_check: on a loaded host, TCG's timer ticks can miss the kernel's IO-APIC timer check
# and the boot panics ("IO-APIC + timer doesn't work!").
append="console=ttyS0 quiet panic=-1 oops=panic no_timer_check"
qemu_extra=()
if [ $systemd -eq 1 ]; then
  # multidevs=remap: / spans several host file systems; their inode numbers must not collide.
  qemu_extra=(-virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap")
  # Status lines only for failures: the console is where the guest script's output goes.
  append+=" systemd.unit=ezio-test.target systemd.show_status=error"
fi
# A TCG guest now and then hangs before its init runs (no console output at all, both vCPUs busy):
# such a boot is retried once after boot_limit seconds instead of waiting for the whole timeout.
boot_limit=120
boot_vm() {  # qemu's status; 200: the guest had not begun after boot_limit; 201: soft lockup
  : > "$console"
  make_disk
  timeout --kill-after=10 "$vm_timeout" qemu-system-x86_64 \
    -machine q35 -accel tcg -cpu max -smp "$smp" -m "$mem" \
    -display none -monitor none -serial "file:$console" -nic none -no-reboot \
    -kernel "$kdir/vmlinuz" -initrd "$work/initrd.gz" \
    -append "$append" ${qemu_extra[@]+"${qemu_extra[@]}"} \
    -drive "file=$work/disk.img,if=virtio,format=raw" </dev/null >"$work/qemu.out" 2>&1 &
  local pid=$! waited=0
  # Until the end, also watch for the soft lockup of Debian's 6.1 kernel with kprobes
  # (docs/qemu-test.md, Known issue), which would otherwise hold the VM until the timeout.
  while kill -0 "$pid" 2>/dev/null; do
    local why=0
    if grep -q 'BUG: soft lockup' "$console" 2>/dev/null; then
      why=201
    elif [ "$waited" -ge "$boot_limit" ] && ! grep -q '^EZIO-GUEST-BEGIN' "$console"; then
      why=200
    fi
    if [ "$why" -ne 0 ]; then
      sleep 5  # the rest of the lockup report (its stack traces, when the guest asks for them)
      kill "$pid"
      wait "$pid"
      return "$why"
    fi
    sleep 1
    waited=$((waited + 1))
  done
  wait "$pid"
}
# A hung boot or a soft lockup is retried, on a fresh disk, up to boot_attempts boots in all: one
# retry may not be enough on a loaded host.
boot_attempts=3
set +e
for attempt in $(seq 1 "$boot_attempts"); do
  boot_vm
  qrc=$?
  [ $qrc -eq 200 ] || [ $qrc -eq 201 ] || break
  if [ $qrc -eq 200 ]; then
    echo "$prog: WARNING: boot $attempt of $boot_attempts: the guest had not begun after" \
      "${boot_limit}s (a hung boot)" >&2
  else
    echo "$prog: WARNING: KNOWN ISSUE: boot $attempt of $boot_attempts: the guest kernel reported" \
      "a soft lockup (docs/qemu-test.md):" >&2
    # The report, with the stack traces a guest script that raised the console's log level gets.
    tr -d '\r' < "$console" | sed -n '/BUG: soft lockup/,$p' | head -n 150 >&2
  fi
done
if [ $qrc -eq 200 ] || [ $qrc -eq 201 ]; then
  echo "$prog: error: $boot_attempts boots in a row hung or soft-locked; console tail:" >&2
  tr -d '\r' < "$console" | tail -n 30 >&2
  exit 124
fi
set -e
tr -d '\r' < "$console" > "$console.txt" 2>/dev/null || : > "$console.txt"

if [ $qrc -eq 124 ] || [ $qrc -eq 137 ]; then
  echo "$prog: error: the VM did not finish within ${vm_timeout}s; console tail:" >&2
  tail -n 30 "$console.txt" >&2
  exit 124
fi
[ $qrc -eq 0 ] || { echo "$prog: error: qemu exited with $qrc:" >&2; cat "$work/qemu.out" >&2; exit 125; }
if grep -q '^EZIO-GUEST-SETUP-FAILED' "$console.txt"; then
  echo "$prog: error: the guest could not set up: $(grep -m1 '^EZIO-GUEST-SETUP-FAILED' "$console.txt")" >&2
  tail -n 30 "$console.txt" >&2
  exit 125
fi
if ! grep -q '^EZIO-GUEST-BEGIN$' "$console.txt" || ! grep -q '^EZIO-GUEST-END rc=' "$console.txt"; then
  echo "$prog: error: the guest script's markers are missing from the console; console tail:" >&2
  tail -n 40 "$console.txt" >&2
  exit 125
fi
sed -n '/^EZIO-GUEST-BEGIN$/,/^EZIO-GUEST-END rc=/{/^EZIO-GUEST-/d;p}' "$console.txt"
rc=$(sed -n 's/^EZIO-GUEST-END rc=\([0-9]*\)$/\1/p' "$console.txt" | tail -n 1)

if [ -n "$out_dir" ]; then
  mkdir -p "$out_dir"
  debugfs -R "rdump /out $work" "$work/disk.img" >/dev/null 2>&1 || die "cannot copy /out off the disk image"
  cp -r "$work/out/." "$out_dir/"
fi
exit "${rc:-125}"
