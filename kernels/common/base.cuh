// Basic types and macros for device code. Kernel headers include only CUDA built-ins and ours,
// so NVRTC needs no include paths.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define QGEMM_DEVICE __device__ __forceinline__
#define QGEMM_HOST_DEVICE __host__ __device__ inline
#else
#define QGEMM_HOST_DEVICE inline
#endif

namespace qgemm {

typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef int i32;
typedef unsigned long long u64;
typedef long long i64;

/// Element types of activations and outputs, as template arguments.
enum class Elem : int { kFp16 = 0, kBf16 = 1, kFp32 = 2 };

template <int A, int B>
struct CeilDiv {
  static constexpr int value = (A + B - 1) / B;
};

}  // namespace qgemm
