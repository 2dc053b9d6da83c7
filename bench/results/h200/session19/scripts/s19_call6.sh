#!/usr/bin/env bash
# Session 19 call 6 (~6 min): final main with the float-zero-point stage rule (g64: one group per
# ws stage) and 5-/7-bit float zero points on the wg tile at every M above 32. (1) the full GPU
# suite, (2) the planned tiles of those layers timed, (3) the odd sweep again.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_CACHE_DIR=/tmp/qc_final6 QGEMM_NO_PDL=1
B=.device/kw2f
timeout 330 $B/qgemm_gpu_tests > "$OUT/gpu_suite_final6.log" 2>&1
echo "== suite rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$OUT/gpu_suite_final6.log" | head -20
for c in "8192 8192 uint4/g64/fp16/zp_fp16 fp16 fp16 64,128,256" "8192 8192 uint7/tensor/fp32/zp_fp32 fp16 bf16 64,128,256"; do
  set -- $c
  timeout 100 $B/qgemm tune --n $1 --k $2 --weight $3 --act $4 --out-type $5 --m $6 --out "$OUT/t.json" > "$OUT/s.log" 2>&1
  echo "== $c rc=$?"; grep -E "^[0-9]+ +(mma|expand)|wrong|rror" "$OUT/s.log" | head -8
  cat "$OUT/s.log" >> "$OUT/final6_tune.log"
done
export QGEMM_CACHE_DIR=/tmp/qc_sweep6
xargs -P 6 -L 1 bash .device/sweep/one.sh < .device/sweep/odd.txt > "$OUT/format_sweep4b.log" 2>&1
echo "== sweep: $(grep -c '^PASS' "$OUT/format_sweep4b.log") pass, $(grep -cE '^(FAIL|RC)' "$OUT/format_sweep4b.log") not"
grep -E '^(FAIL|RC)' -A12 "$OUT/format_sweep4b.log" | head -40
rm -f "$OUT/s.log" "$OUT/t.json"
