#pragma once

#include <cublasLt.h>

#include <string>

#include "qgemm/status.h"

namespace qgemm {

// cuBLASLt, loaded at run time (libcublasLt.so.13, .12, or unversioned), for the qdq backend
// and the benchmark baselines.
#define QGEMM_CUBLASLT_FUNCTIONS(X)                                                                \
  X(cublasLtCreate)                                                                                \
  X(cublasLtDestroy) X(cublasLtGetVersion) X(cublasLtMatmul) X(cublasLtMatmulDescCreate)           \
      X(cublasLtMatmulDescDestroy) X(cublasLtMatmulDescSetAttribute) X(cublasLtMatrixLayoutCreate) \
          X(cublasLtMatrixLayoutDestroy) X(cublasLtMatmulPreferenceCreate)                         \
              X(cublasLtMatmulPreferenceDestroy) X(cublasLtMatmulPreferenceSetAttribute)           \
                  X(cublasLtMatmulAlgoGetHeuristic)

struct CublasLtLibrary {
#define QGEMM_DECLARE(name) decltype(&::name) name = nullptr;
  QGEMM_CUBLASLT_FUNCTIONS(QGEMM_DECLARE)
#undef QGEMM_DECLARE
  cublasLtHandle_t handle = nullptr;  ///< created on first use, needs a current context
  std::string path;
  size_t version = 0;
};

/// cuBLASLt with a handle, loaded once per process; kNotFound when it is not installed.
Expected<const CublasLtLibrary*> cublaslt_library();

/// "cublasLtMatmul: CUBLAS_STATUS_NOT_SUPPORTED (15)".
Status cublas_status(cublasStatus_t status, const char* call);

}  // namespace qgemm
