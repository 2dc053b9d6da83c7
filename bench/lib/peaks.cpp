#include "bench/lib/peaks.h"

#include <cmath>

#include "backend/cublaslt_gemm.h"
#include "bench/lib/device_data.h"
#include "bench/lib/gpu_timer.h"
#include "bench/lib/stats.h"
#include "jit/kernel_loader.h"
#include "qgemm/device.h"

namespace qgemm::bench {
namespace {

constexpr int kReplays = 11;

// TFLOPS of one cuBLASLt n^3 GEMM of `type` operands (bf16 out), median of kReplays.
Expected<double> gemm_tflops(DType type, int64_t n, bool* vector_scales) {
  auto a = random_device_values(type, n * n, 7, 1.0f);
  auto w = random_device_values(type, n * n, 8, 1.0f);
  auto c = DeviceBuffer::allocate(n * n * 2);
  auto ws = DeviceBuffer::allocate(32 << 20);
  std::vector<float> ones(n, 1.0f);
  auto scales = DeviceBuffer::upload(ones.data(), ones.size() * 4);
  for (auto* b : {&a, &w, &c, &ws, &scales})
    if (!*b) return b->status();
  LtGemmShape s;
  s.m = s.n = s.k = s.lda = s.ldw = n;
  s.a_type = s.w_type = type;
  s.row_scales = type.bits == 8;
  auto gemm = LtGemm::create(s, ws->bytes());
  if (!gemm) return gemm.status();
  if (vector_scales) *vector_scales = (*gemm)->vector_scales();
  const float* sp = static_cast<const float*>(scales->get());
  auto times = time_graph_replays(
      [&](int, CUstream stream) {
        return (*gemm)->run(a->get(), w->get(), c->get(), nullptr, sp, sp, ws->get(), ws->bytes(),
                            stream);
      },
      1, 3, kReplays);
  if (!times) return times.status();
  return tflops(2.0 * n * n * n, summarize(*times).median_us);
}

}  // namespace

Expected<Peaks> measure_peaks() {
  Peaks p{NAN, NAN, NAN, false};
  const size_t bytes = size_t(1) << 30;
  auto src = DeviceBuffer::allocate(bytes);
  auto dst = DeviceBuffer::allocate(bytes);
  if (!src) return src.status();
  if (!dst) return dst.status();
  const CudaDriver* d = *cuda_driver();
  QGEMM_CU(d, cuMemsetD8, src->ptr(), 0x3c, bytes);
  // NOTE: an SM copy kernel, not cuMemcpyDtoD: the copy engines reach less than the SMs do.
  KernelSpec spec;
  spec.family = "copy_bandwidth";
  spec.config = "uint4 x4";
  spec.arch = list_devices().at(0).arch();
  spec.threads = 512;
  spec.source = "#include \"bench/copy_bandwidth.cuh\"\n";
  spec.name_expression = "&qgemm::copy_bandwidth_kernel";
  auto kernel = get_kernel(spec);
  if (!kernel) return kernel.status();
  const int blocks = 4 * list_devices().at(0).multiprocessors;
  struct CopyArgs {
    const void* src;
    void* dst;
    int64_t count;
  } args{src->get(), dst->get(), static_cast<int64_t>(bytes / 16)};
  auto copy = time_graph_replays(
      [&](int, CUstream stream) {
        void* params[] = {&args.src, &args.dst, &args.count};
        return cuda_status(d->cuLaunchKernel(kernel->function, blocks, 1, 1, kernel->threads, 1, 1,
                                             0, stream, params, nullptr),
                           "cuLaunchKernel(copy_bandwidth)");
      },
      1, 3, kReplays);
  if (!copy) return copy.status();
  p.copy_gbps = gbps(2.0 * bytes, summarize(*copy).median_us);
  auto bf16 = gemm_tflops(DType::bf16(), 8192, nullptr);
  if (!bf16) return bf16.status();
  p.bf16_tflops = *bf16;
  auto fp8 = gemm_tflops(DType::e4m3(), 8192, &p.fp8_vector_scales);
  if (fp8) p.fp8_tflops = *fp8;  // older cuBLASLt or GPUs without FP8: left NaN
  return p;
}

}  // namespace qgemm::bench
