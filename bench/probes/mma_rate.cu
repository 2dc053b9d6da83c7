// Tensor-core rate probe (diagnostic, not part of the library): how many multiply-adds per SM
// and cycle do mma.sync m16n8k16 and wgmma m64nNk16 (A in registers, B in shared memory) reach
// on this GPU, at the warp counts the decode tiles run?
//
// Why: the 16-token decode tile (mma.sync) spends ~2.6 us of HMMA issue at M = 16 on the H200
// (bench/NOTES.md, Left 2). A wgmma decode tile only pays if wgmma at N = 16 does a multiply-add
// in fewer SM cycles than mma.sync does.
//
//   mma   W warps per CTA, each issuing C independent accumulator chains of mma.sync
//         m16n8k16 (bf16 in, fp32 accumulate), ITER rounds
//   wgmma G warpgroups per CTA, each issuing batches of B wgmma.mma_async m64nNk16 on one
//         accumulator (fence, B wgmmas, commit, wait 0), ITER / B batches
//
// Every variant runs `ctas` CTAs per SM on every SM. Reported: multiply-adds per SM per cycle
// (from clock64 around each CTA's loop, the slowest CTA of the SM's share) and TFLOPS from event
// timing. Operand values are small nonzero bf16 numbers; the results are stored so nothing is
// optimized away.
//
// Build (CPU box): nvcc -O3 -gencode arch=compute_90a,code=sm_90a -std=c++17 -cudart static \
//                    -o mma_rate bench/probes/mma_rate.cu
// Run (H200):      ./mma_rate
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda_check.h"

namespace {

constexpr int kIter = 4096;
constexpr uint32_t kOnePointFivePair = 0x3fc03fc0u;  // bf16 1.5 in both halves

// ---- mma.sync -------------------------------------------------------------------------------

template <int kChains>
__global__ void mma_sync_rate(float* out, long long* cycles) {
  const uint32_t a = kOnePointFivePair ^ (threadIdx.x & 7), b = kOnePointFivePair;
  float d[kChains][4] = {};
  __syncthreads();
  const long long t0 = clock64();
#pragma unroll 1
  for (int it = 0; it < kIter; ++it) {
#pragma unroll
    for (int c = 0; c < kChains; ++c)
      asm volatile(
          "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
          "{%8,%9}, {%0,%1,%2,%3};\n"
          : "+f"(d[c][0]), "+f"(d[c][1]), "+f"(d[c][2]), "+f"(d[c][3])
          : "r"(a), "r"(a), "r"(a), "r"(a), "r"(b), "r"(b));
  }
  __syncthreads();
  const long long t1 = clock64();
  float s = 0;
#pragma unroll
  for (int c = 0; c < kChains; ++c) s += d[c][0] + d[c][1] + d[c][2] + d[c][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
}

// ---- wgmma ----------------------------------------------------------------------------------

__device__ uint64_t desc_sw128(uint32_t smem_addr) {
  // K-major, 128-byte swizzle, 8-row groups 1024 bytes apart (PTX "Matrix Descriptor Format").
  return static_cast<uint64_t>((smem_addr & 0x3ffffu) >> 4) | (1ull << 16) |
         (static_cast<uint64_t>(1024 >> 4) << 32) | (1ull << 62);
}

template <int kN>
struct Wgmma;

#define PROBE_WGMMA(N, REGS, DLIST, ALIST, DESC, ...)                                   \
  template <>                                                                          \
  struct Wgmma<N> {                                                                    \
    static constexpr int kRegs = REGS;                                                 \
    static __device__ void run(float (&d)[REGS], uint32_t a, uint64_t desc) {          \
      asm volatile("wgmma.mma_async.sync.aligned.m64n" #N "k16.f32.bf16.bf16 {" DLIST  \
                   "}, {" ALIST "}, " DESC ", 1, 1, 1, 0;\n"                           \
                   : __VA_ARGS__                                                       \
                   : "r"(a), "r"(a), "r"(a), "r"(a), "l"(desc));                       \
    }                                                                                  \
  };

#define D4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
PROBE_WGMMA(8, 4, "%0,%1,%2,%3", "%4,%5,%6,%7", "%8", D4(0))
PROBE_WGMMA(16, 8, "%0,%1,%2,%3,%4,%5,%6,%7", "%8,%9,%10,%11", "%12", D4(0), D4(4))
PROBE_WGMMA(32, 16,
            "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15", "%16,%17,%18,%19", "%20",
            D4(0), D4(4), D4(8), D4(12))
PROBE_WGMMA(64, 32,
            "%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,"
            "%23,%24,%25,%26,%27,%28,%29,%30,%31",
            "%32,%33,%34,%35", "%36", D4(0), D4(4), D4(8), D4(12), D4(16), D4(20), D4(24),
            D4(28))
#undef D4

template <int kN, int kBatch>
__global__ void wgmma_rate(float* out, long long* cycles) {
  // B: kN token rows of 128 bytes (64 K), 1024-byte aligned for the swizzle pattern.
  __shared__ __align__(1024) uint32_t b_tile[64 * 32];
  for (int i = threadIdx.x; i < 64 * 32; i += blockDim.x) b_tile[i] = kOnePointFivePair;
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  const uint32_t b_addr = static_cast<uint32_t>(__cvta_generic_to_shared(b_tile));
  const uint64_t desc = desc_sw128(b_addr);
  const uint32_t a = kOnePointFivePair ^ (threadIdx.x & 7);
  float d[Wgmma<kN>::kRegs] = {};
  const long long t0 = clock64();
#pragma unroll 1
  for (int it = 0; it < kIter / kBatch; ++it) {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int i = 0; i < kBatch; ++i) Wgmma<kN>::run(d, a, desc + 2 * (i & 3));  // k offset 32 B
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  }
  __syncthreads();
  const long long t1 = clock64();
  float s = 0;
#pragma unroll
  for (int i = 0; i < Wgmma<kN>::kRegs; ++i) s += d[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
}

// ---- driver ---------------------------------------------------------------------------------

struct Result {
  double macs_per_sm_cycle;
  double tflops;
};

template <class Kernel>
Result time_kernel(Kernel kernel, int sms, int ctas_per_sm, int threads, double macs_per_cta) {
  const int grid = sms * ctas_per_sm;
  float* out = nullptr;
  long long* cycles = nullptr;
  CHECK(cudaMalloc(&out, sizeof(float) * grid * threads));
  CHECK(cudaMalloc(&cycles, sizeof(long long) * grid));
  cudaEvent_t e0, e1;
  CHECK(cudaEventCreate(&e0));
  CHECK(cudaEventCreate(&e1));
  std::vector<float> ms;
  std::vector<long long> cyc(grid);
  double cycles_med = 0;
  for (int rep = 0; rep < 7; ++rep) {
    CHECK(cudaEventRecord(e0));
    kernel<<<grid, threads>>>(out, cycles);
    CHECK(cudaEventRecord(e1));
    CHECK(cudaEventSynchronize(e1));
    CHECK(cudaGetLastError());
    float t = 0;
    CHECK(cudaEventElapsedTime(&t, e0, e1));
    ms.push_back(t);
    CHECK(cudaMemcpy(cyc.data(), cycles, sizeof(long long) * grid, cudaMemcpyDeviceToHost));
    std::sort(cyc.begin(), cyc.end());
    cycles_med = static_cast<double>(cyc[grid / 2]);
  }
  std::sort(ms.begin(), ms.end());
  CHECK(cudaFree(out));
  CHECK(cudaFree(cycles));
  CHECK(cudaEventDestroy(e0));
  CHECK(cudaEventDestroy(e1));
  // CTAs of one SM run side by side: the SM does ctas_per_sm CTAs' work in about one CTA's cycles.
  return {macs_per_cta * ctas_per_sm / cycles_med,
          2.0 * macs_per_cta * grid / (ms[ms.size() / 2] * 1e-3) / 1e12};
}

void report(const char* what, Result r) {
  std::printf("%-44s %8.1f MAC/SM/cycle %8.1f TFLOPS\n", what, r.macs_per_sm_cycle, r.tflops);
}

template <int kChains>
void run_mma(int sms, int warps, int ctas) {
  const double macs = double(kIter) * kChains * warps * 16 * 8 * 16;
  char name[96];
  std::snprintf(name, sizeof name, "mma.sync m16n8k16  %2d warps x %d CTAs, %d chains", warps,
                ctas, kChains);
  report(name, time_kernel(mma_sync_rate<kChains>, sms, ctas, 32 * warps, macs));
}

template <int kN, int kBatch>
void run_wgmma(int sms, int groups, int ctas) {
  const double macs = double(kIter / kBatch * kBatch) * groups * 64 * kN * 16;
  char name[96];
  std::snprintf(name, sizeof name, "wgmma m64n%-2dk16    %d warpgroups x %d CTAs, batch %d", kN,
                groups, ctas, kBatch);
  report(name, time_kernel(wgmma_rate<kN, kBatch>, sms, ctas, 128 * groups, macs));
}

}  // namespace

int main() {
  int dev = 0, sms = 0, clock_khz = 0;
  CHECK(cudaGetDevice(&dev));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, dev));
  std::printf("%s, %d SMs, %d MHz (max); %d rounds per warp\n", prop.name, sms, clock_khz / 1000,
              kIter);
  // mma.sync as the decode tiles run it: 4-warp CTAs, 2-4 per SM, 1-4 chains per warp.
  run_mma<1>(sms, 4, 2);
  run_mma<2>(sms, 4, 2);
  run_mma<4>(sms, 4, 2);
  run_mma<2>(sms, 4, 3);
  run_mma<2>(sms, 4, 4);
  run_mma<4>(sms, 4, 4);
  run_mma<4>(sms, 8, 2);
  // wgmma at small N: one or two warpgroups per CTA, 1-4 CTAs per SM.
  if (prop.major == 9) {
    run_wgmma<8, 8>(sms, 1, 2);
    run_wgmma<16, 8>(sms, 1, 1);
    run_wgmma<16, 8>(sms, 1, 2);
    run_wgmma<16, 8>(sms, 1, 4);
    run_wgmma<16, 16>(sms, 2, 2);
    run_wgmma<32, 8>(sms, 1, 2);
    run_wgmma<32, 8>(sms, 1, 4);
    run_wgmma<64, 8>(sms, 1, 2);
    run_wgmma<64, 8>(sms, 2, 2);
  }
  return 0;
}
