#include "backend/cublaslt_library.h"
#include "util/dynamic_library.h"
#include "util/error.h"

namespace qgemm {
namespace {

Expected<const CublasLtLibrary*> load() {
  static CublasLtLibrary lib;
  const OpenedLibrary opened =
      open_first_library({"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"});
  if (opened.handle == nullptr)
    return Status(ErrorCode::kNotFound, "cuBLASLt not found (libcublasLt.so.13/.12)");
  lib.path = opened.name;
#define QGEMM_RESOLVE(name) \
  QGEMM_RETURN_IF_ERROR(resolve_symbol(opened.handle, lib.path, #name, lib.name));
  QGEMM_CUBLASLT_FUNCTIONS(QGEMM_RESOLVE)
#undef QGEMM_RESOLVE
  lib.version = lib.cublasLtGetVersion();
  QGEMM_RETURN_IF_ERROR(cublas_status(lib.cublasLtCreate(&lib.handle), "cublasLtCreate"));
  return static_cast<const CublasLtLibrary*>(&lib);
}

}  // namespace

Expected<const CublasLtLibrary*> cublaslt_library() { return loaded_once<load>(); }

Status cublas_status(cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return Status();
  return Status(ErrorCode::kCudaError, str(call, ": cuBLAS status ", int(status)));
}

}  // namespace qgemm
