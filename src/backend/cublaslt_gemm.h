#pragma once

#include <cublasLt.h>
#include <cuda.h>

#include <memory>

#include "qgemm/dtype.h"
#include "qgemm/status.h"

namespace qgemm {

/// C[m, n] = A[m, k] . W[n, k]^T (+ bias[n]) through cuBLASLt, row-major operands: the "TN"
/// column-major GEMM cuBLAS is fastest at. With fp8 operands, per-row fp32 scales of A (m) and W
/// (n) can be applied (outer-vector scaling), or single scalars where that mode is missing. Int8
/// operands give the exact int32 sums, unscaled.
struct LtGemmShape {
  int64_t m = 0, n = 0, k = 0;
  DType a_type = DType::bf16();  ///< bf16, fp16, e4m3 or int8 (then out_type int32)
  DType w_type = DType::bf16();
  DType out_type = DType::bf16();
  int64_t lda = 0;          ///< activation row stride (elements), >= k
  int64_t ldw = 0;          ///< weight row stride (elements), >= k
  bool bias = false;        ///< bias [n] in the output type
  bool row_scales = false;  ///< fp8: scale vectors for A rows and W rows
};

class LtGemm {
 public:
  /// Operand pointers must be aligned to this many bytes (run() refuses others).
  static constexpr uint32_t kMinAlignment = 16;

  /// Plans the GEMM (heuristic algorithm choice) for a workspace of `workspace_bytes`.
  static Expected<std::shared_ptr<LtGemm>> create(const LtGemmShape& shape, size_t workspace_bytes);
  ~LtGemm();

  Status run(const void* a, const void* w, void* c, const void* bias, const float* a_scales,
             const float* w_scales, void* workspace, size_t workspace_bytes, CUstream stream) const;

  const LtGemmShape& shape() const { return shape_; }
  /// Whether fp8 per-row scales are applied as vectors (false: scalar fallback was needed).
  bool vector_scales() const { return vector_scales_; }

 private:
  LtGemm() = default;
  LtGemmShape shape_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_layout_ = nullptr, b_layout_ = nullptr, d_layout_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  bool vector_scales_ = false;
};

}  // namespace qgemm
