#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>

#include "backend/backend.h"
#include "backend/cublaslt_gemm.h"
#include "backend/cublaslt_library.h"
#include "backend/device_buffer.h"
#include "dense/mma_dequant_params.cuh"
#include "dense/mma_gemm_params.cuh"
#include "jit/kernel_cache.h"
#include "jit/kernel_loader.h"
#include "jit/nvrtc_library.h"
#include "jit/pad_rows.h"
#include "pack/mma_pack.h"
#include "plan/mma_gemm_policy.h"

namespace qgemm {
namespace {

constexpr size_t kAlign = 256;
constexpr size_t kCublasWorkspace = 32u << 20;
size_t align_up(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// A dense layer on the mma.sync kernel family: packed weights on the GPU, one kernel per M bucket.
class JitLayer final : public PreparedLayer {
 public:
  JitLayer(LayerProblem problem, std::vector<MmaPlanEntry> plan, int64_t handoff_m)
      : problem_(std::move(problem)), plan_(std::move(plan)), handoff_m_(handoff_m) {}

  Status upload(const QuantizedWeight& w) {
    auto packed = pack_mma(w, 0, problem_.act.type);
    if (!packed) return packed.status();
    n_tiles_ = packed->n_tiles;
    k_units_ = packed->k_units;
    groups_ = packed->groups;
    auto codes = DeviceBuffer::upload(packed->codes.data(), packed->codes.size() * 4);
    auto scales = DeviceBuffer::upload(packed->scales.data(), packed->scales.size() * 4);
    auto zeros = DeviceBuffer::upload(packed->zeros.data(), packed->zeros.size() * 4);
    auto rows = DeviceBuffer::upload(packed->row_scale.data(), packed->row_scale.size() * 4);
    for (auto* b : {&codes, &scales, &zeros, &rows})
      if (!*b) return b->status();
    codes_ = std::move(*codes);
    scales_ = std::move(*scales);
    zeros_ = std::move(*zeros);
    row_scale_ = std::move(*rows);
    return Status();
  }

  Status prepare(int64_t max_tokens) override {
    // The mma buckets up to min(max_tokens, handoff), plus padding and (for large M) expansion.
    size_t used = 0;
    const int64_t mma_max = std::min(max_tokens, handoff_m_ - 1);
    while (used < plan_.size() && (used == 0 || plan_[used - 1].max_m < mma_max)) ++used;
    std::vector<KernelSpec> wanted;
    for (size_t i = 0; i < used; ++i) wanted.push_back(plan_[i].config.spec());
    wanted.push_back(pad_rows_spec(problem_.device_info.arch()));
    const bool handoff = max_tokens >= handoff_m_;
    if (handoff) wanted.push_back(plan_.back().config.dequant_spec());
    auto compiled = KernelCache::instance().get_all(wanted);
    kernels_.resize(plan_.size());
    for (size_t i = 0; i < wanted.size(); ++i) {
      if (!compiled[i]) return compiled[i].status();
      auto loaded = load_kernel(*compiled[i], wanted[i]);
      if (!loaded) return loaded.status();
      if (i < used)
        kernels_[i] = *loaded;
      else if (i == used)
        pad_ = *loaded;
      else
        dequant_ = *loaded;
    }
    if (handoff) {
      if (cublas_workspace_.bytes() == 0) {
        auto ws = DeviceBuffer::allocate(kCublasWorkspace);
        if (!ws) return ws.status();
        cublas_workspace_ = std::move(*ws);
      }
      for (bool bias : {false, true}) {
        auto g = gemm_for(max_tokens, bias);
        if (!g) return g.status();
      }
    }
    // Split-K arrival counters: one per CTA tile of the largest grid any bucket launches.
    int64_t tiles = 1;
    for (size_t i = 0; i < used; ++i) {
      const MmaGemmConfig& c = plan_[i].config;
      const int64_t m = std::min<int64_t>(max_tokens, plan_[i].max_m);
      tiles = std::max<int64_t>(tiles, grid_x(c) * ((m + c.block_m() - 1) / c.block_m()));
    }
    if (counters_.bytes() < size_t(tiles) * 4) {
      auto counters = DeviceBuffer::allocate(tiles * 4);
      if (!counters) return counters.status();
      counters_ = std::move(*counters);
      const CudaDriver* d = *cuda_driver();
      QGEMM_CU(d, cuMemsetD8, counters_.ptr(), 0, counters_.bytes());
    }
    return Status();
  }

  size_t workspace_bytes(int64_t m) const override {
    const size_t expanded = m >= handoff_m_ ? align_up(size_t(problem_.n) * padded_k() * 2) : 0;
    return std::max(expanded, mma_workspace_bytes(m));
  }

  size_t mma_workspace_bytes(int64_t m) const {
    const MmaPlanEntry& e = entry_for(m);
    const int splits = mma_splits(e.config, m, problem_.n, problem_.k, problem_.device_info);
    // NOTE: room for padded activations is reserved even when K is a multiple of 8: a caller's
    // pointer that is not 16-byte aligned is padded too.
    size_t bytes = align_up(size_t(m) * padded_k() * 2);
    if (splits > 1) bytes += align_up(size_t(splits) * m * n_tiles_ * 16 * 4);
    return bytes;
  }

  Status run(const LinearArgs& args) const override {
    // NOTE: cuBLASLt wants 16-byte aligned operands; other pointers take the mma kernel.
    auto aligned = [](const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; };
    if (args.m >= handoff_m_ && aligned(args.a) && aligned(args.c) && aligned(args.bias) &&
        problem_.k % 8 == 0 && problem_.n % 8 == 0)
      return run_expanded(args);
    const MmaPlanEntry& e = entry_for(args.m);
    const size_t bucket = &e - plan_.data();
    if (kernels_[bucket].function == nullptr)
      return Status(
          ErrorCode::kInvalidArgument,
          str("qgemm::Linear::run: m=", args.m, " needs the kernel of bucket M <= ", e.max_m,
              ", which prepare() did not compile; call prepare(", args.m, ") first"));
    const CUstream stream = static_cast<CUstream>(args.stream);
    auto* workspace = static_cast<uint8_t*>(args.workspace);
    const size_t pad_bytes = align_up(size_t(args.m) * padded_k() * 2);
    const uint16_t* a = static_cast<const uint16_t*>(args.a);
    int64_t lda = problem_.k;
    if (needs_pad_always() || reinterpret_cast<uintptr_t>(args.a) % 16 != 0) {
      const int blocks = static_cast<int>(
          std::min<int64_t>((args.m * padded_k() + pad_.threads - 1) / pad_.threads, 4096));
      struct {
        const uint16_t* src;
        int32_t m, k;
        int64_t src_ld;
        uint16_t* dst;
        int32_t dst_ld;
      } pad_args{a,
                 int32_t(args.m),
                 int32_t(problem_.k),
                 problem_.k,
                 reinterpret_cast<uint16_t*>(workspace),
                 int32_t(padded_k())};
      auto driver = cuda_driver();
      if (!driver) return driver.status();
      void* params[] = {&pad_args.src,    &pad_args.m,   &pad_args.k,
                        &pad_args.src_ld, &pad_args.dst, &pad_args.dst_ld};
      QGEMM_CU(*driver, cuLaunchKernel, pad_.function, blocks, 1, 1, pad_.threads, 1, 1, 0, stream,
               params, nullptr);
      a = reinterpret_cast<const uint16_t*>(workspace);
      lda = padded_k();
    }
    const MmaGemmConfig& c = e.config;
    const int k_stages = (k_units_ + c.units_per_stage - 1) / c.units_per_stage;
    const int splits =
        std::min(mma_splits(c, args.m, problem_.n, problem_.k, problem_.device_info), k_stages);

    MmaGemmParams p{};
    p.weights = reinterpret_cast<const u8*>(codes_.ptr());
    p.scales = groups_ > 0 ? reinterpret_cast<const u32*>(scales_.ptr()) : nullptr;
    p.zeros = zeros_.bytes() > 0 ? reinterpret_cast<const u32*>(zeros_.ptr()) : nullptr;
    p.row_scale =
        row_scale_.bytes() > 0 ? reinterpret_cast<const float*>(row_scale_.ptr()) : nullptr;
    p.a = a;
    p.bias = args.bias;
    p.c = args.c;
    p.partials = reinterpret_cast<float*>(workspace + pad_bytes);
    p.counters = reinterpret_cast<i32*>(counters_.ptr());
    p.m = static_cast<i32>(args.m);
    p.n = static_cast<i32>(problem_.n);
    p.k = static_cast<i32>(lda == problem_.k ? problem_.k : padded_k());
    p.lda = static_cast<i32>(lda);
    p.ldc = static_cast<i32>(problem_.n);
    p.n_tiles = n_tiles_;
    p.k_units = k_units_;
    p.groups = groups_;
    p.k_stages = k_stages;
    const unsigned grid_y = static_cast<unsigned>((args.m + c.block_m() - 1) / c.block_m());
    return launch(kernels_[bucket], static_cast<unsigned>(grid_x(c)), grid_y,
                  static_cast<unsigned>(splits), p, stream);
  }

  std::string describe() const override {
    std::string s;
    int64_t lo = 1;
    for (const MmaPlanEntry& e : plan_) {
      const int64_t hi = std::min<int64_t>(e.max_m, handoff_m_ - 1);
      s += str("M ", lo, "..", hi, ": mma_gemm ", e.config.to_string(), ", split-K at M=", lo, ": ",
               mma_splits(e.config, lo, problem_.n, problem_.k, problem_.device_info), "\n  ");
      lo = e.max_m + 1;
      if (lo >= handoff_m_) break;
    }
    s += str("M >= ", handoff_m_, ": expand the packed weight to ", problem_.act.type.name(),
             " (mma_dequant), then cuBLASLt");
    return s;
  }

 private:
  const MmaPlanEntry& entry_for(int64_t m) const {
    for (const MmaPlanEntry& e : plan_)
      if (m <= e.max_m) return e;
    return plan_.back();
  }
  int64_t grid_x(const MmaGemmConfig& c) const {
    return (n_tiles_ + c.tiles_n * c.warps_n - 1) / (c.tiles_n * c.warps_n);
  }
  int64_t padded_k() const { return (problem_.k + 7) / 8 * 8; }

  // NOTE: cuBLASLt plans are cached per (M, bias). prepare() makes the one for max_tokens; run()
  // makes others on first use (host memory only, no device allocation, no compilation).
  Expected<std::shared_ptr<LtGemm>> gemm_for(int64_t m, bool bias) const {
    std::lock_guard<std::mutex> lock(gemm_mutex_);
    if (auto it = gemms_.find({m, bias}); it != gemms_.end()) return it->second;
    LtGemmShape s;
    s.m = m;
    s.n = problem_.n;
    s.k = problem_.k;
    s.a_type = s.w_type = problem_.act.type;
    s.out_type = problem_.out;
    s.lda = problem_.k;
    s.ldw = padded_k();
    s.bias = bias;
    auto g = LtGemm::create(s, kCublasWorkspace);
    if (g) gemms_.emplace(std::make_pair(m, bias), *g);
    return g;
  }

  // Large M: the packed weight expanded into the workspace, then one cuBLASLt GEMM.
  Status run_expanded(const LinearArgs& args) const {
    auto gemm = gemm_for(args.m, args.bias != nullptr);
    if (!gemm) return gemm.status();
    MmaDequantParams p{};
    p.weights = reinterpret_cast<const u8*>(codes_.ptr());
    p.scales = groups_ > 0 ? reinterpret_cast<const void*>(scales_.ptr()) : nullptr;
    p.zeros = zeros_.bytes() > 0 ? reinterpret_cast<const void*>(zeros_.ptr()) : nullptr;
    p.row_scale =
        row_scale_.bytes() > 0 ? reinterpret_cast<const float*>(row_scale_.ptr()) : nullptr;
    p.out = static_cast<u16*>(args.workspace);
    p.ldo = static_cast<i32>(padded_k());
    p.n = static_cast<i32>(problem_.n);
    p.k = static_cast<i32>(problem_.k);
    p.n_tiles = n_tiles_;
    p.k_units = k_units_;
    p.groups = groups_;
    const int64_t warps = int64_t(n_tiles_) * k_units_;
    const unsigned blocks = static_cast<unsigned>(std::clamp<int64_t>(
        (warps + 7) / 8, 1, 8 * std::max(problem_.device_info.multiprocessors, 1)));
    const CUstream stream = static_cast<CUstream>(args.stream);
    QGEMM_RETURN_IF_ERROR(launch(dequant_, blocks, 1, 1, p, stream));
    return (*gemm)->run(args.a, args.workspace, args.c, args.bias, nullptr, nullptr,
                        cublas_workspace_.get(), cublas_workspace_.bytes(), stream);
  }
  bool needs_pad_always() const { return problem_.k % 8 != 0; }

  LayerProblem problem_;
  std::vector<MmaPlanEntry> plan_;
  std::vector<LoadedKernel> kernels_;
  int64_t handoff_m_;
  LoadedKernel pad_, dequant_;
  DeviceBuffer codes_, scales_, zeros_, row_scale_, counters_, cublas_workspace_;
  mutable std::mutex gemm_mutex_;
  mutable std::map<std::pair<int64_t, bool>, std::shared_ptr<LtGemm>> gemms_;
  int n_tiles_ = 0, k_units_ = 0, groups_ = 0;
};

class JitBackend final : public Backend {
 public:
  BackendKind kind() const override { return BackendKind::kJit; }

  Support supports(const LayerProblem& p) const override {
    if (p.device < 0) return Support::no("the layer lives in host memory (device -1)");
    if (p.device_info.sm() == 0) return Support::no("no GPU");
    if (p.experts != 1) return Support::no("expert stacks run through MoE, not Linear");
    if (p.act.is_quantized())
      return Support::no(str("activations ", p.act.to_string(),
                             ": the jit kernels take fp16/bf16 activations in this version"));
    if (!p.act.is_quantized() && !(p.act.type == DType::fp16() || p.act.type == DType::bf16()))
      return Support::no(str("activation type ", p.act.type.name(), " is not fp16/bf16"));
    if (auto nvrtc = nvrtc_library(); !nvrtc) return Support::no(nvrtc.status().message());
    auto plan = plan_mma_gemm(p.n, p.k, p.weight, p.act.type, p.out, p.device_info);
    if (!plan) return Support::no(plan.status().message());
    return Support::yes();
  }

  Expected<std::unique_ptr<PreparedLayer>> build(const QuantizedWeight& w,
                                                 const LayerProblem& p) const override {
    auto plan = plan_mma_gemm(p.n, p.k, p.weight, p.act.type, p.out, p.device_info);
    if (!plan) return plan.status();
    QGEMM_RETURN_IF_ERROR(use_device(p.device));
    const int64_t handoff =
        cublaslt_library().ok() ? mma_handoff_m(p.device_info, p.act.type, p.out) : INT64_MAX;
    auto layer = std::make_unique<JitLayer>(p, std::move(*plan), handoff);
    QGEMM_RETURN_IF_ERROR(layer->upload(w));
    return std::unique_ptr<PreparedLayer>(std::move(layer));
  }
};

}  // namespace

const Backend& jit_backend() {
  static const JitBackend backend;
  return backend;
}

}  // namespace qgemm
