#include "jit/nvrtc_library.h"
#include "util/dynamic_library.h"
#include "util/error.h"

namespace qgemm {
namespace {

Expected<const NvrtcLibrary*> load_nvrtc() {
  static NvrtcLibrary nvrtc;
  const OpenedLibrary opened =
      open_first_library({"libnvrtc.so.13", "libnvrtc.so", "/usr/local/cuda/lib64/libnvrtc.so.13",
                          "/usr/local/cuda/lib64/libnvrtc.so"});
  if (opened.handle == nullptr)
    return Status(ErrorCode::kNotFound, str("NVRTC not found (tried ", opened.tried,
                                            "); install the CUDA toolkit's NVRTC (13.x)"));
  nvrtc.path = opened.name;
#define QGEMM_RESOLVE(name) \
  QGEMM_RETURN_IF_ERROR(resolve_symbol(opened.handle, nvrtc.path, #name, nvrtc.name));
  QGEMM_NVRTC_FUNCTIONS(QGEMM_RESOLVE)
#undef QGEMM_RESOLVE
  nvrtc.nvrtcVersion(&nvrtc.major, &nvrtc.minor);
  return static_cast<const NvrtcLibrary*>(&nvrtc);
}

}  // namespace

Expected<const NvrtcLibrary*> nvrtc_library() { return loaded_once<load_nvrtc>(); }

}  // namespace qgemm
