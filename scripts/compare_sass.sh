#!/usr/bin/env bash
# Compares the machine code of the kernels two builds compile: run `qgemm jit check --dump DIR`
# with each build (same --arch), then `scripts/compare_sass.sh OLD_DIR NEW_DIR`. Kernels are
# matched by their config (the first line of each dumped .cu) and compared as SASS with the
# addresses stripped. Prints one line per kernel that differs or is missing, then a count.
#
# Why: the decode tiles' main loop is scheduled differently when code that never runs in them
# changes (bench/NOTES.md, "decode schedule": 3-5% at M = 1). A change to shared kernel code
# that leaves their SASS byte-identical needs no new timing of them.
#
# Needs cuobjdump: $CUOBJDUMP, else on PATH, else $CUDA_HOME/bin (pip: nvidia-cuda-cuobjdump).
set -euo pipefail
if [ $# -ne 2 ] || [ ! -d "$1" ] || [ ! -d "$2" ]; then
  echo "usage: $0 OLD_DUMP_DIR NEW_DUMP_DIR   (directories written by 'qgemm jit check --dump')" >&2
  exit 2
fi
tool=${CUOBJDUMP:-$(command -v cuobjdump || echo "${CUDA_HOME:-/usr/local/cuda}/bin/cuobjdump")}
if [ ! -x "$tool" ]; then
  echo "compare_sass.sh: cuobjdump not found (set CUOBJDUMP, or install the CUDA toolkit's" \
       "cuobjdump, e.g. pip install nvidia-cuda-cuobjdump)" >&2
  exit 2
fi
sass() { "$tool" -sass "$1" 2>/dev/null | grep -E '^\s+/\*[0-9a-f]{4}\*/' | sed 's|/\*[0-9a-f]*\*/||g'; }
same=0 differ=0 missing=0
for old in "$1"/*.cu; do
  config=$(head -1 "$old" | sed 's/ for sm_.*//')  # "// qgemm <family> [<config> <arch>]"
  new=$(grep -lF "$config for sm_" "$2"/*.cu 2>/dev/null | head -1 || true)
  if [ -z "$new" ]; then
    echo "missing in $2: $config"
    missing=$((missing + 1))
  elif [ "$(sass "${old%.cu}.cubin" | md5sum)" == "$(sass "${new%.cu}.cubin" | md5sum)" ]; then
    same=$((same + 1))
  else
    echo "differs: $config"
    differ=$((differ + 1))
  fi
done
echo "$same identical, $differ differ, $missing missing"
