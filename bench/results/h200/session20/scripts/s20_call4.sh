#!/usr/bin/env bash
# Session 20 call 4: the sm_75 (Turing) code paths on the H200 via QGEMM_TARGET_ARCH=sm_75
# (PTX for compute_75, finished by the driver): the format table (fp16 activations), verify on
# odd shapes, a plan; then bf16 on that target routes to the CPU. Build: .device/s20 (main + sm_75).
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
B=.device/s20
export QGEMM_CACHE_DIR=/tmp/qc75
export QGEMM_TARGET_ARCH=sm_75
$B/qgemm info > "$OUT/t75_info.log" 2>&1; head -20 "$OUT/t75_info.log"
$B/qgemm plan --n 1000 --k 1536 --weight int4/g128/fp16 --act fp16 --m 1,16,64,256,1000 --explain \
  > "$OUT/t75_plan.log" 2>&1; cat "$OUT/t75_plan.log"
timeout 300 $B/qgemm_gpu_tests --gtest_filter='Formats/MmaGemmGpuTest.*' > "$OUT/t75_table.log" 2>&1
echo "== table rc=$?"; grep -E "PASSED|FAILED|SKIPPED \]|tests ran" "$OUT/t75_table.log" | tail -8
for c in "int4/g128/fp16 1 4097 4160" "uint4/g64/bf16/zp 7 1000 1536" "int8/channel/fp16 118 333 1001" \
         "e2m1/g32/ue8m0 300 2000 4096" "int3/g128/fp16 33 777 1280" "int7/g128/bf16 1000 520 2048" \
         "uint4/g64/fp16/zp_fp16 64 1000 1536" "e4m3/b128x128/fp32 513 640 1024" "int4/g48/bf16 16 1000 1920" \
         "uint2/g128/bf16/zp 2048 1536 1024"; do
  set -- $c
  for out in fp16 bf16; do
    r=$(timeout 120 $B/qgemm verify --weight $1 --act fp16 --out $out --m $2 --n $3 --k $4 --backend jit --bias 2>&1 | tail -2 | tr '\n' ' ')
    echo "verify $1 M=$2 N=$3 K=$4 out=$out: $r"
  done
done | tee "$OUT/t75_verify.log"
r=$(timeout 120 $B/qgemm verify --weight int4/g128/bf16 --act bf16 --m 3 --n 256 --k 512 2>&1 | tail -3 | tr '\n' ' ')
echo "bf16 on sm_75 (auto): $r" | tee -a "$OUT/t75_verify.log"
