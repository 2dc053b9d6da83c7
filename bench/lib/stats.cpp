#include "bench/lib/stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace qgemm::bench {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Bytes of `rows` rows of `cols` codes of `bits` bits, each row padded to a whole byte.
double packed_bytes(int64_t rows, int64_t cols, int bits) {
  return static_cast<double>(rows) * static_cast<double>((cols * bits + 7) / 8);
}

}  // namespace

TimingStats summarize(std::vector<double> samples_us) {
  TimingStats s{kNaN, kNaN, kNaN, kNaN, static_cast<int>(samples_us.size())};
  if (samples_us.empty()) return s;
  // NOTE: sorting with NaN breaks strict weak ordering, so check before sorting.
  if (std::any_of(samples_us.begin(), samples_us.end(), [](double v) { return std::isnan(v); }))
    return s;
  std::sort(samples_us.begin(), samples_us.end());
  const size_t n = samples_us.size();
  s.median_us = n % 2 == 1 ? samples_us[n / 2] : 0.5 * (samples_us[n / 2 - 1] + samples_us[n / 2]);
  s.min_us = samples_us.front();
  s.max_us = samples_us.back();
  s.mean_us = std::accumulate(samples_us.begin(), samples_us.end(), 0.0) / static_cast<double>(n);
  return s;
}

double dtype_bytes(qgemm::DType type) { return static_cast<double>((type.bits + 7) / 8); }

double weight_bytes(int64_t n, int64_t k, const qgemm::WeightFormat& w) {
  double bytes = packed_bytes(n, k, w.type.bits);
  const double scales = static_cast<double>(w.scale_rows(n)) * static_cast<double>(w.scale_cols(k));
  bytes += scales * dtype_bytes(w.scale_type);
  // Integer zero points are codes of at most 8 bits, stored one byte each.
  if (w.zero_point == ZeroPointKind::kInteger) bytes += scales;
  if (w.zero_point == ZeroPointKind::kFloat) bytes += scales * dtype_bytes(w.zero_type);
  if (w.global_scale) bytes += 4.0;
  return bytes;
}

double activation_bytes(int64_t m, int64_t k, const qgemm::ActFormat& a) {
  double bytes = packed_bytes(m, k, a.type.bits);
  switch (a.scale_kind) {
    case ActScaleKind::kNone:
      break;
    case ActScaleKind::kTensor:
      bytes += dtype_bytes(a.scale_type);
      break;
    case ActScaleKind::kToken:
    case ActScaleKind::kGroup:
      bytes +=
          static_cast<double>(m) * static_cast<double>(a.scale_cols(k)) * dtype_bytes(a.scale_type);
      break;
  }
  return bytes;
}

Traffic dense_traffic(int64_t m, int64_t n, int64_t k, const qgemm::WeightFormat& w,
                      const qgemm::ActFormat& a, qgemm::DType out) {
  const double outputs = static_cast<double>(m) * static_cast<double>(n) * dtype_bytes(out);
  return {weight_bytes(n, k, w) + activation_bytes(m, k, a) + outputs,
          2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k)};
}

Traffic moe_traffic(int64_t tokens, int top_k, int64_t experts_touched, int64_t n, int64_t k,
                    const qgemm::WeightFormat& w, const qgemm::ActFormat& a, qgemm::DType out) {
  // NOTE: a token routed to several experts is gathered from the same row, so the activations
  // are counted once; outputs are one row per (token, expert) pair, before any top-k reduction.
  const double rows = static_cast<double>(tokens) * static_cast<double>(top_k);
  const double outputs = rows * static_cast<double>(n) * dtype_bytes(out);
  return {static_cast<double>(experts_touched) * weight_bytes(n, k, w) +
              activation_bytes(tokens, k, a) + outputs,
          2.0 * rows * static_cast<double>(n) * static_cast<double>(k)};
}

double gbps(double bytes, double us) { return us > 0 ? bytes / us * 1e-3 : kNaN; }

double tflops(double flops, double us) { return us > 0 ? flops / us * 1e-6 : kNaN; }

}  // namespace qgemm::bench
