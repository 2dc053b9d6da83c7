#!/usr/bin/env bash
# Installs what qgemm needs to build on Debian/Ubuntu, then configures and builds it in build/.
# The CUDA toolkit (headers and NVRTC, 12.x or 13.x) must already be installed: qgemm loads the
# driver, NVRTC and cuBLASLt at run time, so no GPU is needed to build, test or run on the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(cmake ninja-build g++ libgtest-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "qgemm setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

cuda_home=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$cuda_home/include/cuda.h" ] || [ ! -f "$cuda_home/include/nvrtc.h" ]; then
  echo "qgemm setup: CUDA headers not found under $cuda_home (set CUDA_HOME);" \
       "install the CUDA toolkit (12.x or 13.x) with NVRTC" >&2
  exit 1
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build
