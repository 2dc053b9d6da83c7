#include "jit/nvrtc_library.h"
#include "util/error.h"

#include <dlfcn.h>

#include <mutex>

namespace qgemm {
namespace {

Expected<const NvrtcLibrary*> load_nvrtc() {
  static NvrtcLibrary nvrtc;
  const char* candidates[] = {"libnvrtc.so.13", "libnvrtc.so",
                              "/usr/local/cuda/lib64/libnvrtc.so.13",
                              "/usr/local/cuda/lib64/libnvrtc.so"};
  void* lib = nullptr;
  std::string tried;
  for (const char* name : candidates) {
    lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib != nullptr) {
      nvrtc.path = name;
      break;
    }
    tried += str(tried.empty() ? "" : ", ", name);
  }
  if (lib == nullptr)
    return Status(ErrorCode::kNotFound, str("NVRTC not found (tried ", tried,
                                            "); install the CUDA toolkit's NVRTC (13.x)"));
#define QGEMM_RESOLVE(name)                                                               \
  nvrtc.name = reinterpret_cast<decltype(nvrtc.name)>(dlsym(lib, #name));                 \
  if (nvrtc.name == nullptr) return Status(ErrorCode::kNotFound, str(nvrtc.path, " lacks" \
                                                                                 " " #name));
  QGEMM_NVRTC_FUNCTIONS(QGEMM_RESOLVE)
#undef QGEMM_RESOLVE
  nvrtc.nvrtcVersion(&nvrtc.major, &nvrtc.minor);
  return static_cast<const NvrtcLibrary*>(&nvrtc);
}

}  // namespace

Expected<const NvrtcLibrary*> nvrtc_library() {
  static std::once_flag once;
  static Expected<const NvrtcLibrary*> result = Status(ErrorCode::kInternal, "not loaded");
  std::call_once(once, [] { result = load_nvrtc(); });
  return result;
}

}  // namespace qgemm
