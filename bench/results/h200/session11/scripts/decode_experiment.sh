#!/usr/bin/env bash
# Branches l2-prefetch and resident-regs, one device call (~8 min): the weight copies of the mma_gemm kernels ask the
# L2 for whole 256-byte blocks (cp.async ... L2::256B). Decode is where DRAM requests matter:
# `qgemm tune` of the bucket tiles with main's binary (.device/bin) and the branch's
# (.device/l2p), two rounds, same session, after the planner and Linear GPU tests of the branch.
set -u
OUT=${OUT:-/tmp/qgemm-out}
mkdir -p "$OUT"
export QGEMM_CACHE_DIR=${QGEMM_CACHE_DIR:-/tmp/qgemm-cache}
timeout 120 .device/l2p/qgemm_gpu_tests --gtest_filter='LinearGpu*:TunedPlanGpu*:MmaGemmGpu*' \
  > "$OUT/l2p_gputests.log" 2>&1
echo "GPU tests rc=$?"; grep -E "^\[  (PASSED|FAILED) |FAILED  \]" "$OUT/l2p_gputests.log" | head
for round in 1 2; do
  for b in bin l2p; do
    # (also one- and two-warp decode CTAs for int4/g128, never timed with group scales at 4 bits,
    # and the 16-token tile with 3 stages: 4 CTAs per SM by shared memory)
    dec='w4x1 t1 f1 s4 k256 waves4;w4x1 t1 f2 s4 k256 waves4;w4x1 t1 f2 s3 k256 waves4;w1x1 t1 f1 s4 k256 waves4;w2x1 t1 f1 s4 k256 waves4'
    for spec in "int4/g128/bf16|8192|1,16|$dec" "int4/g128/bf16|28672|1,16|$dec" \
                "int8/channel/bf16|8192|1|w1x1 t1 f1 s3 k256 waves4" \
                "int4/g128/bf16|8192|64,256|w8x1 t1 f8 s6 k128 waves1 ws;w8x1 t1 f16 s5 k128 waves1 ws"; do
      IFS='|' read -r w n ms tiles <<< "$spec"
      name="l2p_${b}_${w//\//_}_${n}_$round"
      timeout 60 ".device/$b/qgemm" tune --n "$n" --k 8192 --weight "$w" --m "$ms" --tiles "$tiles" \
        --out "$OUT/$name.json" > "$OUT/$name.log" 2>&1
      echo "== $w N=$n $b round $round rc=$?"
      grep -A6 "^candidate" "$OUT/$name.log" | grep -E "^(candidate|mma_gemm)"
    done
  done
done
# Branch resident-regs (.device/reg): split-K counts the CTAs the kernel's registers leave room
# for; the int3, int2 and int5 decode tiles get 4 / 3 splits at M = 1 / 16 instead of 5.
for round in 1 2; do
  for b in bin reg; do
    for spec in "int3/g128/bf16|w4x1 t1 f1 s3 k256 waves4;w4x1 t1 f2 s3 k256 waves4" \
                "int2/g128/bf16|w4x1 t1 f1 s4 k256 waves4;w4x1 t1 f2 s4 k256 waves4" \
                "int5/g64/bf16|w4x1 t1 f1 s3 k256 waves4;w4x1 t1 f2 s3 k256 waves4"; do
      IFS='|' read -r w tiles <<< "$spec"
      name="reg_${b}_${w//\//_}_$round"
      timeout 60 ".device/$b/qgemm" tune --n 8192 --k 8192 --weight "$w" --m 1,16 --tiles "$tiles" \
        --out "$OUT/$name.json" > "$OUT/$name.log" 2>&1
      echo "== splits by registers: $w $b round $round rc=$?"
      grep -A3 "^candidate" "$OUT/$name.log" | grep -E "^(candidate|mma_gemm)"
    done
  done
done
# Where wide codes should hand off to expansion + cuBLAS (main's binary): 3-, 5-, 6-, 7-bit codes
# hand off from M = 129; whole fields and 64-token ws tiles (session 10) made their ws tiles
# cheaper. The tune's expand+cublaslt row is the hand-off.
for w in int3/g128/bf16 int5/g128/bf16 int6/g128/bf16 int7/g128/bf16; do
  name="handoff_${w//\//_}"
  timeout 60 .device/bin/qgemm tune --n 8192 --k 8192 --weight "$w" --m 256,512 \
    --tiles 'w8x1 t1 f4 s6 k128 waves1 ws;w8x1 t1 f8 s6 k128 waves1 ws' \
    --out "$OUT/$name.json" > "$OUT/$name.log" 2>&1
  echo "== hand-off $w rc=$?"
  grep -A4 "^candidate" "$OUT/$name.log" | grep -E "^(candidate|mma_gemm|expand)"
done
(cd "$OUT" && tar czf l2p_logs.tgz -- *.log *.json 2>/dev/null && rm -f -- *.log *.json)
