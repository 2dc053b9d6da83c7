#!/usr/bin/env bash
# Installs what is missing, builds and runs the test suites:
#
#   scripts/test.sh [--normal] [--sanitize] [--fuzz] [--python]
#
#   --normal    build/: unit (CPU), jit (NVRTC on the CPU, including `qgemm jit check` for
#               sm_75, sm_80, sm_89 and sm_90a) and gpu (each test skips with a message when
#               there is no GPU)
#   --sanitize  build-sanitize/: the unit and jit suites, but not jit_check, under
#               AddressSanitizer and UndefinedBehaviorSanitizer (GCC)
#   --fuzz      scripts/fuzz.sh: every libFuzzer target for QGEMM_FUZZ_SECONDS (default 60)
#   --python    `pip install .[test]` into the virtual environment build-python/venv, then
#               pytest on python/tests (CPU; GPU and torch tests skip with a message)
#
# Without arguments all four run, one after the other (what CI runs).
set -euo pipefail
cd "$(dirname "$0")/.."

normal=0 sanitize=0 fuzz=0 python=0
for arg in "$@"; do
  case $arg in
    --normal) normal=1 ;;
    --sanitize) sanitize=1 ;;
    --fuzz) fuzz=1 ;;
    --python) python=1 ;;
    *) echo "usage: $0 [--normal] [--sanitize] [--fuzz] [--python]" >&2; exit 2 ;;
  esac
done
(($#)) || normal=1 sanitize=1 fuzz=1 python=1

if ((normal)); then
  scripts/setup.sh
  ctest --test-dir build --output-on-failure -j "$(nproc)"
fi

if ((sanitize)); then
  scripts/setup.sh --packages-only
  # -O1 keeps the instrumented build short; -g1 gives the reports their lines.
  cmake -S . -B build-sanitize -G Ninja -DQGEMM_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" >/dev/null
  ninja -C build-sanitize
  # Leaks and static-initialization order too; no suppressions are needed (NVRTC, which the jit
  # tests load, reports nothing).
  asan_options=detect_leaks=1:check_initialization_order=1:strict_init_order=1
  export ASAN_OPTIONS=${ASAN_OPTIONS:-$asan_options}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
  # jit_check compiles hundreds of kernels (the normal suite runs it); installed_package builds
  # an outside program without the sanitizers against the instrumented library, which ASan will
  # not run ("ASan runtime does not come first"), and checks packaging rather than code.
  ctest --test-dir build-sanitize -L 'unit|jit' -E '^(jit_check|installed_package)$' \
    --output-on-failure -j "$(nproc)"
fi

if ((fuzz)); then
  scripts/fuzz.sh "${QGEMM_FUZZ_SECONDS:-60}"
fi

if ((python)); then
  scripts/setup.sh --packages-only --python
  [ -x build-python/venv/bin/python ] || python3 -m venv build-python/venv
  build-python/venv/bin/pip install --quiet ".[test]"
  # From build-python/, so that `import qgemm` finds the installed package, not python/qgemm.
  (cd build-python && venv/bin/python -m pytest -q -rs ../python/tests)
fi
