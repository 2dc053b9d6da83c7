#!/usr/bin/env bash
# Session 23, call 1: wgmma (non-ws, one warpgroup, B straight from shared memory, no ldmatrix)
# for the decode buckets against the mma.sync tiles, plain launches, int4/g128/bf16.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s23
export QGEMM_NO_PDL=1
run() {  # weight n k m tiles log
  QGEMM_CACHE_DIR=/tmp/qc timeout 150 $D/qgemm tune --n $2 --k $3 --weight $1 --m $4 --tiles "$5" \
    --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 ${2}x$3 M=$4 rc=$? :: $(grep -E '^mma_gemm|^expand|wrong|rror' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|')"
  cat "$OUT/s.log" >> "$OUT/$6"; rm -f "$OUT/t.json"
}
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw --format=csv
m16="w4x1 t1 f2 s4 k256 waves4;w4x1 t1 f2 s2 k512 waves4;w4x1 t1 f2 s2 k512 waves4 wg;w4x1 t1 f2 s4 k256 waves4 wg;w4x1 t1 f2 s3 k256 waves4 wg;w8x1 t1 f2 s4 k256 waves1 wg"
for nk in "8192 8192" "28672 8192" "10240 8192" "4096 14336" "5120 8192" "8192 28672" "4096 4096"; do
  run int4/g128/bf16 ${nk% *} ${nk#* } 16,32 "$m16" wg_m16_tune.log
done
run uint4/g128/bf16/zp 8192 8192 16 "$m16" wg_m16_tune.log
run int8/channel/bf16 8192 8192 16 "$m16" wg_m16_tune.log
run mxfp4 8192 8192 16 "$m16" wg_m16_tune.log
m1="w4x1 t1 f1 s4 k256 waves4;w4x1 t1 f1 s2 k512 waves4;w4x1 t1 f1 s2 k512 waves4 wg;w4x1 t1 f1 s4 k256 waves4 wg"
for nk in "8192 8192" "28672 8192"; do
  run int4/g128/bf16 ${nk% *} ${nk#* } 1 "$m1" wg_m1_tune.log
done
m64="w8x1 t1 f8 s6 k128 waves1 ws;w4x1 t1 f8 s4 k128 waves2 wg;w4x1 t1 f8 s3 k256 waves1 wg;w8x1 t1 f8 s3 k256 waves1 wg"
run int4/g128/bf16 8192 8192 64 "$m64" wg_m64_tune.log
