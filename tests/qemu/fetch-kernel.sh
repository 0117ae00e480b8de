#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Makes sure everything run-in-vm.sh needs is on this machine: qemu-system-x86_64, a static busybox,
# and Debian's 6.1 kernel (vmlinuz + its module tree) extracted into a cache directory. Never installs
# that kernel on the host. Idempotent: once the cache is complete, a second run returns at once.
#
# Prints the cache directory of the kernel on stdout (it holds kernel.env, vmlinuz, lib/modules/<ver>).
#
#   EZIO_QEMU_CACHE       cache root (default /var/cache/eziotrace-qemu)
#   EZIO_QEMU_KERNEL_PKG  exact package to use, e.g. linux-image-6.1.0-56-amd64 (default: the one
#                         Debian's linux-image-amd64 depends on, else the newest 6.1 one apt knows)
set -euo pipefail

cache_root=${EZIO_QEMU_CACHE:-/var/cache/eziotrace-qemu}
want_pkg=${EZIO_QEMU_KERNEL_PKG:-}
apt_timeout=600

die() { echo "fetch-kernel.sh: error: $*" >&2; exit 1; }
log() { echo "fetch-kernel.sh: $*" >&2; }
locked=0
take_lock() {  # one installer/fetcher at a time (ctest -j may start several harnesses at once)
  [ $locked -eq 1 ] && return 0
  mkdir -p "$cache_root"
  exec 9>"$cache_root/.lock"
  flock -w 900 9 || die "timed out waiting for another fetch-kernel.sh ($cache_root/.lock)"
  locked=1
}
apt_opts=(-y -qq --no-install-recommends -o DPkg::Lock::Timeout=300)

# --- host tools ---------------------------------------------------------------------------------
need_pkgs=()
command -v qemu-system-x86_64 >/dev/null || need_pkgs+=(qemu-system-x86)
case "$(/bin/busybox --list 2>/dev/null || true)" in *cpio*) ;; *) need_pkgs+=(busybox-static) ;; esac
command -v mkfs.ext4 >/dev/null && command -v debugfs >/dev/null || need_pkgs+=(e2fsprogs)
command -v objcopy >/dev/null || need_pkgs+=(binutils)
if [ ${#need_pkgs[@]} -gt 0 ]; then
  [ "$(id -u)" -eq 0 ] || die "missing ${need_pkgs[*]}; installing them needs root"
  take_lock
  log "installing ${need_pkgs[*]}"
  export DEBIAN_FRONTEND=noninteractive
  timeout "$apt_timeout" apt-get install "${apt_opts[@]}" "${need_pkgs[@]}" >/dev/null 2>&1 ||
    { timeout "$apt_timeout" apt-get update -qq &&
      timeout "$apt_timeout" apt-get install "${apt_opts[@]}" "${need_pkgs[@]}" >/dev/null; } ||
    die "apt-get install ${need_pkgs[*]} failed"
fi
# busybox-static puts a static binary at /bin/busybox; a dynamic one would not run in the initramfs.
case "$(ldd /bin/busybox 2>&1 || true)" in *'not a dynamic executable'*) ;; *)
  die "/bin/busybox is not statically linked (install busybox-static)" ;; esac

# --- kernel: already cached? --------------------------------------------------------------------
cached_dir() {  # prints the cache dir of a complete kernel, the wanted one if named, else any 6.1
  local d
  for d in "$cache_root"/linux-image-6.1.0-*-amd64; do
    [ -f "$d/kernel.env" ] || continue
    if [ -z "$want_pkg" ] || [ "$(basename "$d")" = "$want_pkg" ]; then echo "$d"; fi
  done | sort -V | tail -n 1
}
dir=$(cached_dir)
if [ -n "$dir" ]; then echo "$dir"; exit 0; fi

# --- kernel: choose the package -----------------------------------------------------------------
[ "$(id -u)" -eq 0 ] || die "the Debian 6.1 kernel is not cached in $cache_root; fetching it needs root"
take_lock   # then look again: a concurrent run may have fetched it meanwhile
dir=$(cached_dir)
if [ -n "$dir" ]; then echo "$dir"; exit 0; fi
pick_pkg() {
  if [ -n "$want_pkg" ]; then
    apt-cache show "$want_pkg" >/dev/null 2>&1 && echo "$want_pkg"
    return 0
  fi
  local p
  p=$(apt-cache depends linux-image-amd64 2>/dev/null |
      sed -n 's/^ *Depends: \(linux-image-6\.1\.0-[0-9]*-amd64\)$/\1/p' | head -n 1)
  [ -n "$p" ] || p=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' 2>/dev/null |
                     cut -d' ' -f1 | sort -V | tail -n 1)
  echo "$p"
}
pkg=$(pick_pkg)
if [ -z "$pkg" ]; then
  log "no Debian 6.1 kernel package known to apt; running apt-get update"
  timeout "$apt_timeout" apt-get update -qq || die "apt-get update failed"
  pkg=$(pick_pkg)
fi
[ -n "$pkg" ] || die "apt knows no package ${want_pkg:-linux-image-6.1.0-*-amd64} (is Debian 12's archive in sources.list?)"

# --- kernel: download and extract into a temporary dir, then move into place (atomic) -----------
tmp=$(mktemp -d "$cache_root/.fetch.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
log "downloading $pkg"
# apt-get download writes into the current dir; _apt cannot write to a root-only mktemp dir, so
# apt falls back to downloading as root (it says so with a harmless warning, filtered out here).
(cd "$tmp" && timeout "$apt_timeout" apt-get download -qq "$pkg" 2>&1 | grep -v 'unsandboxed' >&2 || true)
deb=$(ls "$tmp"/*.deb 2>/dev/null | head -n 1 || true)
[ -n "$deb" ] || die "apt-get download $pkg produced no .deb"
log "extracting $(basename "$deb")"
mkdir "$tmp/root"
dpkg-deb -x "$deb" "$tmp/root"
kver=$(ls "$tmp/root/lib/modules" | head -n 1)
[ -n "$kver" ] && [ -f "$tmp/root/boot/vmlinuz-$kver" ] || die "$deb holds no vmlinuz/lib/modules"

dest="$cache_root/$pkg"
rm -rf "$dest"
mkdir "$dest"
mv "$tmp/root/boot/vmlinuz-$kver" "$dest/vmlinuz"
mv "$tmp/root/boot/config-$kver" "$dest/config"
mkdir -p "$dest/lib/modules"
mv "$tmp/root/lib/modules/$kver" "$dest/lib/modules/$kver"
printf 'EZIO_KPKG=%s\nEZIO_KVER=%s\n' "$pkg" "$kver" > "$dest/kernel.env.tmp"
mv "$dest/kernel.env.tmp" "$dest/kernel.env"   # written last: marks the cache entry complete
log "cached $pkg (kernel $kver) in $dest"
echo "$dest"
