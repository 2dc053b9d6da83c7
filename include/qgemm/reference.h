#pragma once

#include <cstdint>
#include <vector>

#include "qgemm/quantized.h"
#include "qgemm/status.h"

namespace qgemm {

/// Top-k routing of tokens to experts for an MoE layer.
struct Routing {
  int64_t tokens = 0;
  int top_k = 0;
  std::vector<int32_t> expert_ids;  ///< [tokens, top_k]; -1 = expert not on this device
  std::vector<float> weights;       ///< [tokens, top_k]; used when the output is reduced

  /// Checks sizes and that every id is -1 or in [0, experts).
  Status validate(int64_t experts) const;
};

/// The CPU reference dense GEMM: C[m, n] = sum_k a[m, k] * w[n, k] (+ bias[n]) from exactly
/// dequantized operands, accumulated in double on all cores. Any M, N, K the formats allow.
/// `rows` selects which rows of C to compute (empty = all); the result is [rows, N] row-major.
Expected<std::vector<double>> reference_gemm(const QuantizedActivations& a,
                                             const QuantizedWeight& w,
                                             const std::vector<float>& bias = {},
                                             const std::vector<int64_t>& rows = {});

/// The CPU reference MoE layer over expert stack w [E, N, K] and token activations a [T, K].
/// Unreduced (reduce = false): C is [T * top_k, N], row t * top_k + j = a[t] . w[id(t, j)]^T
/// (+ bias[id]), zero where the id is -1. Reduced: C is [T, N] = sum_j weight(t, j) * that row.
/// `bias`, when given, is [E, N].
Expected<std::vector<double>> reference_moe(const QuantizedActivations& a, const QuantizedWeight& w,
                                            const Routing& routing, bool reduce,
                                            const std::vector<float>& bias = {});

/// How far a result is from the reference.
struct Comparison {
  double rel_frobenius = 0;  ///< ||got - ref|| / ||ref||
  double max_abs_error = 0;
  int64_t nan_count = 0;  ///< NaN or inf values in `got`
  int64_t count = 0;
  /// No NaN and rel_frobenius <= tolerance.
  bool within(double tolerance) const { return nan_count == 0 && rel_frobenius <= tolerance; }
};

Comparison compare(const std::vector<double>& reference, const std::vector<double>& got);

/// The accepted relative Frobenius error for an output type: 5e-3 bf16, 2e-3 fp16. fp32 outputs
/// carry the precision the weights have in the activation type (`act`), where backends that
/// dequantize weights (the cuBLAS hand-off, qdq) or subtract float zero points round them:
/// 5e-4 with fp16 activations, 3e-3 with any other.
double tolerance_for(DType output, DType act);

}  // namespace qgemm
