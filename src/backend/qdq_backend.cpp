#include <algorithm>
#include <map>

#include "backend/backend.h"
#include "backend/cublaslt_gemm.h"
#include "backend/cublaslt_library.h"
#include "backend/device_buffer.h"
#include "dequant/dequantize_params.cuh"
#include "families/dense_expand.h"
#include "jit/dequantize_kernel.h"
#include "jit/kernel_loader.h"
#include "jit/nvrtc_library.h"
#include "plan/jit_kernel_plan.h"
#include "plan/mma_launch.h"
#include "quant/gpu_act_quantizer.h"
#include "util/error.h"

namespace qgemm {
namespace {

constexpr size_t kCublasWorkspace = 32u << 20;

// Dequantize-then-GEMM: every run expands the canonical weight to fp16/bf16 on the GPU and calls
// cuBLASLt. Runs every weight format; the honest "no fused kernel" baseline. Quantized
// activations are expanded likewise (after quantizing them, when run() gets 16-bit input), into
// the workspace, to the layer's 16-bit input type.
// NOTE: rounding the expanded activations to 16 bits costs up to half an ulp each, like the
// expanded weights; within the tolerance of the 16-bit path.
class QdqLayer final : public PreparedLayer {
 public:
  explicit QdqLayer(LayerProblem problem) : problem_(std::move(problem)) {}

  Status upload(const QuantizedWeight& w) {
    row_bytes_ = w.row_bytes();
    auto codes = DeviceBuffer::upload(w.codes.data(), w.codes.size());
    auto scales = DeviceBuffer::upload(w.scales.data(), w.scales.size() * 4);
    auto zeros = DeviceBuffer::upload(w.zeros.data(), w.zeros.size() * 4);
    auto global = DeviceBuffer::upload(w.global.data(), w.global.size() * 4);
    for (auto* b : {&codes, &scales, &zeros, &global})
      if (!*b) return b->status();
    codes_ = std::move(*codes);
    scales_ = std::move(*scales);
    zeros_ = std::move(*zeros);
    global_ = std::move(*global);
    return Status();
  }

  Status prepare(int64_t max_tokens) override {
    DequantizeConfig dc{problem_.weight, compute_type(), problem_.device_info.arch()};
    dequant_spec_ = dc.spec();
    auto kernel = get_kernel(dequant_spec_);
    if (!kernel) return kernel.status();
    dequant_ = *kernel;
    if (dense_.bytes() == 0) {
      auto dense = DeviceBuffer::allocate(size_t(problem_.n) * ldw() * 2);
      auto ws = DeviceBuffer::allocate(kCublasWorkspace);
      if (!dense) return dense.status();
      if (!ws) return ws.status();
      dense_ = std::move(*dense);
      cublas_workspace_ = std::move(*ws);
    }
    if (problem_.act.is_quantized() && !act_quantizer_) {
      auto q = GpuActQuantizer::create(problem_.act, compute_type(), problem_.device_info.arch());
      if (!q) return q.status();
      act_quantizer_ = std::make_unique<GpuActQuantizer>(std::move(*q));
    }
    // cuBLASLt plans per M are made on first use of each M in run(); prepare makes the largest.
    QGEMM_RETURN_IF_ERROR(gemm_for(max_tokens, false).status());
    return gemm_for(max_tokens, true).status();
  }

  // Quantized activations: their 16-bit expansion [m][ldw], then room to quantize 16-bit input.
  size_t workspace_bytes(int64_t m) const override {
    if (!problem_.act.is_quantized()) return 0;
    return expanded_bytes(m) + act_workspace_bytes(problem_.act, m, problem_.k);
  }

  Status run(const LinearArgs& args) const override {
    auto gemm = gemm_for(args.m, args.bias != nullptr);
    if (!gemm) return gemm.status();
    const WeightFormat& f = problem_.weight;
    DequantizeParams p{};
    p.codes = reinterpret_cast<const u8*>(codes_.ptr());
    p.row_bytes = row_bytes_;
    p.scales = f.has_scales() ? reinterpret_cast<const float*>(scales_.ptr()) : nullptr;
    p.zeros = f.has_zero_points() ? reinterpret_cast<const float*>(zeros_.ptr()) : nullptr;
    p.global = f.global_scale ? reinterpret_cast<const float*>(global_.ptr()) : nullptr;
    p.n = static_cast<i32>(problem_.n);
    p.k = static_cast<i32>(problem_.k);
    p.ldo = static_cast<i32>(ldw());
    p.scale_cols = static_cast<i32>(std::max<int64_t>(f.scale_cols(problem_.k), 1));
    p.rows_per_scale = f.scale_kind == ScaleKind::kBlock    ? f.group_n
                       : f.scale_kind == ScaleKind::kTensor ? INT32_MAX
                                                            : 1;
    p.cols_per_scale = f.has_group_scales() ? f.group_k : INT32_MAX;
    p.out = reinterpret_cast<u16*>(dense_.ptr());
    // One block per row at a time (the kernel walks the rows), up to 16 per SM of a large GPU.
    const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(problem_.n, 132 * 16));
    const CUstream stream = static_cast<CUstream>(args.stream);
    QGEMM_RETURN_IF_ERROR(launch(dequant_, blocks, 1, 1, p, stream));
    const void* a = args.a;
    if (problem_.act.is_quantized()) {
      a = args.workspace;
      QGEMM_RETURN_IF_ERROR(expand_activations(args, stream));
    }
    return (*gemm)->run(a, dense_.get(), args.c, args.bias, nullptr, nullptr,
                        cublas_workspace_.get(), cublas_workspace_.bytes(), stream);
  }

  std::string describe() const override {
    return str(
        "all M: dequantize ", problem_.weight.to_string(), " to ", compute_type().name(), " [",
        problem_.n, " x ", ldw(), "]",
        problem_.act.is_quantized()
            ? str(" and ", problem_.act.to_string(), " activations to ", compute_type().name(),
                  " (quantizing ", problem_.input.name(), " input first)")
            : std::string(),
        ", then cuBLASLt (TN, fp32 accumulate)");
  }

 private:
  int64_t ldw() const { return (problem_.k + 7) / 8 * 8; }
  DType compute_type() const { return act_compute_type(problem_); }
  size_t expanded_bytes(int64_t m) const {
    return static_cast<size_t>(m * ldw() * 2 + 255) / 256 * 256;
  }

  // The workspace's [m][ldw] 16-bit activations from the quantized ones run() got, or from its
  // 16-bit input after quantizing that into the rest of the workspace.
  Status expand_activations(const LinearArgs& args, CUstream stream) const {
    DeviceActs acts = DeviceActs::of(args, problem_.k);
    if (args.a_scales.data == nullptr) {
      void* scratch = nullptr;
      acts = carve_act_workspace(static_cast<uint8_t*>(args.workspace) + expanded_bytes(args.m),
                                 problem_.act, args.m, problem_.k, &scratch);
      QGEMM_RETURN_IF_ERROR(
          act_quantizer_->quantize(args.a, problem_.k, args.m, problem_.k, acts, scratch, stream));
    }
    return act_quantizer_->dequantize(acts, args.m, problem_.k, args.workspace, ldw(), stream);
  }

  // NOTE: cuBLASLt plans are cached per M; run() builds a missing one, which allocates nothing
  // on the device but is not for use inside graph capture (prepare covers max_tokens).
  Expected<std::shared_ptr<LtGemm>> gemm_for(int64_t m, bool bias) const {
    if (auto it = gemms_.find({m, bias}); it != gemms_.end()) return it->second;
    LtGemmShape s;
    s.m = m;
    s.n = problem_.n;
    s.k = problem_.k;
    s.a_type = compute_type();
    s.w_type = compute_type();
    s.out_type = problem_.out;
    s.lda = problem_.act.is_quantized() ? ldw() : problem_.k;
    s.ldw = ldw();
    s.bias = bias;
    auto g = LtGemm::create(s, kCublasWorkspace);
    if (!g) return g;
    gemms_.emplace(std::make_pair(m, bias), *g);
    return g;
  }

  LayerProblem problem_;
  int64_t row_bytes_ = 0;
  DeviceBuffer codes_, scales_, zeros_, global_, dense_, cublas_workspace_;
  KernelSpec dequant_spec_;
  LoadedKernel dequant_;
  std::unique_ptr<GpuActQuantizer> act_quantizer_;
  mutable std::map<std::pair<int64_t, bool>, std::shared_ptr<LtGemm>> gemms_;
};

class QdqBackend final : public Backend {
 public:
  Support supports(const LayerProblem& p) const override {
    if (Support s = single_gpu_layer_support(p); !s.ok) return s;
    const DType t = act_compute_type(p);
    // NOTE: cuBLASLt's bf16 GEMMs need sm_80 tensor cores; untested on an sm_75 GPU.
    if (p.device_info.sm() < 80 && t == DType::bf16())
      return Support::no(
          str("bf16 GEMMs need sm_80 or newer, the device is ", p.device_info.arch()));
    if (!cublaslt_has_gemm(t, p.out))
      return Support::no(
          str("cuBLASLt has no ", t.name(), " x ", t.name(), " -> ", p.out.name(), " GEMM"));
    if (auto nvrtc = nvrtc_library(); !nvrtc) return Support::no(nvrtc.status().message());
    if (p.runtime_checks)
      if (auto lt = cublaslt_library(); !lt) return Support::no(lt.status().message());
    return Support::yes();
  }

  Expected<std::unique_ptr<PreparedLayer>> build(const QuantizedWeight& w,
                                                 const LayerProblem& p) const override {
    QGEMM_RETURN_IF_ERROR(use_device(p.device));
    auto layer = std::make_unique<QdqLayer>(p);
    QGEMM_RETURN_IF_ERROR(layer->upload(w));
    return std::unique_ptr<PreparedLayer>(std::move(layer));
  }

  BackendKind kind() const override { return BackendKind::kQdq; }
};

}  // namespace

const Backend& qdq_backend() {
  static const QdqBackend backend;
  return backend;
}

}  // namespace qgemm
