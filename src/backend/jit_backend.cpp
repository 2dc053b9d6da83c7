#include <algorithm>
#include <cstdint>

#include "backend/backend.h"
#include "backend/device_buffer.h"
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
size_t align_up(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// A dense layer on the mma.sync kernel family: packed weights on the GPU, one kernel per M bucket.
class JitLayer final : public PreparedLayer {
 public:
  JitLayer(LayerProblem problem, std::vector<MmaPlanEntry> plan)
      : problem_(std::move(problem)), plan_(std::move(plan)) {}

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
    std::vector<KernelSpec> specs;
    for (const MmaPlanEntry& e : plan_) specs.push_back(e.config.spec());
    specs.push_back(pad_rows_spec(problem_.device_info.arch()));
    // Buckets above max_tokens are not needed yet.
    size_t used = 0;
    while (used < plan_.size() && (used == 0 || plan_[used - 1].max_m < max_tokens)) ++used;
    std::vector<KernelSpec> wanted(specs.begin(), specs.begin() + used);
    wanted.push_back(specs.back());
    auto compiled = KernelCache::instance().get_all(wanted);
    kernels_.assign(plan_.size(), LoadedKernel{});
    for (size_t i = 0; i < wanted.size(); ++i) {
      if (!compiled[i]) return compiled[i].status();
      auto loaded = load_kernel(*compiled[i], wanted[i]);
      if (!loaded) return loaded.status();
      if (i + 1 == wanted.size())
        pad_ = *loaded;
      else
        kernels_[i] = *loaded;
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
    prepared_m_ = std::max(prepared_m_, max_tokens);
    return Status();
  }

  size_t workspace_bytes(int64_t m) const override {
    const MmaPlanEntry& e = entry_for(m);
    const int splits = mma_splits(e.config, m, problem_.n, problem_.k, problem_.device_info);
    // NOTE: room for padded activations is reserved even when K is a multiple of 8: a caller's
    // pointer that is not 16-byte aligned is padded too.
    size_t bytes = align_up(size_t(m) * padded_k() * 2);
    if (splits > 1) bytes += align_up(size_t(splits) * m * n_tiles_ * 16 * 4);
    return bytes;
  }

  Status run(const LinearArgs& args) const override {
    const MmaPlanEntry& e = entry_for(args.m);
    const size_t bucket = &e - plan_.data();
    if (kernels_[bucket].function == nullptr)
      return Status(ErrorCode::kInvalidArgument,
                    str("qgemm::Linear::run: m=", args.m, " needs the kernel of bucket M <= ", e.max_m,
                        ", which prepare() did not compile; call prepare(", args.m, ") first"));
    const CUstream stream = static_cast<CUstream>(args.stream);
    auto* workspace = static_cast<uint8_t*>(args.workspace);
    const size_t pad_bytes = align_up(size_t(args.m) * padded_k() * 2);
    const uint16_t* a = static_cast<const uint16_t*>(args.a);
    int64_t lda = problem_.k;
    if (needs_pad_always() || reinterpret_cast<uintptr_t>(args.a) % 16 != 0) {
      const int blocks = static_cast<int>(std::min<int64_t>(
          (args.m * padded_k() + pad_.threads - 1) / pad_.threads, 4096));
      struct {
        const uint16_t* src;
        int32_t m, k;
        int64_t src_ld;
        uint16_t* dst;
        int32_t dst_ld;
      } pad_args{a, int32_t(args.m), int32_t(problem_.k), problem_.k,
                 reinterpret_cast<uint16_t*>(workspace), int32_t(padded_k())};
      auto driver = cuda_driver();
      if (!driver) return driver.status();
      void* params[] = {&pad_args.src, &pad_args.m, &pad_args.k, &pad_args.src_ld, &pad_args.dst,
                        &pad_args.dst_ld};
      QGEMM_CU(*driver, cuLaunchKernel, pad_.function, blocks, 1, 1, pad_.threads, 1, 1, 0, stream,
               params, nullptr);
      a = reinterpret_cast<const uint16_t*>(workspace);
      lda = padded_k();
    }
    const MmaGemmConfig& c = e.config;
    int splits = mma_splits(c, args.m, problem_.n, problem_.k, problem_.device_info);
    int units_per_split = (k_units_ + splits - 1) / splits;
    units_per_split = (units_per_split + c.units_per_stage - 1) / c.units_per_stage * c.units_per_stage;
    splits = (k_units_ + units_per_split - 1) / units_per_split;

    MmaGemmParams p{};
    p.weights = reinterpret_cast<const u8*>(codes_.ptr());
    p.scales = groups_ > 0 ? reinterpret_cast<const u32*>(scales_.ptr()) : nullptr;
    p.zeros = zeros_.bytes() > 0 ? reinterpret_cast<const u32*>(zeros_.ptr()) : nullptr;
    p.row_scale = row_scale_.bytes() > 0 ? reinterpret_cast<const float*>(row_scale_.ptr()) : nullptr;
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
    p.units_per_split = units_per_split;
    const unsigned grid_y = static_cast<unsigned>((args.m + c.block_m() - 1) / c.block_m());
    return launch(kernels_[bucket], static_cast<unsigned>(grid_x(c)), grid_y,
                  static_cast<unsigned>(splits), p, stream);
  }

  std::string describe() const override {
    std::string s;
    int64_t lo = 1;
    for (const MmaPlanEntry& e : plan_) {
      const int64_t hi = std::min<int64_t>(e.max_m, 1 << 20);
      s += str("M ", lo, "..", e.max_m == INT64_MAX ? std::string("inf") : str(hi), ": mma_gemm ",
               e.config.to_string(), ", split-K at M=", lo, ": ",
               mma_splits(e.config, lo, problem_.n, problem_.k, problem_.device_info), "\n  ");
      lo = e.max_m + 1;
      if (e.max_m == INT64_MAX) break;
    }
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
  bool needs_pad_always() const { return problem_.k % 8 != 0; }

  LayerProblem problem_;
  std::vector<MmaPlanEntry> plan_;
  std::vector<LoadedKernel> kernels_;
  LoadedKernel pad_;
  DeviceBuffer codes_, scales_, zeros_, row_scale_, counters_;
  int n_tiles_ = 0, k_units_ = 0, groups_ = 0;
  int64_t prepared_m_ = 0;
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
    auto layer = std::make_unique<JitLayer>(p, std::move(*plan));
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
