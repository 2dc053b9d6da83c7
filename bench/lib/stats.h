#pragma once

#include <cstdint>
#include <vector>

#include "qgemm/dtype.h"
#include "qgemm/format.h"

namespace qgemm::bench {

/// Summary of repeated timings of one measurement, in microseconds.
struct TimingStats {
  double median_us;  ///< odd count: the middle sample; even count: mean of the two middle ones
  double min_us;
  double max_us;
  double mean_us;
  int samples;  ///< how many samples went in (NaN samples included in the count: see summarize)
};

/// Median, min, max and mean of `samples_us`. An empty list gives NaN everywhere and samples = 0;
/// any NaN sample makes every statistic NaN, so a broken timing is never mistaken for a fast one.
TimingStats summarize(std::vector<double> samples_us);

/// Bytes moved and floating-point operations of one GEMM launch.
struct Traffic {
  double bytes;  ///< minimum memory traffic: every input read once, every output written once
  double flops;  ///< 2 * rows * N * K (multiply + add)
};

/// Bytes per element of a scale or zero-point type: 1 for 8-bit types, 2 for fp16/bf16, 4 fp32.
double dtype_bytes(qgemm::DType type);

/// Bytes of one [n, k] weight (one expert) in format `w`:
/// packed codes ceil(K*bits/8) per row times N, plus scales (scale_rows x scale_cols elements of
/// the scale type), plus zero points (integer: 1 byte each; float: the zero type's size), plus 4
/// for a global fp32 scale.
double weight_bytes(int64_t n, int64_t k, const qgemm::WeightFormat& w);

/// Bytes of `m` activation rows of length `k` in format `a`: packed codes ceil(K*bits/8) per row,
/// plus scales (token: one per row; group: scale_cols per row; tensor: one in total).
double activation_bytes(int64_t m, int64_t k, const qgemm::ActFormat& a);

/// Traffic of a dense [m, k] x [n, k]^T GEMM writing an [m, n] output of type `out`
/// (BENCHMARKING.md point 5): weights + scales + zero points + activations + activation scales +
/// outputs; flops = 2*M*N*K.
Traffic dense_traffic(int64_t m, int64_t n, int64_t k, const qgemm::WeightFormat& w,
                      const qgemm::ActFormat& a, qgemm::DType out);

/// Traffic of a routed MoE GEMM: `tokens` rows each sent to `top_k` experts, of which
/// `experts_touched` received at least one row. Weights count for the touched experts only;
/// activations are read once per token; one output row is written per routed (token, expert)
/// pair; flops = 2 * tokens * top_k * N * K.
Traffic moe_traffic(int64_t tokens, int top_k, int64_t experts_touched, int64_t n, int64_t k,
                    const qgemm::WeightFormat& w, const qgemm::ActFormat& a, qgemm::DType out);

/// Throughput in GB/s (1e9 bytes per second) of `bytes` moved in `us` microseconds; NaN if
/// us <= 0 or NaN.
double gbps(double bytes, double us);

/// Throughput in TFLOPS (1e12 flops per second) of `flops` done in `us` microseconds; NaN if
/// us <= 0 or NaN.
double tflops(double flops, double us);

}  // namespace qgemm::bench
