#!/usr/bin/env bash
# Session 19 call 4 (~9 min): final main (float-zp-exact + odd-groups + kw2 and its planner rules;
# .device/kw2f). (1) the full GPU suite; (2) the few-rows rule (kw2 bucket for M 33-64 where
# 128-row tiles need 4+ splits) on other formats and N, and the 5-/7-bit float-zero-point rule
# (wg tile at M 33-128); (3) verify of planned layers that take the new paths; (4) a new random
# sweep (profile odd: odd groups, float zero points, few rows).
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qc_final QGEMM_NO_PDL=1
B=.device/kw2f
part=${1:-all}
if [ "$part" = suite ] || [ "$part" = all ]; then
  timeout 480 $B/qgemm_gpu_tests > "$OUT/gpu_suite_final.log" 2>&1
  echo "== suite rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$OUT/gpu_suite_final.log" | head -20
fi
[ "$part" = suite ] && exit 0
T8="w8x1 t1 f8 s6 k128 waves1 ws"; K8="w4x1 t1 f8 s6 k128 waves1 ws kw2"; WG="w4x2 t1 f4 s4 k128 waves1 wg"
tune() {  # n k weight ms tiles
  timeout 100 $B/qgemm tune --n $1 --k $2 --weight $3 --m $4 --tiles "$5" --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "== $3 N=$1 K=$2 rc=$?"; grep -E "^(candidate|mma_gemm)|wrong|rror" "$OUT/s.log" | head -8
  cat "$OUT/s.log" >> "$OUT/rules_tune.log"
}
tune 2048 8192 int4/g128/bf16 33,64 "$T8;$K8"
tune 1024 4096 int4/g128/bf16 33,64 "$T8;$K8"
tune 5120 4096 int4/g128/bf16 33,64 "$T8;$K8"
tune 4096 4096 int8/channel/bf16 33,64 "$T8;$K8"
tune 4096 14336 int3/g128/bf16 33,64 "$T8;$K8"
tune 4096 4096 uint4/g128/bf16/zp 33,64 "$T8;$K8"
tune 8192 8192 uint5/g128/bf16/zp_bf16 64,128 "$T8;$WG"
tune 8192 8192 uint7/g128/fp32/zp_fp32 64,128 "$T8;$WG"
for c in "48 4096 4096 int4/g128/bf16 bf16" "40 1000 1920 uint4/g96/fp16/zp_fp16 fp16" \
         "64 2048 4224 int8/g64/bf16 bf16" "1 1000 1920 uint8/g80/bf16/zp_fp32 fp16" \
         "64 1000 1920 uint8/g80/bf16/zp_fp32 fp16" "300 1000 1920 uint8/g80/bf16/zp_fp32 fp32" \
         "100 8192 8192 uint7/g128/fp32/zp_fp32 bf16"; do
  set -- $c
  timeout 60 $B/qgemm verify --backend jit --m $1 --n $2 --k $3 --weight $4 --out $5 --check-rows 64 > "$OUT/v.log" 2>&1
  echo "rc=$? $(grep -E '^(backend|kernel|rel error|result)' "$OUT/v.log" | tr -s ' ' | tr '\n' ' ') | $c"
done
export QGEMM_CACHE_DIR=/tmp/qc_sweep
xargs -P 6 -L 1 bash .device/sweep/one.sh < .device/sweep/odd.txt > "$OUT/format_sweep4.log" 2>&1
echo "== sweep: $(grep -c '^PASS' "$OUT/format_sweep4.log") pass, $(grep -cE '^(FAIL|RC)' "$OUT/format_sweep4.log") not"
grep -E '^(FAIL|RC)' -A12 "$OUT/format_sweep4.log" | head -60
rm -f "$OUT/s.log" "$OUT/t.json" "$OUT/v.log"
