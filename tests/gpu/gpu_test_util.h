#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "api/host_run.h"
#include "qgemm/device.h"
#include "qgemm/reference.h"
#include "util/random.h"

namespace qgemm::testing {

/// Skips the current test, visibly, when there is no GPU.
#define QGEMM_REQUIRE_GPU()                                                   \
  do {                                                                        \
    if (::qgemm::list_devices().empty())                                      \
      GTEST_SKIP() << "no GPU on this machine: " << ::qgemm::no_gpu_reason(); \
  } while (0)

/// Whether GPU 0 takes sm_90a kernels (wgmma: the 8-bit activation families).
inline bool has_sm90a() {
  const auto devices = list_devices();
  return !devices.empty() && devices[0].arch() == "sm_90a";
}

/// Rows to compare with the reference: all of them up to `full_rows`, else first, last and a
/// random sample.
inline std::vector<int64_t> check_rows(int64_t m, int64_t full_rows, uint64_t seed) {
  std::vector<int64_t> rows;
  if (m <= full_rows) {
    for (int64_t i = 0; i < m; ++i) rows.push_back(i);
    return rows;
  }
  std::mt19937_64 rng(seed);
  rows = {0, m - 1};
  while (int64_t(rows.size()) < full_rows / 2) rows.push_back(int64_t(rng() % uint64_t(m)));
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

/// Outcome of one GPU layer run checked against the CPU reference.
struct CheckedRun {
  Comparison cmp;
  int64_t unwritten = 0;
  std::string backend;
};

/// Quantizes fresh random data, runs it on `backend` on GPU 0 and compares sampled rows with the
/// reference built from the same quantized operands.
inline Expected<CheckedRun> run_and_check(const WeightFormat& wf, const ActFormat& af, DType out,
                                          int64_t m, int64_t n, int64_t k, BackendKind backend,
                                          uint64_t seed, bool bias = false) {
  const auto wv = random_normal(n * k, seed, 0.05f);
  auto w = quantize_weights(HostValues::of(wv), 1, n, k, wf);
  if (!w) return w.status();
  const auto av = random_normal(m * k, seed + 1, 1.0f);
  auto a = quantize_activations(HostValues::of(av), m, k, af);
  if (!a) return a.status();
  std::vector<uint8_t> bias_bytes;
  std::vector<float> bias_values;
  if (bias) {
    const auto b = random_normal(n, seed + 2, 0.5f);
    const size_t width = (out.bits + 7) / 8;
    bias_bytes.resize(n * width);
    for (int64_t i = 0; i < n; ++i) {
      const uint32_t code = encode(out, b[i]);
      std::memcpy(&bias_bytes[i * width], &code, width);
      bias_values.push_back(static_cast<float>(decode(out, code)));
    }
  }
  auto run = run_linear_on_host_data(*w, *a, bias_bytes, out, backend, 0);
  if (!run) return run.status();
  const auto rows = check_rows(m, 128, seed + 3);
  auto ref = reference_gemm(*a, *w, bias_values, rows);
  if (!ref) return ref.status();
  std::vector<double> got;
  for (int64_t r : rows)
    got.insert(got.end(), run->c.begin() + r * n, run->c.begin() + (r + 1) * n);
  return CheckedRun{compare(*ref, got), run->unwritten, run->backend};
}

/// Expects `r` to have run, written every output, produced no NaN and matched the reference
/// within `tolerance` (relative Frobenius error). Fatal when the run failed: call it inside
/// ASSERT_NO_FATAL_FAILURE.
inline void expect_matches_reference(const Expected<CheckedRun>& r, double tolerance) {
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->unwritten, 0) << "outputs left unwritten";
  EXPECT_EQ(r->cmp.nan_count, 0);
  EXPECT_LE(r->cmp.rel_frobenius, tolerance);
}

}  // namespace qgemm::testing
