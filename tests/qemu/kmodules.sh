# SPDX-License-Identifier: GPL-2.0-only
# Kernel modules for a guest's initramfs, dependencies first. Sourced by run-in-vm.sh and
# tests/cluster/run.sh, which define die (message, exit 125).
#
#   kmod_init MODDIR ROOT   index the .ko files of MODDIR (lib/modules/<ver>); ROOT is the initramfs
#   kmod_add NAME           copy NAME and its dependencies (decompressed) to ROOT/ezio/modules and
#                           append them to ROOT/ezio/modules.list in load order (built-ins skipped)
declare -A kmod_path=() kmod_loaded=()
kmod_dir='' kmod_root=''
kmod_init() {
  local f n
  kmod_dir=$1 kmod_root=$2
  mkdir -p "$kmod_root/ezio/modules"
  : > "$kmod_root/ezio/modules.list"
  while IFS= read -r f; do
    n=$(basename "$f"); n=${n%%.ko*}; kmod_path[${n//-/_}]=$f
  done < <(find "$kmod_dir/kernel" -name '*.ko*')
}
kmod_add() {
  local name=${1//-/_} src dst deps d
  [ -z "${kmod_loaded[$name]:-}" ] || return 0
  kmod_loaded[$name]=1
  src=${kmod_path[$name]:-}
  if [ -z "$src" ]; then
    grep -q "/${name//_/[-_]}\.ko" "$kmod_dir/modules.builtin" && return 0
    die "kernel module $name is neither built into $(basename "$kmod_dir") nor shipped as a .ko"
  fi
  dst=$kmod_root/ezio/modules/$name.ko
  case "$src" in
    *.ko) cp "$src" "$dst" ;;
    *.ko.xz) xz -dc "$src" > "$dst" ;;
    *.ko.zst) zstd -qdc "$src" > "$dst" ;;
    *) die "unknown module format $src" ;;
  esac
  # The .deb ships no modules.dep: each module's .modinfo names what it needs.
  deps=$(objcopy -O binary --only-section=.modinfo "$dst" /dev/stdout | tr '\0' '\n' |
         sed -n 's/^depends=//p' | tr ',' ' ')
  for d in $deps; do kmod_add "$d"; done
  echo "/ezio/modules/$name.ko" >> "$kmod_root/ezio/modules.list"
}
