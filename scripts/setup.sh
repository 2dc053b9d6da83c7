#!/usr/bin/env bash
# Installs what qgemm needs to build on Debian/Ubuntu, then configures and builds it in build/.
# The CUDA toolkit (headers and NVRTC, 12.x or 13.x) must already be installed: qgemm loads the
# driver, NVRTC and cuBLASLt at run time, so no GPU is needed to build, test or run on the CPU.
#
#   scripts/setup.sh [--packages-only] [--fuzz] [--python]
#
#   --packages-only  install what is missing and check CUDA, but do not build build/
#   --fuzz           also install clang and its libFuzzer runtime (scripts/fuzz.sh needs them)
#   --python         also make sure python3 has venv and its C headers (pip install . needs them)
set -euo pipefail
cd "$(dirname "$0")/.."

build=1
fuzz=0
python=0
for arg in "$@"; do
  case $arg in
    --packages-only) build=0 ;;
    --fuzz) fuzz=1 ;;
    --python) python=1 ;;
    *) echo "usage: $0 [--packages-only] [--fuzz] [--python]" >&2; exit 2 ;;
  esac
done

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
updated=0
install_missing() {
  local missing=()
  for p in "$@"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  echo "qgemm setup: installing ${missing[*]}"
  if ((!updated)); then
    $sudo apt-get update -qq
    updated=1
  fi
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

# g++ brings AddressSanitizer and UndefinedBehaviorSanitizer (scripts/test.sh --sanitize).
install_missing cmake ninja-build g++ libgtest-dev libyaml-cpp-dev nlohmann-json3-dev libcli11-dev

# Whether clang links a libFuzzer target.
libfuzzer_links() {
  echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' |
    clang++ -x c++ -fsanitize=fuzzer - -o /dev/null >/dev/null 2>&1
}
if ((fuzz)); then
  install_missing clang
  if ! libfuzzer_links; then
    # Newer Debian and Ubuntu ship libFuzzer apart from clang.
    install_missing libclang-rt-dev
    libfuzzer_links || { echo "qgemm setup: clang++ cannot link libFuzzer targets" >&2; exit 1; }
  fi
fi

if ((python)); then
  # A python3 of the system's (Debian splits venv and the headers off); one of pyenv's has both.
  python3 -c 'import ensurepip' >/dev/null 2>&1 || install_missing python3-venv
  python3 -c 'import os, sysconfig; assert os.path.exists(sysconfig.get_paths()["include"] + "/Python.h")' \
    >/dev/null 2>&1 || install_missing python3-dev
fi

cuda_home=${CUDA_HOME:-/usr/local/cuda}
if [ ! -f "$cuda_home/include/cuda.h" ] || [ ! -f "$cuda_home/include/nvrtc.h" ]; then
  echo "qgemm setup: CUDA headers not found under $cuda_home (set CUDA_HOME);" \
       "install the CUDA toolkit (12.x or 13.x) with NVRTC" >&2
  exit 1
fi

((build)) || exit 0
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build
