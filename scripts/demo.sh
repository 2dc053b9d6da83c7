#!/usr/bin/env bash
# Installs what is missing, builds, and runs the demo: random layers in the common recipes,
# run on the GPU when there is one (otherwise the CPU backend, which it says), checked against
# the CPU reference.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
build/qgemm info
echo
build/qgemm demo
