#!/usr/bin/env bash
# Session 24, call 2: uint4/zp with long decode stages when the kernel is built for 4 CTAs per SM
# (qgemm_lb: __launch_bounds__(128, 4) for zero-point tiles of 512-K stages; 123 registers, no
# spills) against the change's short tile (qgemm_new); M = 16 old / new again.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s24
export QGEMM_NO_PDL=1
run() {  # bin weight n k m tiles log
  QGEMM_CACHE_DIR=/tmp/qc_$1 timeout 90 $D/$1 tune --n $3 --k $4 --weight $2 --m $5 --tiles "$6" \
    --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "$1 $2 ${3}x$4 M=$5 rc=$? :: $(grep -E '^mma_gemm|wrong|rror' "$OUT/s.log" | sed 's/  */ /g' | tr '\n' '|')"
  cat "$OUT/s.log" >> "$OUT/$7"; rm -f "$OUT/t.json"
}
S="w4x1 t1 f1 s4 k256 waves4"; L="w4x1 t1 f1 s2 k512 waves4"
for round in 1 2; do
  run qgemm_lb uint4/g128/bf16/zp 8192 8192 1 "$S;$L;$L splits3;$L splits4" lb_tune.log
  run qgemm_lb int4/g128/bf16 8192 8192 1 "$L" lb_tune.log
done
for w in uint4/g128/bf16/zp uint4/g128/fp16/zp uint4/g64/bf16/zp uint2/g128/bf16/zp; do
  run qgemm_lb $w 6144 8192 1 "$S;$L" lb_tune.log
  run qgemm_lb $w 10240 8192 1 "$S;$L" lb_tune.log
  run qgemm_lb $w 28672 8192 1 "$S;$L" lb_tune.log
  run qgemm_lb $w 4096 14336 1 "$S;$L" lb_tune.log
  run qgemm_lb $w 8192 28672 1 "$S;$L" lb_tune.log
done
for round in 1 2; do for bin in qgemm_old qgemm_new; do
  run $bin uint4/g128/bf16/zp 8192 8192 16 "w4x1 t1 f2 s4 k256 waves4" m16_zp_tune.log
done; done
