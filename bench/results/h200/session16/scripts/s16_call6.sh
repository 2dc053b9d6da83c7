#!/usr/bin/env bash
# Session 16 call 6: is the decode tiles' ~4% loss in call 5's recipe the kernel or the machine?
# old = a1cdeb0 (session 15), new = call 5's main, gate = new with the cluster sum compiled only
# into the ws tiles. Plain launches, interleaved rounds.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_NO_PDL=1
for round in 1 2; do
for b in old new gate; do
  for case in "int4/g128/bf16 8192 8192" "int4/g128/bf16 28672 8192" "int2/g128/bf16 28672 8192"; do set -- $case
    QGEMM_CACHE_DIR=/tmp/qc_$b timeout 40 .device/$b/qgemm tune --weight $1 --n $2 --k $3 --m 1,16 --tiles 'w4x1 t1 f1 s4 k256 waves4' --out "$OUT/t.json" > "$OUT/s.log" 2>&1
    echo "$round $b $1 N=$2: $(grep -E '^mma_gemm' "$OUT/s.log" | head -1) $(grep -c wrong "$OUT/s.log")"
  done
done
done
rm -f "$OUT/s.log" "$OUT/t.json"
