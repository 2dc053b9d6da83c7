#pragma once

#include <nvrtc.h>

#include <string>

#include "qgemm/status.h"

namespace qgemm {

// NVRTC, loaded at run time (libnvrtc.so.13, then libnvrtc.so) so the library has no link-time
// dependency on it. It compiles on machines without a GPU.
#define QGEMM_NVRTC_FUNCTIONS(X)                                                             \
  X(nvrtcVersion)                                                                            \
  X(nvrtcGetErrorString) X(nvrtcCreateProgram) X(nvrtcDestroyProgram) X(nvrtcCompileProgram) \
      X(nvrtcGetProgramLogSize) X(nvrtcGetProgramLog) X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN)  \
          X(nvrtcGetPTXSize) X(nvrtcGetPTX) X(nvrtcAddNameExpression) X(nvrtcGetLoweredName)

struct NvrtcLibrary {
#define QGEMM_DECLARE(name) decltype(&::name) name = nullptr;
  QGEMM_NVRTC_FUNCTIONS(QGEMM_DECLARE)
#undef QGEMM_DECLARE
  int major = 0;
  int minor = 0;
  std::string path;  ///< which file was loaded
};

/// NVRTC, loaded once per process; kNotFound when it is not installed.
Expected<const NvrtcLibrary*> nvrtc_library();

}  // namespace qgemm
