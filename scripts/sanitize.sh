#!/usr/bin/env bash
# Runs compute-sanitizer's memcheck, racecheck (shared memory), synccheck and initcheck over a
# matrix of `qgemm verify` cases that covers every kernel family and tile kind at small sizes, on
# the GPU machine, with binaries built elsewhere:
#
#   BIN=DIR [CASES=REGEX] scripts/sanitize.sh [TOOL...]
#
# DIR holds `qgemm`; the tools default to all four; CASES keeps the cases whose name matches.
#
# Each case must pass its check against the CPU reference under the tool too. Prints one line per
# (tool, case) with the tool's error count and writes each tool's full report to
# $OUT/sanitize_<tool>.log (OUT defaults to build-gpu-sanitize/, which also holds the kernel
# cache). Exits non-zero when any tool reports an error or a case fails.
set -u
OUT=${OUT:-build-gpu-sanitize}
BIN=${BIN:-build}
mkdir -p "$OUT"
export QGEMM_CACHE_DIR=${QGEMM_CACHE_DIR:-$OUT/cache}
tool_bin=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer ||
  ls /usr/local/cuda*/bin/compute-sanitizer /opt/nvidia/*/compute-sanitizer 2>/dev/null | head -n 1)}
if [ -z "$tool_bin" ] || [ ! -x "$tool_bin" ]; then
  echo "sanitize.sh: compute-sanitizer not found (set COMPUTE_SANITIZER)" >&2
  exit 2
fi
if [ ! -x "$BIN/qgemm" ]; then
  echo "sanitize.sh: no qgemm binary in '$BIN' (set BIN)" >&2
  exit 2
fi

# name | verify arguments. Sizes are small: the tools slow kernels down 10-100x.
cases="decode_8_token|--weight int4/g128/bf16 --m 1 --n 1024 --k 4096
decode_16_token_marked|--weight int4/g128/bf16 --m 16 --n 1024 --k 4096
decode_zero_points|--weight uint4/g128/fp16/zp --act fp16 --out fp16 --m 7 --n 520 --k 1024
decode_8_bit_channel|--weight int8/channel/bf16 --m 1 --n 1000 --k 1536 --bias
ws_64_cluster_split|--weight int4/g128/bf16 --m 64 --n 2048 --k 2048
ws_256_prescaled_tma|--weight int4/g128/bf16 --m 256 --n 2048 --k 2048
ws_kw2_small_layer|--weight int4/g128/fp16 --act fp16 --out fp16 --m 48 --n 1024 --k 2048
ws_128_tma_fp16|--weight int4/g128/fp16 --act fp16 --out fp32 --m 200 --n 1024 --k 1024
ws_float_zero_points|--weight uint4/g64/bf16/zp_bf16 --m 100 --n 1000 --k 1536
wgmma_wide_float_zero|--weight uint7/g128/fp32/zp_fp32 --m 64 --n 512 --k 1024
wide_token_tail|--weight mxfp4 --m 600 --n 1000 --k 1536 --bias
expand_handoff|--weight int3/g128/bf16 --m 300 --n 512 --k 1024
qdq_backend|--weight nvfp4 --m 70 --n 520 --k 1024 --backend qdq
odd_shape|--weight e4m3/b128x128/fp32 --m 33 --n 4100 --k 2048 --bias
act_order_rows_in_tile|--checkpoint tests/fixtures/gptq/gptqmodel_int4_g64_asym_act_order --layer model.layers.0.mlp.down_proj --m 2
act_order_direct_gather|--checkpoint tests/fixtures/gptq/gptqmodel_int4_g64_asym_act_order --layer model.layers.0.mlp.down_proj --m 40
act_order_staged_gather|--checkpoint tests/fixtures/gptq/gptqmodel_int4_g64_asym_act_order --layer model.layers.0.mlp.down_proj --m 70
act8_fp8_token|--weight e4m3/channel/fp32 --act e4m3/token --m 200 --n 1000 --k 1000
act8_fp8_block|--weight e4m3/b128x128/fp32 --act e4m3/g128/fp32 --m 7 --n 640 --k 1024
act8_int8_token|--weight int8/channel/fp32 --act int8/token --m 64 --n 520 --k 1536 --bias
act_widened_w4a8|--weight int4/g128/bf16 --act e4m3/token --m 70 --n 520 --k 1024
act_two_pass_nvfp4|--weight nvfp4 --act nvfp4 --m 33 --n 512 --k 1024
moe_routed_decode|--weight int4/g128/bf16 --experts 8 --topk 2 --m 3 --n 1000 --k 1024 --reduce
moe_routed_tma|--weight int4/g128/bf16 --experts 4 --topk 2 --m 600 --n 512 --k 1024
moe_routed_act8|--weight e4m3/channel/fp32 --act e4m3/token --experts 4 --topk 2 --m 300 --n 640 --k 768
moe_contiguous|--weight int4/g128/bf16 --experts 4 --layout contiguous --m 300 --n 512 --k 1024
moe_masked|--weight int4/g128/bf16 --experts 4 --layout masked --m 40 --n 512 --k 1024
moe_masked_act8|--weight e4m3/b128x128/fp32 --act e4m3/g128/fp32 --experts 4 --layout masked --m 40 --n 640 --k 768"

tools=("$@")
[ ${#tools[@]} -eq 0 ] && tools=(memcheck racecheck synccheck initcheck)
status=0
for tool in "${tools[@]}"; do
  extra=()
  [ "$tool" = racecheck ] && extra=(--racecheck-report all)
  log="$OUT/sanitize_$tool.log"
  : > "$log"
  while IFS='|' read -r name args; do
    [ -z "$name" ] && continue
    [[ "$name" =~ ${CASES:-.} ]] || continue
    echo "==== $tool $name: qgemm verify $args" >> "$log"
    # shellcheck disable=SC2086
    "$tool_bin" --tool "$tool" "${extra[@]}" --error-exitcode 99 "$BIN/qgemm" verify $args \
      >> "$log" 2>&1
    rc=$?
    # memcheck, synccheck and initcheck end with "ERROR SUMMARY: N errors", racecheck with
    # "RACECHECK SUMMARY: H hazards displayed (N errors, W warnings)".
    errors=$(tail -n 30 "$log" | grep -oE "ERROR SUMMARY: [0-9]+|\([0-9]+ errors" | tail -n 1 |
      grep -oE "[0-9]+")
    printf "%-10s %-24s rc=%-3s errors=%s\n" "$tool" "$name" "$rc" "${errors:-?}"
    [ "$rc" -ne 0 ] && status=1
  done <<< "$cases"
done
exit $status
