#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Quick start command 2: set up, build, run the whole test suite (real BPF on this kernel: needs root).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh test
bash scripts/build.sh test
cd build
ctest --output-on-failure --timeout 900 "$@"
