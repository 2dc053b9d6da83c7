#pragma once

#include <cuda.h>

#include <string>

#include "qgemm/status.h"
#include "util/error.h"

namespace qgemm {

// The CUDA driver API, resolved at run time from libcuda.so.1 through cuGetProcAddress, so the
// library loads on machines without a driver. Every entry is the versioned function cuda.h maps
// the plain name to (cuMemAlloc -> cuMemAlloc_v2, ...).
#define QGEMM_DRIVER_FUNCTIONS(X)                                                                  \
  X(cuInit)                                                                                        \
  X(cuDriverGetVersion)                                                                            \
  X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGetCount) X(cuDeviceGet) X(cuDeviceGetName)      \
      X(cuDeviceGetAttribute) X(cuDeviceTotalMem) X(cuDevicePrimaryCtxRetain) X(cuCtxSetCurrent)   \
          X(cuCtxGetCurrent) X(cuCtxSynchronize) X(cuMemAlloc) X(cuMemFree) X(cuMemGetInfo)        \
              X(cuMemcpyHtoD) X(cuMemcpyDtoH) X(cuMemcpyDtoD) X(cuMemcpyDtoDAsync) X(cuMemsetD8)   \
                  X(cuMemsetD8Async) X(cuMemsetD32Async) X(cuModuleLoadData) X(cuModuleUnload)     \
                      X(cuModuleGetFunction) X(cuFuncSetAttribute) X(cuFuncGetAttribute) X(        \
                          cuLaunchKernel) X(cuLaunchKernelEx) X(cuStreamCreate) X(cuStreamDestroy) \
                          X(cuStreamSynchronize) X(cuStreamBeginCapture) X(cuStreamEndCapture)     \
                              X(cuStreamIsCapturing) X(cuGraphInstantiateWithFlags)                \
                                  X(cuGraphLaunch) X(cuGraphExecDestroy) X(cuGraphDestroy)         \
                                      X(cuEventCreate) X(cuEventRecord) X(cuEventSynchronize)      \
                                          X(cuEventElapsedTime) X(cuEventDestroy)                  \
                                              X(cuTensorMapEncodeTiled)                            \
                                                  X(cuOccupancyMaxActiveBlocksPerMultiprocessor)   \
                                                      X(cuOccupancyMaxActiveClusters)              \
                                                      X(cuMemcpy2DAsync) X(cuMemsetD2D16Async)

struct CudaDriver {
#define QGEMM_DECLARE(name) decltype(&::name) name = nullptr;
  QGEMM_DRIVER_FUNCTIONS(QGEMM_DECLARE)
#undef QGEMM_DECLARE
  int version = 0;  ///< e.g. 13000
};

/// The driver, loaded and cuInit-ed once per process; an error (kNotFound) when there is none.
Expected<const CudaDriver*> cuda_driver();

/// Turns a CUresult into a Status naming the call: "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (...)".
Status cuda_status(CUresult result, const char* call);

}  // namespace qgemm

/// Runs a driver call and returns its error as a Status from the enclosing function.
#define QGEMM_CU(driver, call, ...) \
  QGEMM_RETURN_IF_ERROR(::qgemm::cuda_status((driver)->call(__VA_ARGS__), #call))
