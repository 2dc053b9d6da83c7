#!/usr/bin/env bash
# Runs on the GPU machine (device tool) over a copy of the working tree, with the binaries built
# here carried in .device/bin. Usage: scripts/device_run.sh STEP... where a step is one of
#   info        qgemm info and nvidia-smi
#   gputests    the GPU test binary (filter with GTEST_FILTER)
#   verify      a few qgemm verify runs on the jit backend
#   bench:NAME  qgemm bench bench/recipes/NAME.yaml, JSON and SVG into $OUT
#   tune        qgemm tune for each '|'-separated argument list in TUNE_ARGS, into one table
#               $OUT/tuning.json (e.g. TUNE_ARGS="--n 8192 --k 8192 --weight int4/g128/bf16");
#               TUNE_TILES (';'-separated tile texts, which hold spaces) replaces the candidates
#   ncu         Nsight Compute (hardware counters; the H200 machines run Firecracker, where it
#               works) on one `qgemm verify` launch per case, text report into $OUT/ncu.log.
#               NCU_CASES: lines "name|weight|m|n|k|kernel regex|kernels"; NCU_SET (full)
# Every step's log goes to $OUT/<step>.log; a short summary is printed last.
set -u
OUT=${OUT:-/tmp/qgemm-out}
mkdir -p "$OUT"
BIN=${BIN:-.device/bin}
export QGEMM_CACHE_DIR=${QGEMM_CACHE_DIR:-/tmp/qgemm-cache}
summary=""
find_ncu() { command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1; }
for step in "$@"; do
  start=$(date +%s)
  case "$step" in
    info)
      { nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu --format=csv; "$BIN/qgemm" info; } > "$OUT/info.log" 2>&1
      rc=$? ;;
    gputests)
      timeout "${GPUTEST_TIMEOUT:-400}" "$BIN/qgemm_gpu_tests" --gtest_filter="${GTEST_FILTER:-*}" > "$OUT/gputests.log" 2>&1
      rc=$?
      grep -E "^\[  (PASSED|FAILED|SKIPPED) |tests ran|Failure|rel_frobenius|Which is" "$OUT/gputests.log" | head -40 ;;
    verify)
      { for w in int4/g128/bf16 nvfp4 uint4/g128/fp16/zp e4m3/b128x128/fp32; do
          "$BIN/qgemm" verify --m 33 --n 4100 --k 2048 --weight "$w" --backend jit --bias; done; } > "$OUT/verify.log" 2>&1
      rc=$? ;;
    tune)
      rc=0
      IFS='|' read -ra layers <<< "${TUNE_ARGS:---n 8192 --k 8192 --weight int4/g128/bf16}"
      tiles=()
      if [ -n "${TUNE_TILES:-}" ]; then tiles=(--tiles "$TUNE_TILES"); fi
      for args in "${layers[@]}"; do
        # shellcheck disable=SC2086
        timeout "${TUNE_TIMEOUT:-400}" "$BIN/qgemm" tune $args "${tiles[@]}" --out "$OUT/tuning.json" >> "$OUT/tune.log" 2>&1 || rc=$?
      done
      grep -vE "^(mma_gemm|expand)" "$OUT/tune.log" | tail -n 60 ;;
    ncu)
      rc=0
      ncu_bin=$(find_ncu)
      default_cases="int4_m1|int4/g128/bf16|1|8192|8192|mma_gemm|1
int4_m16|int4/g128/bf16|16|8192|8192|mma_gemm|1
int4_m64|int4/g128/bf16|64|8192|8192|mma_gemm|1
int4_m256|int4/g128/bf16|256|8192|8192|mma_gemm|1
int8_m1|int8/channel/bf16|1|8192|8192|mma_gemm|1
int4_m4096|int4/g128/bf16|4096|8192|8192|mma_dequant|gemm|xmma|cutlass|2"
      if [ -z "$ncu_bin" ]; then
        echo "ncu not found" | tee "$OUT/ncu.log"; rc=1
      else
        while IFS= read -r line; do
          [ -z "$line" ] && continue
          IFS='|' read -r name weight m n k rest <<< "$line"
          regex=${rest%|*} count=${rest##*|}
          echo "==== $name: $weight M=$m N=$n K=$k, kernels /$regex/ x$count" >> "$OUT/ncu.log"
          timeout "${NCU_TIMEOUT:-90}" "$ncu_bin" --clock-control none --set "${NCU_SET:-full}" \
            -k "regex:$regex" -c "$count" "$BIN/qgemm" verify --backend jit --weight "$weight" \
            --m "$m" --n "$n" --k "$k" --check-rows 8 >> "$OUT/ncu.log" 2>&1 || rc=$?
        done <<< "${NCU_CASES:-$default_cases}"
      fi
      grep -E "^==== |^  [a-z_]+.*\(|Duration|DRAM Throughput|Compute \(SM\) Throughput|Registers Per|Achieved Occupancy" "$OUT/ncu.log" | head -n 80 ;;
    bench:*)
      name=${step#bench:}
      timeout "${BENCH_TIMEOUT:-400}" "$BIN/qgemm" bench "bench/recipes/$name.yaml" --out "$OUT/$name.json" --plot "$OUT/$name.svg" > "$OUT/bench_$name.log" 2>&1
      rc=$?
      tail -n 60 "$OUT/bench_$name.log" ;;
    *) echo "unknown step $step"; rc=2 ;;
  esac
  summary+="$step: rc=$rc $(( $(date +%s) - start ))s"$'\n'
done
echo "---- summary"
printf "%s" "$summary"
