#!/usr/bin/env bash
# Configures and builds eziotrace in ./build (CI sets CI=true: warnings become errors).
set -euo pipefail
cd "$(dirname "$0")/.."
werror=OFF
[ "${CI:-}" = "true" ] && werror=ON
cmake -S . -B build -G Ninja -DEZIO_WERROR=${werror} >/dev/null
cmake --build build -j"$(nproc)"
