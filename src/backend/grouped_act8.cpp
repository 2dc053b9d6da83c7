// The grouped layer on 8-bit activations (jit backend, sm_90a): the expert stack's codes in
// rows padded to 16 bytes, one expert after another under one TMA map, and per call the GPU
// quantizer over the input rows, the tile list (moe_tiles), then one gathered launch of the
// dense_act8 tiles (moe_grouped_act8). Full (128-token) tiles read their rows by TMA: routed
// calls quantize into a copy sorted by the list (one row per slot) after building it.
#include <algorithm>

#include "backend/device_buffer.h"
#include "backend/grouped_layer.h"
#include "dense_act8/dense_act8_params.cuh"
#include "families/dense_act8.h"
#include "families/moe_grouped.h"
#include "jit/cuda_driver.h"
#include "jit/kernel_cache.h"
#include "jit/tma_maps.h"
#include "quant/gpu_act_quantizer.h"
#include "util/error.h"
#include "util/memory.h"

namespace qgemm {
namespace {

class GroupedAct8Layer final : public PreparedGrouped {
 public:
  GroupedAct8Layer(LayerProblem problem, int64_t experts)
      : problem_(std::move(problem)), experts_(experts) {}

  // Codes of every expert in rows of align16(K) bytes (TMA's pitch), expert e's rows at
  // e * N; the fp32 scale tables one after another.
  Status upload(const QuantizedWeight& w) {
    const int64_t rows = experts_ * w.n, ldw = align16(w.k);
    auto codes = DeviceBuffer::allocate(static_cast<size_t>(rows * ldw));
    if (!codes) return codes.status();
    codes_ = std::move(*codes);
    auto driver = cuda_driver();
    if (!driver) return driver.status();
    QGEMM_CU(*driver, cuMemsetD8, codes_.ptr(), 0, codes_.bytes());
    CUDA_MEMCPY2D copy{};
    copy.srcMemoryType = CU_MEMORYTYPE_HOST;
    copy.srcHost = w.codes.data();
    copy.srcPitch = static_cast<size_t>(w.row_bytes());
    copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
    copy.dstDevice = codes_.ptr();
    copy.dstPitch = static_cast<size_t>(ldw);
    copy.WidthInBytes = static_cast<size_t>(w.row_bytes());
    copy.Height = static_cast<size_t>(rows);
    QGEMM_CU(*driver, cuMemcpy2DAsync, &copy, nullptr);
    QGEMM_CU(*driver, cuStreamSynchronize, nullptr);
    auto scales = DeviceBuffer::upload(w.scales.data(), w.scales.size() * 4);
    if (!scales) return scales.status();
    scales_ = std::move(*scales);
    scale_stride_ = static_cast<int64_t>(w.scales.size()) / experts_;
    return encode_tma_bytes_sw128(codes_.get(), w.k, rows, ldw, 128, 128, &w_map_);
  }

  Status prepare(int64_t max_rows) override {
    const std::string arch = problem_.device_info.arch();
    const std::vector<DenseAct8Config> configs =
        moe_grouped_act8_configs(problem_.weight, problem_.act, problem_.out, problem_.device_info,
                                 problem_.n, problem_.k, max_rows);
    std::vector<KernelSpec> wanted{moe_tiles_spec(arch)};
    for (const DenseAct8Config& c : configs) wanted.push_back(c.spec());
    auto compiled = KernelCache::instance().get_all(wanted);
    for (size_t i = 0; i < wanted.size(); ++i) {
      if (!compiled[i]) return compiled[i].status();
      auto loaded = load_kernel(*compiled[i], wanted[i]);
      if (!loaded) return loaded.status();
      if (i == 0)
        tiles_kernel_ = *loaded;
      else
        kernels_[config_index(configs[i - 1].block_n)] = *loaded;
    }
    if (!quantizer_) {
      auto q = GpuActQuantizer::create(problem_.act, problem_.input, arch);
      if (!q) return q.status();
      quantizer_ = std::make_unique<GpuActQuantizer>(std::move(*q));
    }
    return Status();
  }

  size_t workspace_bytes(const GroupedArgs& shape) const override {
    if (shape.rows <= 0) return 0;
    const DenseAct8Config c = config_for(shape);
    const int64_t tiles = max_tiles(shape, c);
    return align256(act_workspace_bytes(problem_.act, quantized_rows(shape, c), problem_.k)) +
           align256(tiles * sizeof(MoeTile)) + align256(tiles * c.block_n * 4) +
           (sorts(shape, c) ? align256(grouped_slots(shape) * 4) : 0);
  }

  std::string describe() const override {
    std::string s;
    int64_t from = 1;
    for (const DenseAct8Config& c :
         moe_grouped_act8_configs(problem_.weight, problem_.act, problem_.out, problem_.device_info,
                                  problem_.n, problem_.k, INT64_MAX)) {
      s += str(from == 1 ? "" : "\n  ", from, c.block_n == 128 ? "+" : str("..", c.block_n),
               " rows per expert: moe_grouped ", c.to_string());
      from = c.block_n + 1;
    }
    return s + str("\n  plus the GPU quantizer (", problem_.act.to_string(),
                   ") and the tile list (moe_tiles) before each call");
  }

  Status run(const GroupedArgs& args) const override {
    if (args.rows == 0) return Status();
    const DenseAct8Config c = config_for(args);
    const LoadedKernel& kernel = kernels_[config_index(c.block_n)];
    if (kernel.function == nullptr || tiles_kernel_.function == nullptr || !quantizer_)
      return invalid_argument(str("qgemm::GroupedLinear::run: ", args.out_rows(experts_), " rows (",
                                  grouped_layout_name(args.layout),
                                  ") need a kernel prepare() did not compile; call prepare(",
                                  args.out_rows(experts_), ") first"));
    if (args.workspace_bytes < workspace_bytes(args) || args.workspace == nullptr)
      return invalid_argument(str("qgemm::GroupedLinear::run: the workspace has ",
                                  args.workspace_bytes, " bytes; this call needs ",
                                  workspace_bytes(args), " (workspace_bytes(args))"));
    const int64_t tiles = max_tiles(args, c);
    if (tiles > 65535)
      return unsupported(str("qgemm::GroupedLinear::run: ", tiles, " token tiles of ", c.block_n,
                             " rows exceed one launch's 65535; split the call"));
    const int64_t k = problem_.k, n = problem_.n, a_rows = grouped_a_rows(args, experts_);
    const int64_t q_rows = quantized_rows(args, c);
    const bool sorts = this->sorts(args, c);
    const int a_div = args.layout == GroupedLayout::kRouted && !args.a_per_slot ? args.top_k : 1;
    const CUstream stream = static_cast<CUstream>(args.stream);
    auto* ws = static_cast<uint8_t*>(args.workspace);
    void* scratch = nullptr;
    const DeviceActs acts = carve_act_workspace(ws, problem_.act, q_rows, k, &scratch);
    uint8_t* after_acts = ws + align256(act_workspace_bytes(problem_.act, q_rows, k));
    auto* list = reinterpret_cast<MoeTile*>(after_acts);
    auto* positions = reinterpret_cast<i32*>(after_acts + align256(tiles * sizeof(MoeTile)));
    auto* order = sorts ? reinterpret_cast<i32*>(reinterpret_cast<uint8_t*>(positions) +
                                                 align256(tiles * c.block_n * 4))
                        : nullptr;
    // Rows in place are quantized first; a sorted copy needs the list's order of the rows.
    if (!sorts)
      QGEMM_RETURN_IF_ERROR(quantizer_->quantize(args.a, k, a_rows, k, acts, scratch, stream));
    const size_t out_bytes = (problem_.out.bits + 7) / 8;
    QGEMM_RETURN_IF_ERROR(launch_moe_tiles(tiles_kernel_, args, experts_, c.block_n, tiles, list,
                                           positions, order, static_cast<int64_t>(n * out_bytes),
                                           problem_.device_info.multiprocessors,
                                           grouped_programmatic(problem_), stream));
    if (sorts)
      QGEMM_RETURN_IF_ERROR(
          quantizer_->quantize_rows(args.a, k, order, a_div, q_rows, k, acts, scratch, stream));
    DenseAct8Params p{};
    p.w_scale = static_cast<const float*>(scales_.get());
    p.a_scale = acts.scales;
    p.bias = args.bias;
    p.c = args.c;
    p.m = 0;  // per tile (moe_grouped_act8_kernel)
    p.n = static_cast<i32>(n);
    p.k = static_cast<i32>(k);
    p.ldc = static_cast<i32>(n);
    p.k_stages = static_cast<i32>((k + 127) / 128);
    p.w_scale_cols = static_cast<i32>((k + 127) / 128);
    p.a_scale_cols = static_cast<i32>(std::max<int64_t>(problem_.act.scale_cols(k), 1));
    p.rows = positions;
    p.a_div = a_div;
    MoeGroupParams g{};
    g.tiles = list;
    g.code_stride = n;  // weight rows per expert in the map
    g.scale_stride = scale_stride_;
    g.bias_stride = static_cast<i64>(n * out_bytes);
    // The weights through their map; the gathered rows of A by cp.async (DenseAct8::produce),
    // or sorted rows through a map of their own.
    p.a_codes = static_cast<const u8*>(acts.q);
    p.lda = static_cast<i32>(acts.ldq);
    DenseAct8Maps maps{};
    maps.w = w_map_;
    if (c.sorted_rows)
      QGEMM_RETURN_IF_ERROR(
          encode_tma_bytes_sw128(acts.q, k, q_rows, acts.ldq, 128, c.block_n, &maps.a));
    return launch_clusters(kernel, static_cast<unsigned>((n + 127) / 128),
                           static_cast<unsigned>(tiles), 1, 1, 1, grouped_programmatic(problem_),
                           stream, p, maps, g);
  }

 private:
  DenseAct8Config config(int64_t rows_per_expert) const {
    return moe_grouped_act8_config(problem_.weight, problem_.act, problem_.out,
                                   problem_.device_info, rows_per_expert, problem_.n, problem_.k);
  }
  DenseAct8Config config_for(const GroupedArgs& a) const {
    return config(std::max<int64_t>(grouped_rows_per_expert(a, experts_), 1));
  }
  /// Routed rows the tiles read in sorted order: the quantizer copies them so, one row per slot.
  static bool sorts(const GroupedArgs& a, const DenseAct8Config& c) {
    return c.sorted_rows && a.layout == GroupedLayout::kRouted;
  }
  /// Rows the layer quantizes: the input's, or one per slot in sorted order.
  int64_t quantized_rows(const GroupedArgs& a, const DenseAct8Config& c) const {
    return sorts(a, c) ? grouped_slots(a) : grouped_a_rows(a, experts_);
  }
  int64_t max_tiles(const GroupedArgs& a, const DenseAct8Config& c) const {
    return moe_max_tiles(a.layout, grouped_slots(a), experts_, c.block_n);
  }
  static size_t config_index(int block_n) {
    return block_n <= 8 ? 0 : block_n <= 16 ? 1 : block_n <= 32 ? 2 : block_n <= 64 ? 3 : 4;
  }

  LayerProblem problem_;
  int64_t experts_;
  DeviceBuffer codes_, scales_;
  int64_t scale_stride_ = 0;  ///< floats of weight scales per expert
  TmaMap w_map_ = {};
  LoadedKernel tiles_kernel_;
  LoadedKernel kernels_[5];  ///< by config_index: 8, 16, 32, 64, 128 tokens per tile
  std::unique_ptr<GpuActQuantizer> quantizer_;
};

}  // namespace

Support grouped_act8_support(const LayerProblem& p) {
  const Support kernels = dense_act8_supports(p.weight, p.act, p.out, p.device_info);
  if (!kernels.ok) return kernels;
  if (p.act.scale_kind == ActScaleKind::kTensor)
    return Support::no(str("activations ", p.act.to_string(),
                           ": one tensor scale over a grouped call's rows; the grouped 8-bit "
                           "kernels take token or 128-group scales"));
  if (!(p.input == DType::bf16() || p.input == DType::fp16()))
    return Support::no(str("input ", p.input.name(), ": the layer quantizes fp16 or bf16 rows"));
  if (p.experts * p.n >= (int64_t(1) << 31))
    return Support::no(str(p.experts, " experts x N=", p.n, " weight rows: 2^31 or more"));
  return Support::yes();
}

Expected<std::unique_ptr<PreparedGrouped>> build_grouped_act8(const QuantizedWeight& stack,
                                                              const LayerProblem& p) {
  QGEMM_RETURN_IF_ERROR(use_device(p.device));
  auto layer = std::make_unique<GroupedAct8Layer>(p, stack.experts);
  QGEMM_RETURN_IF_ERROR(layer->upload(stack));
  return std::unique_ptr<PreparedGrouped>(std::move(layer));
}

}  // namespace qgemm
