#!/usr/bin/env bash
# Session 23, call 4: nvfp4 (e2m1, groups of 16, e4m3 scales, global scale) on short and long
# stages, decode bucket (M = 1, 8) and 16-token tile (M = 16, 32), plain launches, main 271929d.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s23
export QGEMM_NO_PDL=1
run() {  # weight n k m tiles log
  QGEMM_CACHE_DIR=/tmp/qc timeout 150 $D/qgemm_main2 tune --n $2 --k $3 --weight $1 --m $4 --tiles "$5" \
    --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 ${2}x$3 M=$4 rc=$? :: $(grep -E '^mma_gemm|wrong|rror' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|')"
  cat "$OUT/s.log" >> "$OUT/$6"; rm -f "$OUT/t.json"
}
m1="w4x1 t1 f1 s4 k256 waves4;w4x1 t1 f1 s2 k512 waves4"
m16="w4x1 t1 f2 s4 k256 waves4;w4x1 t1 f2 s2 k512 waves4"
for round in 1; do
  for nk in "8192 8192" "28672 8192" "10240 8192" "8192 28672" "4096 14336" "14336 8192" "6144 8192" "5120 8192"; do
    run nvfp4 ${nk% *} ${nk#* } 1,8 "$m1" nvfp4_m1_tune.log
    run nvfp4 ${nk% *} ${nk#* } 16,32 "$m16" nvfp4_m16_tune.log
  done
done
