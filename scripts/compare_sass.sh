#!/usr/bin/env bash
# Compares the machine code of the kernels two builds compile: run `qgemm jit check --dump DIR`
# with each build (same --arch), then `scripts/compare_sass.sh OLD_DIR NEW_DIR`. Kernels are
# matched by their generated source (each dumped .cu) and compared as SASS with the addresses
# stripped. Prints one line per kernel that differs (with whether its main loop is still
# the same) or is missing, then a count.
#
# Why: the decode tiles' main loop is scheduled differently when code that never runs in them
# changes (docs/design.md, "decode schedule"). A change to shared kernel code
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
# The main loop of a kernel: from the target of the first backward branch after the last
# tensor-core instruction (HMMA, HGMMA, IMMA) to that branch, addresses and branch targets dropped.
main_loop() {
  "$tool" -sass "$1" 2>/dev/null | grep -E '^\s+/\*[0-9a-f]{4}\*/' | awk '
    function hex(s,   v, i) {  # mawk has no strtonum
      s = tolower(s); sub(/^0x/, "", s); v = 0
      for (i = 1; i <= length(s); ++i) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
      return v
    }
    { addr = hex(substr($1, 3, length($1) - 4)); line[NR] = $0; at[NR] = addr
      if ($0 ~ /[HI]G?MMA/) last_mma = NR }
    END {
      for (i = last_mma + 1; i <= NR; ++i)
        if (match(line[i], /BRA `?\(?0x[0-9a-f]+/)) {
          t = line[i]; sub(/.*BRA `?\(?/, "", t); sub(/[^0-9a-fx].*/, "", t)
          target = hex(t)
          if (target < at[i]) { for (j = 1; j <= i; ++j) if (at[j] >= target) print line[j]; exit }
        }
    }' | sed 's|/\*[0-9a-f]*\*/||g; s/0x[0-9a-f]*//g; s/;.*//'
}
# For a kernel that differs: is its main loop the same, the same up to register names and reuse
# flags, or another schedule?
loop_verdict() {
  local a b
  a=$(main_loop "$1"); b=$(main_loop "$2")
  if [ -z "$a" ] || [ -z "$b" ]; then echo "no main loop found"; return; fi
  if [ "$a" == "$b" ]; then echo "main loop identical"; return; fi
  local norm='s/\bU\?R[0-9Z]\+\b/R/g; s/\bU\?P[0-9T]\b/P/g; s/\.reuse//g'
  if [ "$(echo "$a" | sed "$norm")" == "$(echo "$b" | sed "$norm")" ]; then
    echo "main loop identical up to register names"
  else
    echo "main loop differs ($(echo "$a" | wc -l) -> $(echo "$b" | wc -l) instructions)"
  fi
}
same=0 differ=0 missing=0
# NOTE: kernels are matched by their whole generated source (the Cfg struct; the kernel headers
# are not in it), not by the config line: several kernels share a config line (formats that
# print alike), and matching by it would compare unrelated kernels.
# The target and the source without its comments, includes and tile-kernel name: the Cfg struct
# and the entry's signature, so a tile kernel moved to the other dense family still finds its
# counterpart (other kernels keep their names: several share one Cfg). A source of includes only
# (a kernel without a Cfg) is keyed by its name.
source_key() {
  {
    head -1 "$1" | sed -E 's/.* for (sm_[0-9a-z]+),.*/\1/'
    grep -vE '^(//|#include)' "$1" || grep -E '^#include' "$1"
  } | sed -E 's/qgemm::(dense_mma|dense_wgmma)_kernel<Cfg>/qgemm::KERNEL<Cfg>/g' |
    md5sum | cut -d' ' -f1
}
declare -A new_by_source
for f in "$2"/*.cu; do new_by_source[$(source_key "$f")]=$f; done
for old in "$1"/*.cu; do
  config=$(head -1 "$old" | sed 's/ for sm_.*//')  # "// qgemm <family> [<config> <arch>]"
  new=${new_by_source[$(source_key "$old")]:-}
  if [ -z "$new" ]; then
    echo "missing in $2: $config"
    missing=$((missing + 1))
  elif [ "$(sass "${old%.cu}.cubin" | md5sum)" == "$(sass "${new%.cu}.cubin" | md5sum)" ]; then
    same=$((same + 1))
  else
    echo "differs: $config: $(loop_verdict "${old%.cu}.cubin" "${new%.cu}.cubin")"
    differ=$((differ + 1))
  fi
done
echo "$same identical, $differ differ, $missing missing"
