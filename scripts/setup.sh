#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Installs the Debian 12 packages eziotrace needs, only those missing. Quiet when nothing is missing.
#   setup.sh        what the main job needs: build eziotrace, record, analyse (scripts/demo.sh)
#   setup.sh test   that, plus what the test suite needs (scripts/test.sh)
set -euo pipefail

main_job=(
  build-essential cmake ninja-build pkg-config clang llvm ccache
  libbpf-dev bpftool libelf-dev zlib1g-dev
  libotf2-trace-dev otf2-tools eztrace libeztrace-dev
  libfmt-dev libspdlog-dev libcli11-dev nlohmann-json3-dev
)
test_suite=(
  clang-format python3-otf2 vite mpich libmpich-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  qemu-system-x86 busybox-static bc
  fio strace xvfb x11-apps imagemagick librsvg2-bin chromium xfsprogs btrfs-progs e2fsprogs util-linux procps git
  man-db bash-completion  # tests/e2e/docs: man -l, complete -p
  systemd passwd  # tests/e2e/service: systemd-analyze verify, systemd-socket-activate; useradd/groupadd
  # The HPC stack's top (docs/mpiio.md, docs/hdf5.md): both MPIs, HDF5 in its three flavours, programs
  # nobody here wrote (h5py with mpi4py, nccopy).
  libopenmpi-dev openmpi-bin libhdf5-dev libhdf5-mpich-dev libhdf5-openmpi-dev hdf5-tools
  python3-h5py-mpi python3-mpi4py netcdf-bin
  # Many nodes and always-on metrics (docs/cluster.md, docs/metrics.md): the cluster's own engine.
  slurm-wlm munge libslurm-dev prometheus
  bpftrace  # bench/metrics: the aggregate script our peers measure with, beside eziotraced --metrics
)

case "${1:-main}" in
  main) packages=("${main_job[@]}") ;;
  test) packages=("${main_job[@]}" "${test_suite[@]}") ;;
  *) echo "setup.sh: unknown set '$1' (main or test)" >&2; exit 2 ;;
esac

if [ "$(id -u)" -ne 0 ]; then
  echo "setup.sh: installing packages needs root (run it with sudo)" >&2
  exit 1
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
