#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Configures and builds eziotrace in ./build (CI sets CI=true: warnings become errors).
#   build.sh            everything the installed packages allow (the tests when GoogleTest is there)
#   build.sh main       only what the main job runs: eziotrace, eziotraced, the preload helper, the demo
#   build.sh test       everything, the test suite required
set -euo pipefail
cd "$(dirname "$0")/.."
werror=OFF
[ "${CI:-}" = "true" ] && werror=ON
tests=()
targets=()
case "${1:-all}" in
  all) ;;
  main) targets=(--target eziotrace eziotrace_preload demo_io) ;;
  test) tests=(-DEZIO_TESTS=ON) ;;
  *) echo "build.sh: unknown set '$1' (all, main or test)" >&2; exit 2 ;;
esac
cmake -S . -B build -G Ninja -DEZIO_WERROR=${werror} "${tests[@]}" >/dev/null
cmake --build build -j"$(nproc)" "${targets[@]}"
