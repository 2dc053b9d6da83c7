#include "jit/cuda_driver.h"
#include "util/dynamic_library.h"
#include "util/error.h"

#include <dlfcn.h>

namespace qgemm {
namespace {

// NOTE: entry points are requested at the CUDA 12.0 ABI, which is what the declarations in
// cuda.h describe. Asking for CUDA_VERSION (13.0) returns newer variants with other signatures:
// cuCtxSynchronize becomes cuCtxSynchronize_v2(CUcontext), and calling it with no argument
// fails with CUDA_ERROR_CONTEXT_IS_DESTROYED.
constexpr int kDriverApiVersion = 12000;

Expected<const CudaDriver*> load_driver() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr)
    return Status(ErrorCode::kNotFound,
                  str("no CUDA driver: libcuda.so.1 could not be loaded (", dlerror(), ")"));
  using GetProcAddress =
      CUresult (*)(const char*, void**, int, cuuint64_t, CUdriverProcAddressQueryResult*);
  auto get_proc = reinterpret_cast<GetProcAddress>(dlsym(lib, "cuGetProcAddress_v2"));
  if (get_proc == nullptr)
    return Status(ErrorCode::kNotFound,
                  "the CUDA driver is too old: cuGetProcAddress_v2 is missing (need CUDA 12+)");
  static CudaDriver driver;
#define QGEMM_RESOLVE(name)                                                             \
  {                                                                                     \
    void* fn = nullptr;                                                                 \
    CUdriverProcAddressQueryResult found;                                               \
    if (get_proc(#name, &fn, kDriverApiVersion, CU_GET_PROC_ADDRESS_DEFAULT, &found) != \
            CUDA_SUCCESS ||                                                             \
        fn == nullptr)                                                                  \
      return Status(ErrorCode::kNotFound, "the CUDA driver lacks " #name);              \
    driver.name = reinterpret_cast<decltype(driver.name)>(fn);                          \
  }
  QGEMM_DRIVER_FUNCTIONS(QGEMM_RESOLVE)
#undef QGEMM_RESOLVE
  CUresult r = driver.cuInit(0);
  if (r != CUDA_SUCCESS) {
    const char* name = nullptr;
    driver.cuGetErrorName(r, &name);
    return Status(ErrorCode::kNotFound,
                  str("cuInit failed: ", name ? name : "unknown error", " (no usable GPU?)"));
  }
  driver.cuDriverGetVersion(&driver.version);
  return static_cast<const CudaDriver*>(&driver);
}

}  // namespace

Expected<const CudaDriver*> cuda_driver() { return loaded_once<load_driver>(); }

Status cuda_status(CUresult result, const char* call) {
  if (result == CUDA_SUCCESS) return Status();
  const char* name = "unknown";
  const char* text = "";
  if (auto d = cuda_driver(); d.ok()) {
    (*d)->cuGetErrorName(result, &name);
    (*d)->cuGetErrorString(result, &text);
  }
  return Status(ErrorCode::kCudaError, str(call, ": ", name, " (", text ? text : "", ")"));
}

}  // namespace qgemm
