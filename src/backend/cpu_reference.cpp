#include <algorithm>
#include <cmath>
#include <random>

#include "qgemm/reference.h"
#include "quant/dequantize_rows.h"
#include "util/error.h"
#include "util/memory.h"
#include "util/parallel.h"
#include "util/random.h"

namespace qgemm {
namespace {

// Rows of A dequantized to double, [rows.size(), K].
std::vector<double> dequantize_rows(const QuantizedActivations& a,
                                    const std::vector<int64_t>& rows) {
  std::vector<double> out(rows.size() * a.k);
  parallel_for(int64_t(rows.size()), 4, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      for (int64_t c = 0; c < a.k; ++c) out[i * a.k + c] = a.dequantize(rows[i], c);
  });
  return out;
}

// One unit of reference work: output row `out_row` = dot(A row `a_row`, W[expert]) * factor.
struct RowJob {
  int64_t a_row;
  int64_t out_row;
  double factor;
};

// For every expert, the jobs routed to it. out[out_row, n] += factor * (a . w[e, n] + bias[e, n]).
// Work is split over (expert, n): each thread dequantizes one weight row at a time into double and
// reuses it for every job of that expert, so memory stays O(K) per thread.
void accumulate(const std::vector<double>& a_deq, int64_t k, const QuantizedWeight& w,
                const std::vector<std::vector<RowJob>>& jobs, const std::vector<float>& bias,
                std::vector<double>& out) {
  const int64_t n = w.n;
  parallel_for(w.experts * n, 8, [&](int64_t begin, int64_t end) {
    std::vector<double> w_row(k);
    for (int64_t en = begin; en < end; ++en) {
      const int64_t e = en / n, col = en % n;
      if (jobs[e].empty()) continue;
      dequantize_row(w, e, col, w_row.data());
      const double b = bias.empty() ? 0.0 : double(bias[e * n + col]);
      for (const RowJob& job : jobs[e]) {
        const double* a_row = &a_deq[job.a_row * k];
        double acc = 0;
        for (int64_t c = 0; c < k; ++c) acc += a_row[c] * w_row[c];
        // NOTE: each (out_row, col) belongs to one (expert, col) unit within a call; the
        // reduced MoE caller guarantees it by making one call per top-k slot.
        out[job.out_row * n + col] += job.factor * (acc + b);
      }
    }
  });
}

Status check_pair(const QuantizedActivations& a, const QuantizedWeight& w) {
  QGEMM_RETURN_IF_ERROR(a.validate());
  QGEMM_RETURN_IF_ERROR(w.validate());
  if (a.k != w.k)
    return invalid_argument(str("activations have K=", a.k, " but the weight has K=", w.k));
  return Status();
}

}  // namespace

Status Routing::validate(int64_t experts) const {
  if (tokens < 0 || top_k <= 0)
    return invalid_argument(
        str("routing: tokens=", tokens, ", top_k=", top_k, "; top_k must be positive"));
  const auto want = static_cast<size_t>(tokens * top_k);
  if (expert_ids.size() != want || weights.size() != want)
    return invalid_argument(str("routing: ", expert_ids.size(), " ids and ", weights.size(),
                                " weights for tokens=", tokens, " x top_k=", top_k, " = ", want));
  for (size_t i = 0; i < expert_ids.size(); ++i) {
    if (expert_ids[i] < -1 || expert_ids[i] >= experts)
      return invalid_argument(str("routing: expert id ", expert_ids[i], " at slot ", i,
                                  " is out of range; ids are -1 (not on this device) or 0..",
                                  experts - 1));
  }
  return Status();
}

Routing random_routing(int64_t tokens, int top_k, int64_t experts, uint64_t seed, int dropped) {
  Routing r;
  r.tokens = tokens;
  r.top_k = top_k;
  std::mt19937_64 rng(seed);
  std::vector<int32_t> ids(experts);
  for (int64_t e = 0; e < experts; ++e) ids[e] = static_cast<int32_t>(e);
  std::uniform_real_distribution<float> logit(0.0f, 2.0f);
  for (int64_t t = 0; t < tokens; ++t) {
    std::shuffle(ids.begin(), ids.end(), rng);
    float sum = 0;
    std::vector<float> wts(top_k);
    for (int j = 0; j < top_k; ++j) sum += (wts[j] = std::exp(logit(rng)));
    for (int j = 0; j < top_k; ++j) {
      const bool drop = j >= experts || int(rng() % 16) < dropped;
      r.expert_ids.push_back(drop ? -1 : ids[j]);
      r.weights.push_back(wts[j] / sum);
    }
  }
  return r;
}

namespace {

Expected<std::vector<double>> reference_gemm_checked(const QuantizedActivations& a,
                                                     const QuantizedWeight& w,
                                                     const std::vector<float>& bias,
                                                     const std::vector<int64_t>& rows) {
  if (w.experts != 1)
    return invalid_argument(str("reference_gemm: the weight has ", w.experts,
                                " experts; use reference_moe for expert stacks"));
  if (!bias.empty() && int64_t(bias.size()) != w.n)
    return invalid_argument(str("reference_gemm: bias has ", bias.size(), " values, N=", w.n));
  std::vector<int64_t> picked = rows;
  if (picked.empty()) {
    picked.resize(a.m);
    for (int64_t i = 0; i < a.m; ++i) picked[i] = i;
  }
  for (int64_t r : picked) {
    if (r < 0 || r >= a.m)
      return invalid_argument(str("reference_gemm: row ", r, " is outside M=", a.m));
  }
  const std::vector<double> a_deq = dequantize_rows(a, picked);
  std::vector<std::vector<RowJob>> jobs(1);
  for (int64_t i = 0; i < int64_t(picked.size()); ++i) jobs[0].push_back({i, i, 1.0});
  std::vector<double> out(picked.size() * w.n, 0.0);
  accumulate(a_deq, a.k, w, jobs, bias, out);
  return out;
}

}  // namespace

Expected<std::vector<double>> reference_gemm(const QuantizedActivations& a,
                                             const QuantizedWeight& w,
                                             const std::vector<float>& bias,
                                             const std::vector<int64_t>& rows) {
  return out_of_memory_as_status("reference_gemm", [&]() -> Expected<std::vector<double>> {
    QGEMM_RETURN_IF_ERROR(check_pair(a, w));
    const int64_t out_rows = rows.empty() ? a.m : int64_t(rows.size());
    // The result and the dequantized activation rows, in double.
    QGEMM_RETURN_IF_ERROR(check_host_memory(
        str("reference_gemm: ", out_rows, " rows of N=", w.n, " and K=", a.k),
        static_cast<int64_t>(std::min(8.0 * double(out_rows) * double(w.n + a.k), 9e18))));
    return reference_gemm_checked(a, w, bias, rows);
  });
}

Expected<std::vector<double>> reference_moe(const QuantizedActivations& a, const QuantizedWeight& w,
                                            const Routing& routing, bool reduce,
                                            const std::vector<float>& bias) {
  QGEMM_RETURN_IF_ERROR(check_pair(a, w));
  QGEMM_RETURN_IF_ERROR(routing.validate(w.experts));
  if (routing.tokens != a.m)
    return invalid_argument(str("reference_moe: routing has ", routing.tokens,
                                " tokens but the activations have M=", a.m));
  if (!bias.empty() && int64_t(bias.size()) != w.experts * w.n)
    return invalid_argument(
        str("reference_moe: bias has ", bias.size(), " values, E x N = ", w.experts * w.n));
  std::vector<int64_t> all_rows(a.m);
  for (int64_t i = 0; i < a.m; ++i) all_rows[i] = i;
  const std::vector<double> a_deq = dequantize_rows(a, all_rows);
  const int64_t out_rows = reduce ? a.m : a.m * routing.top_k;
  std::vector<double> out(out_rows * w.n, 0.0);
  // Reduced rows gather several experts; run one top-k slot at a time so that no two threads
  // add into the same output element.
  const int passes = reduce ? routing.top_k : 1;
  for (int pass = 0; pass < passes; ++pass) {
    std::vector<std::vector<RowJob>> jobs(w.experts);
    for (int64_t t = 0; t < a.m; ++t)
      for (int j = 0; j < routing.top_k; ++j) {
        if (reduce && j != pass) continue;
        const int64_t slot = t * routing.top_k + j;
        const int32_t e = routing.expert_ids[slot];
        if (e < 0) continue;
        jobs[e].push_back({t, reduce ? t : slot, reduce ? double(routing.weights[slot]) : 1.0});
      }
    accumulate(a_deq, a.k, w, jobs, bias, out);
  }
  return out;
}

Comparison compare(const std::vector<double>& reference, const std::vector<double>& got) {
  Comparison c;
  c.count = int64_t(std::min(reference.size(), got.size()));
  double err2 = 0, ref2 = 0;
  for (int64_t i = 0; i < c.count; ++i) {
    if (!std::isfinite(got[i])) {
      ++c.nan_count;
      continue;
    }
    const double d = got[i] - reference[i];
    err2 += d * d;
    ref2 += reference[i] * reference[i];
    c.max_abs_error = std::max(c.max_abs_error, std::fabs(d));
  }
  if (reference.size() != got.size()) c.nan_count += 1;  // a size mismatch never passes
  c.rel_frobenius = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  return c;
}

double tolerance_for(DType output, DType act) {
  if (output == DType::bf16()) return 5e-3;
  if (output == DType::fp16()) return 2e-3;
  // NOTE: a weight rounded to the activation type is off by up to half an ulp: 2^-12 relative in
  // fp16, 2^-9 in bf16. A format sweep with fp32 output stays under these bounds: up to 2.2e-4
  // with fp16 activations (hand-off of uint8/g16) and 1.8e-3 with bf16 (float zero points,
  // uint2/g512).
  return act == DType::fp16() ? 5e-4 : 3e-3;
}

}  // namespace qgemm
