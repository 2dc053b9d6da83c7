#!/usr/bin/env bash
# Session 22, call 5b (diagnostic): what the 2-split ws tile's cluster costs at M = 64. `qgemm` =
# main d6860cc, `qgemm_nosum` = branch ws-nosum-diag (no split-K sum at all: every split stores its
# partial; results wrong on purpose, `tune` times them anyway). Each with the splits launched as a
# cluster (default) and without (QGEMM_SPLIT_CLUSTER=0). Call 5 ran both binaries, but its tune
# skipped the diagnostic's wrong results; here qgemm_nosum also times wrong candidates.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s22
f8="w8x1 t1 f8 s6 k128 waves1 ws"
export QGEMM_NO_PDL=1
for round in 1; do
  for bin in qgemm_nosum; do
    for cl in 1 0; do
      for nk in "8192 8192" "4096 4096"; do
        QGEMM_SPLIT_CLUSTER=$cl QGEMM_CACHE_DIR=/tmp/qc timeout 100 $D/$bin tune --n ${nk% *} --k ${nk#* } \
          --weight int4/g128/bf16 --m 33,64 --tiles "$f8" --out "$OUT/t.json" > "$OUT/s.log" 2>&1
        echo "$bin cluster=$cl $nk rc=$? :: $(grep -E '^mma_gemm' "$OUT/s.log" | sed 's/  */ /g')"
        cat "$OUT/s.log" >> "$OUT/nosum_diag_tune_b.log"; rm -f "$OUT/t.json"
      done
    done
  done
done
