#!/usr/bin/env bash
# Session 28, call 7 (typed as the run command): MmaGemmGpu.* and LinearGpu.* on main e77047d.
QGEMM_CACHE_DIR=/tmp/qc_s28t timeout 150 .device/s28/qgemm_gpu_tests --gtest_brief=1 --gtest_filter='MmaGemmGpu.*:LinearGpu.*' > $OUT/gpu_mma_linear.log 2>&1
