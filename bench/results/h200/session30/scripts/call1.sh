#!/usr/bin/env bash
# Session 30, call 1 (main 3806f08 + no kernel change): the whole GPU suite (the issue's
# correctness table, AutotuneGpu.SmallLayerEndToEnd among them), random format sweeps with new
# seeds (`gen_sweep.py wide 3001 160`, `odd 3002 100`), and Nsight Compute stall samples of the
# M = 64 and M = 256 kernels (8192^2 int4/g128/bf16).
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
D=.device/s30; S=bench/results/h200/session30/scripts
export QGEMM_CACHE_DIR=/tmp/qc_s30
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
t0=$(date +%s)
timeout 330 $D/qgemm_gpu_tests --gtest_brief=1 > "$OUT/gpu_suite_call1.log" 2>&1
echo "suite rc=$? in $(( $(date +%s) - t0 )) s :: $(grep -E 'tests ran|PASSED|FAILED' "$OUT/gpu_suite_call1.log" | tr '\n' '|')"
grep -E "^\[  FAILED|Failure" -A6 "$OUT/gpu_suite_call1.log" | head -30
t0=$(date +%s)
cat $S/sweep_wide.txt $S/sweep_odd.txt > /tmp/sweep.txt
timeout 200 xargs -P 12 -L 1 bash $S/one.sh < /tmp/sweep.txt > "$OUT/sweep_call1.log" 2>&1
echo "sweep in $(( $(date +%s) - t0 )) s: $(grep -c '^PASS' "$OUT/sweep_call1.log") pass, $(grep -cE '^(FAIL|RC)' "$OUT/sweep_call1.log") not, of $(wc -l < /tmp/sweep.txt); backends: $(awk '$1=="PASS"{print $3}' "$OUT/sweep_call1.log" | sort | uniq -c | tr '\n' ' ')"
grep -E '^(FAIL|RC)' -A12 "$OUT/sweep_call1.log" | head -40
ncu_bin=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
for m in 64 256; do
  QGEMM_NO_PDL=1 timeout 90 "$ncu_bin" --clock-control none --set full --import-source no \
    --page source --print-source sass --csv -k regex:mma_gemm -c 1 $D/qgemm verify \
    --backend jit --weight int4/g128/bf16 --m $m --n 8192 --k 8192 --check-rows 8 \
    > "$OUT/sass_m$m.csv" 2> "$OUT/sass_m$m.err"
  echo "ncu M=$m rc=$? $(wc -c < "$OUT/sass_m$m.csv") bytes"
done
