// Read-bandwidth probe (diagnostic, not part of the library): how fast can SMs pull a stream of
// weights out of HBM with each way of loading we might use in a decode kernel?
//
//   ldg      ld.global.v4 into registers, kUnroll loads in flight per thread (grid-stride)
//   cpasync  cp.async 16-byte copies into a shared-memory ring (what the decode tiles do):
//            every thread copies its share of a chunk, kStages chunks in flight per CTA
//   bulk     cp.async.bulk (1-D TMA) of a whole chunk by one thread into the ring, completing
//            on the slot's mbarrier (complete_tx)
//
// Time per launch: 8 launches back to back, each on the next copy, median of 21.
// Each CTA streams a contiguous share of the buffer; the consumer touches every 16 bytes it
// received (an XOR) so nothing is optimized away. Buffers rotate past L2 (the sum of copies is
// several times its 50-60 MB). Bytes counted are read bytes only.
//
// Build (CPU box): nvcc -O3 -arch=sm_90a -std=c++17 -cudart static -o read_bandwidth
//                  bench/probes/read_bandwidth.cu
// Run (H200):      ./read_bandwidth            (prints one line per variant and size)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "cuda_check.h"

__device__ unsigned g_sink;

template <int kUnroll>
__global__ void ldg_kernel(const uint4* __restrict__ src, long long count) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  unsigned acc = 0;
  for (; i + (kUnroll - 1) * stride < count; i += kUnroll * stride) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldg(src + i + u * stride);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < count; i += stride) {
    const uint4 v = __ldg(src + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345678u) g_sink = acc;
}

__device__ __forceinline__ unsigned smem_u32(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// A CTA's share: chunks [c0, c1) of kChunk bytes.
__device__ __forceinline__ void cta_share(long long chunks, long long& c0, long long& c1) {
  c0 = chunks * blockIdx.x / gridDim.x;
  c1 = chunks * (blockIdx.x + 1) / gridDim.x;
}

__device__ __forceinline__ unsigned consume(const unsigned char* slot, int bytes) {
  unsigned acc = 0;
  for (int o = threadIdx.x * 16; o < bytes; o += blockDim.x * 16) {
    const uint4 v = *reinterpret_cast<const uint4*>(slot + o);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  return acc;
}

template <int kChunk, int kStages>
__global__ void cpasync_kernel(const unsigned char* __restrict__ src, long long chunks) {
  extern __shared__ __align__(128) unsigned char ring[];
  long long c0, c1;
  cta_share(chunks, c0, c1);
  const long long n = c1 - c0;
  auto issue = [&](long long i) {
    const unsigned char* from = src + (c0 + i) * kChunk;
    unsigned char* to = ring + (i % kStages) * kChunk;
    for (int o = threadIdx.x * 16; o < kChunk; o += blockDim.x * 16)
      asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_u32(to + o)),
                   "l"(from + o));
  };
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < n) issue(s);
    asm volatile("cp.async.commit_group;\n");
  }
  unsigned acc = 0;
  for (long long i = 0; i < n; ++i) {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(kStages - 2));
    __syncthreads();
    if (i + kStages - 1 < n) issue(i + kStages - 1);
    asm volatile("cp.async.commit_group;\n");
    acc ^= consume(ring + (i % kStages) * kChunk, kChunk);
  }
  asm volatile("cp.async.wait_group 0;\n");
  if (acc == 0x12345678u) g_sink = acc;
}

template <int kChunk, int kStages>
__global__ void bulk_kernel(const unsigned char* __restrict__ src, long long chunks) {
  extern __shared__ __align__(128) unsigned char ring[];
  unsigned long long* full = reinterpret_cast<unsigned long long*>(ring + kStages * kChunk);
  long long c0, c1;
  cta_share(chunks, c0, c1);
  const long long n = c1 - c0;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s)
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;\n" ::"r"(smem_u32(full + s)));
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();
  auto issue = [&](long long i) {
    const unsigned bar = smem_u32(full + i % kStages);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "n"(kChunk)
                 : "memory");
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, "
        "[%3];\n" ::"r"(smem_u32(ring + (i % kStages) * kChunk)),
        "l"(src + (c0 + i) * kChunk), "n"(kChunk), "r"(bar)
        : "memory");
  };
  if (threadIdx.x == 0)
    for (int s = 0; s < kStages - 1 && s < n; ++s) issue(s);
  unsigned acc = 0;
  for (long long i = 0; i < n; ++i) {
    if (threadIdx.x == 0 && i + kStages - 1 < n) issue(i + kStages - 1);
    const unsigned bar = smem_u32(full + i % kStages);
    const unsigned parity = static_cast<unsigned>((i / kStages) & 1);
    asm volatile(
        "{\n .reg .pred p;\n wait_%=:\n"
        " mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
        " @!p bra wait_%=;\n}\n" ::"r"(bar),
        "r"(parity)
        : "memory");
    acc ^= consume(ring + (i % kStages) * kChunk, kChunk);
    __syncthreads();  // the slot is refilled by the next iteration's issue
  }
  if (acc == 0x12345678u) g_sink = acc;
}

struct Timer {
  cudaEvent_t a, b;
  Timer() {
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
  }
};

// Median over `reps` of the time per launch of 8 back-to-back launches, each on the next copy.
template <class Launch>
double median_us(Launch launch, int copies, int reps) {
  Timer t;
  constexpr int kBatch = 8;
  std::vector<float> ms;
  launch(0);  // warm up (first launch, module load)
  for (int r = 0; r < reps; ++r) {
    CHECK(cudaEventRecord(t.a));
    for (int b = 0; b < kBatch; ++b) launch((r * kBatch + b + 1) % copies);
    CHECK(cudaEventRecord(t.b));
    CHECK(cudaEventSynchronize(t.b));
    float x;
    CHECK(cudaEventElapsedTime(&x, t.a, t.b));
    ms.push_back(x / kBatch);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2] * 1000.0;
}

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  std::printf("device %s, %d SMs, L2 %d MB\n", prop.name, sms, prop.l2CacheSize >> 20);
  const long long kTotal = 1ll << 30;  // 1 GiB pool: copies of `bytes` rotate through it
  unsigned char* pool;
  CHECK(cudaMalloc(&pool, kTotal));
  CHECK(cudaMemset(pool, 0x5a, kTotal));
  const long long sizes[] = {121ll << 20, 512ll << 20};
  for (long long bytes : sizes) {
    const int copies = static_cast<int>(kTotal / bytes);
    auto at = [&](int c) { return pool + static_cast<long long>(c) * bytes; };
    auto report = [&](const char* name, int ctas, double us) {
      std::printf("%-28s %4lld MB  ctas %5d  %8.2f us  %7.0f GB/s\n", name, bytes >> 20, ctas, us,
                  bytes / us / 1e3);
    };
    for (int per_sm : {4, 8, 16}) {
      const int ctas = sms * per_sm;
      const long long count = bytes / 16;
      report("ldg unroll4 t256", ctas,
             median_us([&](int c) { ldg_kernel<4><<<ctas, 256>>>((const uint4*)at(c), count); },
                       copies, 21));
      report("ldg unroll8 t256", ctas,
             median_us([&](int c) { ldg_kernel<8><<<ctas, 256>>>((const uint4*)at(c), count); },
                       copies, 21));
    }
#define CP_ASYNC(CHUNK, STAGES, PER_SM, THREADS)                                                  \
  {                                                                                               \
    auto k = cpasync_kernel<CHUNK, STAGES>;                                                       \
    const int smem = CHUNK * STAGES;                                                              \
    CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));            \
    const int ctas = sms * PER_SM;                                                                \
    report(                                                                                       \
        "cpasync " #CHUNK "B x" #STAGES " t" #THREADS, ctas,                                      \
        median_us([&](int c) { k<<<ctas, THREADS, smem>>>(at(c), bytes / CHUNK); }, copies, 21)); \
  }
#define BULK(CHUNK, STAGES, PER_SM, THREADS)                                                      \
  {                                                                                               \
    auto k = bulk_kernel<CHUNK, STAGES>;                                                          \
    const int smem = CHUNK * STAGES + 8 * STAGES;                                                 \
    CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));            \
    const int ctas = sms * PER_SM;                                                                \
    report(                                                                                       \
        "bulk " #CHUNK "B x" #STAGES " t" #THREADS, ctas,                                         \
        median_us([&](int c) { k<<<ctas, THREADS, smem>>>(at(c), bytes / CHUNK); }, copies, 21)); \
  }
    // The decode tile today: 4 CTAs per SM, 128 threads, 4 stages of 8 KB of weights.
    CP_ASYNC(8192, 4, 4, 128)
    CP_ASYNC(8192, 6, 4, 128)
    CP_ASYNC(16384, 4, 2, 128)
    CP_ASYNC(4096, 8, 4, 128)
    BULK(8192, 4, 4, 128)
    BULK(8192, 6, 4, 128)
    BULK(16384, 4, 2, 128)
    BULK(16384, 6, 2, 128)
    BULK(32768, 3, 2, 128)
    BULK(4096, 8, 4, 128)
    BULK(16384, 12, 1, 128)
    CHECK(cudaGetLastError());
  }
  CHECK(cudaDeviceSynchronize());
  return 0;
}
