#!/usr/bin/env bash
# Prepared in session 32 for the next device time (not run): Nsight Compute's full set for the
# f16 ws tile at M = 256 (int4/g128 and int4/channel) and for cuBLAS's kernel at M = 1024 (the
# jit backend hands off there: mma_dequant, then cuBLASLt), 8192^2, to compare tensor-pipe
# utilization, issue slots and the SM clock (SM active cycles / duration) of our tile with
# cuBLAS's. Session 10's report of the then 60-us tile (`session10/ncu_default_cases.log`):
# tensor pipe 47%, issue slots 36%, L1 34%, 0.64 eligible warps per scheduler, 1.70 GHz.
# Then per-instruction stall samples of the M = 16 and M = 256 kernels (no M = 16 samples exist
# yet; read with scripts/sass_stalls.py $OUT/sass_m16.csv).
# Usage: BIN=<carried binaries> bash bench/results/h200/session32/scripts/next_ncu.sh
export NCU_CASES="int4_g128_m256|int4/g128/bf16|256|8192|8192|mma_gemm|1
int4_channel_m256|int4/channel/bf16|256|8192|8192|mma_gemm|1
int4_g128_m1024_handoff|int4/g128/bf16|1024|8192|8192|mma_dequant|gemm|xmma|cutlass|nvjet|2"
QGEMM_NO_PDL=1 NCU_SRC_M="16 256" bash scripts/device_run.sh ncu ncusrc
