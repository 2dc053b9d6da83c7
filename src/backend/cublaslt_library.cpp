#include "backend/cublaslt_library.h"
#include "util/error.h"

#include <dlfcn.h>

#include <mutex>

namespace qgemm {
namespace {

Expected<const CublasLtLibrary*> load() {
  static CublasLtLibrary lib;
  void* handle = nullptr;
  for (const char* name : {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"}) {
    handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      lib.path = name;
      break;
    }
  }
  if (handle == nullptr)
    return Status(ErrorCode::kNotFound, "cuBLASLt not found (libcublasLt.so.13/.12)");
#define QGEMM_RESOLVE(name)                                              \
  lib.name = reinterpret_cast<decltype(lib.name)>(dlsym(handle, #name)); \
  if (lib.name == nullptr) return Status(ErrorCode::kNotFound, lib.path + " lacks " #name);
  QGEMM_CUBLASLT_FUNCTIONS(QGEMM_RESOLVE)
#undef QGEMM_RESOLVE
  lib.version = lib.cublasLtGetVersion();
  QGEMM_RETURN_IF_ERROR(cublas_status(lib.cublasLtCreate(&lib.handle), "cublasLtCreate"));
  return static_cast<const CublasLtLibrary*>(&lib);
}

}  // namespace

Expected<const CublasLtLibrary*> cublaslt_library() {
  static std::once_flag once;
  static Expected<const CublasLtLibrary*> result = Status(ErrorCode::kInternal, "not loaded");
  std::call_once(once, [] { result = load(); });
  return result;
}

Status cublas_status(cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return Status();
  return Status(ErrorCode::kCudaError, str(call, ": cuBLAS status ", int(status)));
}

}  // namespace qgemm
