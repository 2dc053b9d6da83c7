#!/usr/bin/env bash
# For the session after 37, one device call (~250 s of work): branch s38-pair-bf16-out (the
# bf16 pair exchange for every ws tile with bf16 output, not only the prescaled ones) against
# main, then session 36's unmeasured planner rules. Build main into .device/main and the branch
# into .device/s38 (build/qgemm each); carry both. `qgemm tune`, plain launches, every candidate
# checked against the reference.
set -u
OUT=${OUT:-/tmp/qgemm-out}; mkdir -p "$OUT"
export QGEMM_NO_PDL=1
t0=$(date +%s)
run() {  # build weight m tiles [n k extra]
  QGEMM_CACHE_DIR=/tmp/qc_$1 timeout 100 .device/$1/qgemm tune --n ${5:-8192} --k ${6:-8192} \
    --weight $2 --m $3 --tiles "$4" --repetitions 21 --out "$OUT/t.json" ${7:-} > "$OUT/s.log" 2>&1
  echo "== $1 $2 M=$3 N=${5:-8192} K=${6:-8192} ${7:-} rc=$? $(( $(date +%s) - t0 )) s"
  grep -E "^mma_gemm|^expand|error|rror|wrong" "$OUT/s.log" | sed 's/  */ /g'
  cat "$OUT/s.log" >> "$OUT/tune_next.log"; rm -f "$OUT/t.json"
}
F8="w8x1 t1 f8 s3 k256 waves2 splits2 ws"  # the 64-token tile as planned at 8192^2 (2 splits)
F16="w8x1 t1 f16 s5 k128 waves2 ws ps tma"
F32="w8x1 t1 f32 s6 k64 waves1 ws ps tma"
# A/B: the 64-token tile (bf16 output, 2 splits in a pair) gains only on the branch.
for b in main s38 main s38; do run $b int4/g128/bf16 33,64 "$F8"; done
for b in main s38; do run $b uint4/g128/bf16/zp 64 "$F8"; done
for b in main s38; do run $b int8/channel/bf16 64 "$F8"; done
# Session 36's unmeasured rules, on main.
run main int4/g128/bf16 160,256 "$F16;$F32" 10240 8192
run main int4/g128/bf16 160,256 "$F16;$F32" 6144 8192
run main int8/channel/bf16 2048,3072,4096 "$F32" 8192 8192
run main int2/g128/bf16 128,256,512,1024 "w8x1 t1 f16 s5 k128 waves2 ws ps;$F16" 8192 8192
run main int4/g128/fp16 96,128 "w8x1 t1 f16 s5 k128 waves2 ws;w8x1 t1 f16 s5 k128 waves2 ws tma" 8192 8192 "--act fp16 --out-type fp16"
echo "total $(( $(date +%s) - t0 )) s"
