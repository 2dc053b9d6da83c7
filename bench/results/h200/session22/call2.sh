#!/usr/bin/env bash
# Session 22, call 2: (a) the pushed cluster sum, three binaries, two interleaved rounds, plain:
# qgemm_base = main ea7b905 (pulled sum), qgemm = push-sum ceb3038 (inbox past the ring where it
# fits), qgemm_b0 = the same without the extra shared memory (inbox always in the drained ring);
# (b) 16-token decode tiles: 3 stages with registers capped for 4 CTAs per SM (ctas4), long
# stages capped for 3 (ctas3), against the bucket's tile, M = 16 / 32, seven shapes.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s22
f8="w8x1 t1 f8 s6 k128 waves1 ws"; f16="w8x1 t1 f16 s5 k128 waves1 ws"
export QGEMM_NO_PDL=1
run() {  # bin weight n k m tiles log
  QGEMM_CACHE_DIR=/tmp/qc timeout 120 $D/$1 tune --n $3 --k $4 --weight $2 --m $5 --tiles "$6" \
    --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 $2 ${3}x$4 M=$5 rc=$? :: $(grep -E '^mma_gemm|^expand|wrong|rror' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|')"
  cat "$OUT/s.log" >> "$OUT/$7"; rm -f "$OUT/t.json"
}
for round in 1 2; do
  for bin in qgemm_base qgemm qgemm_b0; do
    run $bin int4/g128/bf16 8192 8192 64,128 "$f8" push_ab2_tune.log
    run $bin int4/g128/bf16 8192 8192 256 "$f16" push_ab2_tune.log
    run $bin int4/g128/bf16 4096 4096 64 "$f8" push_ab2_tune.log
    run $bin int4/g128/bf16 2048 8192 128 "$f16" push_ab2_tune.log
    run $bin int4/g128/bf16 1024 4096 64 "$f8" push_ab2_tune.log
  done
done
m16="w4x1 t1 f2 s4 k256 waves4;w4x1 t1 f2 s3 k256 waves4;w4x1 t1 f2 s3 k256 waves4 ctas4;w4x1 t1 f2 s2 k512 waves4;w4x1 t1 f2 s2 k512 waves4 ctas3"
for nk in "8192 8192" "28672 8192" "10240 8192" "4096 14336" "14336 4096" "8192 28672" "4096 4096"; do
  run qgemm int4/g128/bf16 ${nk% *} ${nk#* } 16,32 "$m16" m16_ctas_tune.log
done
run qgemm uint4/g128/bf16/zp 8192 8192 16 "$m16" m16_ctas_tune.log
run qgemm int8/channel/bf16 8192 8192 16 "$m16" m16_ctas_tune.log
