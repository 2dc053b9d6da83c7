#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite: unit (CPU), jit (NVRTC on the
# CPU, including `qgemm jit check` for sm_80, sm_89 and sm_90a) and gpu (each test skips with a
# message when there is no GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
ctest --test-dir build --output-on-failure -j "$(nproc)"
