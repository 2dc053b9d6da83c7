#include "backend/cublaslt_gemm.h"

#include "backend/cublaslt_library.h"
#include "util/error.h"

namespace qgemm {
namespace {

Expected<cudaDataType_t> cuda_type(DType t) {
  if (t == DType::bf16()) return CUDA_R_16BF;
  if (t == DType::fp16()) return CUDA_R_16F;
  if (t == DType::fp32()) return CUDA_R_32F;
  if (t == DType::e4m3()) return CUDA_R_8F_E4M3;
  if (t == DType::e5m2()) return CUDA_R_8F_E5M2;
  if (t == DType::int_bits(8)) return CUDA_R_8I;
  if (t == DType::int_bits(32)) return CUDA_R_32I;
  return unsupported(str("cuBLASLt GEMM: type ", t.name(), " is not supported here"));
}

}  // namespace

Expected<std::shared_ptr<LtGemm>> LtGemm::create(const LtGemmShape& shape, size_t workspace_bytes) {
  auto lib_or = cublaslt_library();
  if (!lib_or) return lib_or.status();
  const CublasLtLibrary* lib = *lib_or;
  auto a_type = cuda_type(shape.a_type), w_type = cuda_type(shape.w_type),
       out_type = cuda_type(shape.out_type);
  for (auto* t : {&a_type, &w_type, &out_type})
    if (!*t) return t->status();
  const bool int8 = shape.a_type == DType::int_bits(8);
  const bool fp8 = shape.a_type.bits == 8 && !int8;
  if (int8 != (shape.out_type == DType::int_bits(32)))
    return unsupported("cuBLASLt GEMM: int8 operands go with int32 output, and only they");
  std::shared_ptr<LtGemm> g(new LtGemm());
  g->shape_ = shape;
  // int8: exact int32 sums (alpha and beta int32 too); no scales.
  QGEMM_RETURN_IF_ERROR(cublas_status(
      lib->cublasLtMatmulDescCreate(&g->desc_, int8 ? CUBLAS_COMPUTE_32I : CUBLAS_COMPUTE_32F,
                                    int8 ? CUDA_R_32I : CUDA_R_32F),
      "cublasLtMatmulDescCreate"));
  auto set = [&](cublasLtMatmulDescAttributes_t attr, const void* v, size_t size) {
    return cublas_status(lib->cublasLtMatmulDescSetAttribute(g->desc_, attr, v, size),
                         "cublasLtMatmulDescSetAttribute");
  };
  // Column-major view: D (n x m) = W^T-op (n x k) * A (k x m).
  const cublasOperation_t trans_a = CUBLAS_OP_T, trans_b = CUBLAS_OP_N;
  QGEMM_RETURN_IF_ERROR(set(CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof trans_a));
  QGEMM_RETURN_IF_ERROR(set(CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof trans_b));
  if (shape.bias) {
    const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
    QGEMM_RETURN_IF_ERROR(set(CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof epilogue));
    const int32_t bias_type = *out_type;
    QGEMM_RETURN_IF_ERROR(set(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bias_type, sizeof bias_type));
  }
  if (fp8 && shape.row_scales) {
    const int32_t mode = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
    g->vector_scales_ = set(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode, sizeof mode).ok() &&
                        set(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &mode, sizeof mode).ok();
  }
  QGEMM_RETURN_IF_ERROR(cublas_status(
      lib->cublasLtMatrixLayoutCreate(&g->a_layout_, *w_type, shape.k, shape.n, shape.ldw),
      "layout W"));
  QGEMM_RETURN_IF_ERROR(cublas_status(
      lib->cublasLtMatrixLayoutCreate(&g->b_layout_, *a_type, shape.k, shape.m, shape.lda),
      "layout A"));
  QGEMM_RETURN_IF_ERROR(cublas_status(
      lib->cublasLtMatrixLayoutCreate(&g->d_layout_, *out_type, shape.n, shape.m, shape.n),
      "layout C"));

  // Pick the heuristic's first algorithm; with vector scales unsupported, retry with scalars.
  for (int attempt = 0; attempt < 2; ++attempt) {
    cublasLtMatmulPreference_t pref;
    QGEMM_RETURN_IF_ERROR(cublas_status(lib->cublasLtMatmulPreferenceCreate(&pref), "preference"));
    lib->cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                              &workspace_bytes, sizeof workspace_bytes);
    // NOTE: callers pass 16-byte aligned pointers (run() checks); the default assumes 256.
    const uint32_t alignment = kMinAlignment;
    for (auto attr :
         {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
          CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES})
      lib->cublasLtMatmulPreferenceSetAttribute(pref, attr, &alignment, sizeof alignment);
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    cublasStatus_t st =
        lib->cublasLtMatmulAlgoGetHeuristic(lib->handle, g->desc_, g->a_layout_, g->b_layout_,
                                            g->d_layout_, g->d_layout_, pref, 1, &result, &found);
    lib->cublasLtMatmulPreferenceDestroy(pref);
    if (st == CUBLAS_STATUS_SUCCESS && found > 0) {
      g->algo_ = result.algo;
      return g;
    }
    if (!g->vector_scales_) break;
    const int32_t scalar = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
    QGEMM_RETURN_IF_ERROR(set(CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &scalar, sizeof scalar));
    QGEMM_RETURN_IF_ERROR(set(CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &scalar, sizeof scalar));
    g->vector_scales_ = false;
  }
  return unsupported(str("cuBLASLt has no algorithm for m=", shape.m, " n=", shape.n,
                         " k=", shape.k, " ", shape.a_type.name(), " x ", shape.w_type.name(),
                         " -> ", shape.out_type.name()));
}

LtGemm::~LtGemm() {
  auto lib = cublaslt_library();
  if (!lib) return;
  if (desc_) (*lib)->cublasLtMatmulDescDestroy(desc_);
  for (auto l : {a_layout_, b_layout_, d_layout_})
    if (l) (*lib)->cublasLtMatrixLayoutDestroy(l);
}

Status LtGemm::run(const void* a, const void* w, void* c, const void* bias, const float* a_scales,
                   const float* w_scales, void* workspace, size_t workspace_bytes,
                   CUstream stream) const {
  auto lib_or = cublaslt_library();
  if (!lib_or) return lib_or.status();
  const CublasLtLibrary* lib = *lib_or;
  auto set = [&](cublasLtMatmulDescAttributes_t attr, const void* v, size_t size) {
    return cublas_status(lib->cublasLtMatmulDescSetAttribute(desc_, attr, v, size),
                         "cublasLtMatmulDescSetAttribute");
  };
  if (shape_.bias)
    QGEMM_RETURN_IF_ERROR(set(CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias));
  const bool int8 = shape_.a_type == DType::int_bits(8);
  if (shape_.a_type.bits == 8 && !int8) {
    // cuBLAS "A" is our W and "B" our activations.
    QGEMM_RETURN_IF_ERROR(set(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &w_scales, sizeof w_scales));
    QGEMM_RETURN_IF_ERROR(set(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &a_scales, sizeof a_scales));
  }
  for (const void* ptr : {a, w, static_cast<const void*>(c), bias})
    if (reinterpret_cast<uintptr_t>(ptr) % kMinAlignment != 0)
      return invalid_argument(
          str("cuBLASLt GEMM: pointer ", ptr, " is not ", kMinAlignment, "-byte aligned"));
  const float alpha = 1.0f, beta = 0.0f;
  const int32_t alpha_i = 1, beta_i = 0;
  return cublas_status(
      lib->cublasLtMatmul(lib->handle, desc_, int8 ? static_cast<const void*>(&alpha_i) : &alpha, w,
                          a_layout_, a, b_layout_, int8 ? static_cast<const void*>(&beta_i) : &beta,
                          c, d_layout_, c, d_layout_, &algo_, workspace, workspace_bytes,
                          reinterpret_cast<cudaStream_t>(stream)),
      "cublasLtMatmul");
}

}  // namespace qgemm
