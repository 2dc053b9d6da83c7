#include <cstring>

#include "backend/backend.h"
#include "jit/cuda_driver.h"
#include "qgemm/reference.h"
#include "util/error.h"

namespace qgemm {
namespace {

class CpuLayer final : public PreparedLayer {
 public:
  CpuLayer(QuantizedWeight weight, LayerProblem problem)
      : weight_(std::move(weight)), problem_(std::move(problem)) {}

  Status prepare(int64_t) override { return Status(); }
  size_t workspace_bytes(int64_t) const override { return 0; }
  std::string describe() const override { return "all M: CPU reference (double accumulation)"; }

  Status run(const LinearArgs& args) const override {
    QuantizedActivations a;
    a.format = problem_.act;
    a.m = args.m;
    a.k = weight_.k;
    // 16-bit input to a layer of quantized activations: fetched as such, quantized below.
    const bool quantize_input = problem_.act.is_quantized() && args.a_scales.data == nullptr;
    if (quantize_input) a.format = ActFormat::parse(problem_.input.name()).value();
    a.data.resize(args.m * weight_.k * a.element_bytes());
    a.scales.resize(quantize_input ? 0 : act_scale_count(problem_.act, args.m, weight_.k));
    a.global.resize(!quantize_input && problem_.act.global_scale ? 1 : 0);
    const size_t out_bytes = args.m * weight_.n * ((problem_.out.bits + 7) / 8);
    std::vector<uint8_t> bias_bytes(args.bias ? weight_.n * ((problem_.out.bits + 7) / 8) : 0);
    std::vector<uint8_t> out(out_bytes);
    if (problem_.device < 0) {
      std::memcpy(a.data.data(), args.a, a.data.size());
      if (!a.scales.empty()) std::memcpy(a.scales.data(), args.a_scales.data, a.scales.size() * 4);
      if (!a.global.empty()) a.global[0] = *args.a_scales.global;
      if (args.bias) std::memcpy(bias_bytes.data(), args.bias, bias_bytes.size());
    } else {
      QGEMM_RETURN_IF_ERROR(copy_from_device(args, a, bias_bytes));
    }
    if (quantize_input) {
      auto q = quantize_activations(HostValues{a.data.data(), problem_.input, args.m * weight_.k},
                                    args.m, weight_.k, problem_.act);
      if (!q) return q.status();
      a = std::move(*q);
    }
    std::vector<float> bias(bias_bytes.empty() ? 0 : weight_.n);
    for (size_t i = 0; i < bias.size(); ++i) {
      uint32_t code = 0;
      std::memcpy(&code, &bias_bytes[i * ((problem_.out.bits + 7) / 8)],
                  (problem_.out.bits + 7) / 8);
      bias[i] = static_cast<float>(decode(problem_.out, code));
    }
    auto c = reference_gemm(a, weight_, bias);
    if (!c) return c.status();
    store_output(problem_.out, c->data(), c->size(), out.data());
    if (problem_.device < 0) {
      std::memcpy(args.c, out.data(), out.size());
      return Status();
    }
    auto driver = cuda_driver();
    if (!driver) return driver.status();
    QGEMM_CU(*driver, cuMemcpyHtoD, reinterpret_cast<CUdeviceptr>(args.c), out.data(), out.size());
    return Status();
  }

 private:
  // NOTE: the CPU fallback for a GPU layer copies synchronously, so it cannot be captured.
  Status copy_from_device(const LinearArgs& args, QuantizedActivations& a,
                          std::vector<uint8_t>& bias) const {
    auto driver = cuda_driver();
    if (!driver) return driver.status();
    const CudaDriver* d = *driver;
    CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
    QGEMM_CU(d, cuStreamIsCapturing, static_cast<CUstream>(args.stream), &capture);
    if (capture != CU_STREAM_CAPTURE_STATUS_NONE)
      return unsupported(
          "the cpu backend copies synchronously and cannot run inside CUDA-graph capture");
    QGEMM_CU(d, cuStreamSynchronize, static_cast<CUstream>(args.stream));
    QGEMM_CU(d, cuMemcpyDtoH, a.data.data(), reinterpret_cast<CUdeviceptr>(args.a), a.data.size());
    if (!a.scales.empty())
      QGEMM_CU(d, cuMemcpyDtoH, a.scales.data(), reinterpret_cast<CUdeviceptr>(args.a_scales.data),
               a.scales.size() * 4);
    if (!a.global.empty())
      QGEMM_CU(d, cuMemcpyDtoH, a.global.data(),
               reinterpret_cast<CUdeviceptr>(args.a_scales.global), 4);
    if (!bias.empty())
      QGEMM_CU(d, cuMemcpyDtoH, bias.data(), reinterpret_cast<CUdeviceptr>(args.bias), bias.size());
    return Status();
  }

  QuantizedWeight weight_;
  LayerProblem problem_;
};

class CpuBackend final : public Backend {
 public:
  BackendKind kind() const override { return BackendKind::kCpu; }
  Support supports(const LayerProblem& p) const override {
    if (p.experts != 1) return Support::no("Linear takes a dense weight (experts = 1)");
    return Support::yes();  // the reference runs every valid format and shape
  }
  Expected<std::unique_ptr<PreparedLayer>> build(const QuantizedWeight& w,
                                                 const LayerProblem& p) const override {
    return std::unique_ptr<PreparedLayer>(new CpuLayer(w, p));
  }
};

}  // namespace

void store_output(DType out, const double* values, size_t count, void* dst) {
  if (out == DType::fp32()) {
    auto* p = static_cast<float*>(dst);
    for (size_t i = 0; i < count; ++i) p[i] = static_cast<float>(values[i]);
    return;
  }
  auto* p = static_cast<uint16_t*>(dst);
  for (size_t i = 0; i < count; ++i) p[i] = static_cast<uint16_t>(encode(out, values[i]));
}

const Backend& cpu_backend() {
  static const CpuBackend backend;
  return backend;
}

}  // namespace qgemm
