// The grouped layer on the jit backend: the expert stack packed for the dense tile kernels, one
// expert after another in one allocation, and per call a tile list (moe_tiles) then one
// gathered GEMM launch (moe_grouped) over every expert. Routed calls on TMA tiles copy their
// rows in the list's order in between (moe_sort_rows), so the tiles box them.
#include <algorithm>
#include <cstring>

#include "backend/device_buffer.h"
#include "backend/grouped_layer.h"
#include "backend/jit_layer.h"
#include "backend/widened_act_layer.h"
#include "dense/mma_gemm_params.cuh"
#include "families/moe_grouped.h"
#include "jit/kernel_cache.h"
#include "jit/kernel_loader.h"
#include "jit/nvrtc_library.h"
#include "jit/tma_maps.h"
#include "moe_grouped/moe_grouped_params.cuh"
#include "pack/mma_pack.h"
#include "plan/mma_launch.h"
#include "util/error.h"
#include "util/memory.h"
#include "util/settings.h"

namespace qgemm {
namespace {

bool aligned16(const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; }

// The packed expert stack: expert e's codes, tables and row factors at e strides.
struct GroupedWeights {
  DeviceBuffer codes, scales, zeros, row_scale;
  size_t code_bytes = 0, scale_words = 0, zero_words = 0, row_floats = 0;  // per expert
  int n_tiles = 0, k_units = 0, groups = 0;
};

// Packs and uploads expert by expert: host memory holds one packed expert at a time, the GPU
// the stack once.
Expected<GroupedWeights> upload_stack(const QuantizedWeight& w, DType act) {
  GroupedWeights out;
  const CudaDriver* d = *cuda_driver();
  for (int64_t e = 0; e < w.experts; ++e) {
    auto packed = pack_mma(w, e, act);
    if (!packed) return packed.status();
    if (e == 0) {
      out.n_tiles = packed->n_tiles;
      out.k_units = packed->k_units;
      out.groups = packed->groups;
      out.code_bytes = packed->codes.size() * 4;
      out.scale_words = packed->scales.size();
      out.zero_words = packed->zeros.size();
      out.row_floats = packed->row_scale.size();
      const std::pair<DeviceBuffer*, size_t> buffers[] = {{&out.codes, out.code_bytes},
                                                          {&out.scales, out.scale_words * 4},
                                                          {&out.zeros, out.zero_words * 4},
                                                          {&out.row_scale, out.row_floats * 4}};
      for (const auto& [buffer, bytes] : buffers) {
        if (bytes == 0) continue;
        auto b = DeviceBuffer::allocate(bytes * w.experts);
        if (!b) return b.status();
        *buffer = std::move(*b);
      }
    }
    // Every expert of a stack packs to the same sizes (one format and shape).
    if (packed->codes.size() * 4 != out.code_bytes || packed->scales.size() != out.scale_words ||
        packed->zeros.size() != out.zero_words || packed->row_scale.size() != out.row_floats)
      return Status(ErrorCode::kInternal, str("expert ", e, " packs to other sizes than expert 0"));
    const std::pair<const DeviceBuffer*, std::pair<const void*, size_t>> parts[] = {
        {&out.codes, {packed->codes.data(), out.code_bytes}},
        {&out.scales, {packed->scales.data(), out.scale_words * 4}},
        {&out.zeros, {packed->zeros.data(), out.zero_words * 4}},
        {&out.row_scale, {packed->row_scale.data(), out.row_floats * 4}}};
    for (const auto& [buffer, part] : parts)
      if (part.second > 0)
        QGEMM_CU(d, cuMemcpyHtoD, buffer->ptr() + e * part.second, part.first, part.second);
  }
  return out;
}

class GroupedJitLayer final : public PreparedGrouped {
 public:
  GroupedJitLayer(LayerProblem problem, int64_t experts, GroupedWeights weights,
                  std::vector<MmaPlanEntry> plan)
      : problem_(std::move(problem)),
        experts_(experts),
        w_(std::move(weights)),
        plan_(std::move(plan)) {}

  Status prepare(int64_t max_rows) override {
    std::vector<KernelSpec> wanted{moe_tiles_spec(problem_.device_info.arch()),
                                   moe_sort_rows_spec(problem_.device_info.arch())};
    std::vector<size_t> used;
    int64_t lo = 1;
    for (size_t i = 0; i < plan_.size() && lo <= max_rows; ++i) {
      used.push_back(i);
      wanted.push_back(plan_[i].config.spec());
      lo = plan_[i].max_m == INT64_MAX ? INT64_MAX : plan_[i].max_m + 1;
    }
    auto compiled = KernelCache::instance().get_all(wanted);
    for (size_t j = 0; j < wanted.size(); ++j) {
      if (!compiled[j]) return compiled[j].status();
      auto loaded = load_kernel(*compiled[j], wanted[j]);
      if (!loaded) return loaded.status();
      if (j == 0) {
        tiles_kernel_ = *loaded;
      } else if (j == 1) {
        sort_kernel_ = *loaded;
      } else {
        kernels_[used[j - 2]] = *loaded;
        registers_[used[j - 2]] = compiled[j].value()->resources.registers;
      }
    }
    return Status();
  }

  size_t workspace_bytes(const GroupedArgs& shape) const override {
    if (shape.rows <= 0) return 0;
    const MmaGemmConfig& c = plan_[bucket_for(shape)].config;
    const int64_t tiles = max_tiles(shape, c);
    size_t bytes = align256(tiles * sizeof(MoeTile)) + align256(tiles * c.block_m() * 4);
    if (sorts(shape, c))  // the order, then the sorted rows (padded)
      return bytes + align256(grouped_slots(shape) * 4) +
             align256(size_t(grouped_slots(shape)) * padded_k() * 2);
    if (needs_padding(shape)) bytes += align256(size_t(a_rows(shape)) * padded_k() * 2);
    return bytes;
  }

  std::string describe() const override {
    std::string s;
    int64_t lo = 1;
    for (const MmaPlanEntry& e : plan_) {
      s += str(e.max_m == INT64_MAX ? str(lo, "+") : str(lo, "..", e.max_m),
               " rows per expert: moe_grouped ", e.config.to_string(), "\n  ");
      if (e.max_m == INT64_MAX) break;
      lo = e.max_m + 1;
    }
    return s +
           "plus the tile list (moe_tiles) before each call, and for routed calls on TMA "
           "tiles (tma) a copy of the rows in its order (moe_sort_rows)";
  }

  Status run(const GroupedArgs& args) const override { return launch(args, true); }
  Status run_on_built_tiles(const GroupedArgs& args) const override { return launch(args, false); }
  // A call that sorts its rows builds its own list (its order lives in its own workspace).
  int tile_rows(const GroupedArgs& args) const override {
    if (args.rows <= 0) return 0;
    const MmaGemmConfig& c = plan_[bucket_for(args)].config;
    return sorts(args, c) ? 0 : c.block_m();
  }

 private:
  Status launch(const GroupedArgs& args, bool build_tiles) const {
    if (args.rows == 0) return Status();
    const size_t bucket = bucket_for(args);
    if (kernels_.empty() || kernels_[bucket].function == nullptr ||
        tiles_kernel_.function == nullptr || sort_kernel_.function == nullptr)
      return invalid_argument(str("qgemm::GroupedLinear::run: ", args.out_rows(experts_), " rows (",
                                  grouped_layout_name(args.layout),
                                  ") need a kernel prepare() did not compile; call ", "prepare(",
                                  args.out_rows(experts_), ") first"));
    if (args.workspace_bytes < workspace_bytes(args) ||
        (workspace_bytes(args) > 0 && args.workspace == nullptr))
      return invalid_argument(str("qgemm::GroupedLinear::run: the workspace has ",
                                  args.workspace_bytes, " bytes; this call needs ",
                                  workspace_bytes(args), " (workspace_bytes(args))"));
    const MmaGemmConfig& c = plan_[bucket].config;
    const int64_t tiles = max_tiles(args, c);
    if (tiles > 65535)
      return unsupported(str("qgemm::GroupedLinear::run: ", tiles, " token tiles of ", c.block_m(),
                             " rows exceed one launch's 65535; split the call"));
    // The gathered loader keeps 32-bit element offsets into A (MmaGemm::Loader::a_off).
    if (a_rows(args) * padded_k() >= (int64_t(1) << 32))
      return unsupported(str("qgemm::GroupedLinear::run: A has ", a_rows(args),
                             " rows of K=", problem_.k, ", 2^32 elements or more; split the call"));
    const bool sorts = this->sorts(args, c);
    if (sorts && !build_tiles)
      return invalid_argument(
          "qgemm::GroupedLinear::run_on_built_tiles: this call copies its rows in the order of "
          "a tile list it builds itself; call run()");
    const CUstream stream = static_cast<CUstream>(args.stream);
    auto* ws = static_cast<uint8_t*>(args.workspace);
    auto* tile_list = reinterpret_cast<MoeTile*>(ws);
    auto* positions = reinterpret_cast<i32*>(ws + align256(tiles * sizeof(MoeTile)));
    uint8_t* after_list =
        ws + align256(tiles * sizeof(MoeTile)) + align256(tiles * c.block_m() * 4);
    auto* order = sorts ? reinterpret_cast<i32*>(after_list) : nullptr;
    uint8_t* rows = sorts ? after_list + align256(grouped_slots(args) * 4) : after_list;
    const uint16_t* a = static_cast<const uint16_t*>(args.a);
    int64_t lda = problem_.k, a_rows = this->a_rows(args);
    if (needs_padding(args) && !sorts) {
      QGEMM_RETURN_IF_ERROR(copy_padded_rows(args.a, rows, a_rows, problem_.k, stream));
      a = reinterpret_cast<const uint16_t*>(rows);
      lda = padded_k();
    }
    const size_t out_bytes = (problem_.out.bits + 7) / 8;

    if (build_tiles)
      QGEMM_RETURN_IF_ERROR(launch_moe_tiles(
          tiles_kernel_, args, experts_, c.block_m(), tiles, tile_list, positions, order,
          static_cast<int64_t>(problem_.n * out_bytes), problem_.device_info.multiprocessors,
          grouped_programmatic(problem_), stream));
    if (sorts) {
      QGEMM_RETURN_IF_ERROR(sort_rows(args, order, reinterpret_cast<uint16_t*>(rows), stream));
      a = reinterpret_cast<const uint16_t*>(rows);
      lda = padded_k();
      a_rows = grouped_slots(args);
    }

    MmaGemmParams p{};
    p.weights = reinterpret_cast<const u8*>(w_.codes.ptr());
    p.scales = w_.scale_words > 0 ? reinterpret_cast<const u32*>(w_.scales.ptr()) : nullptr;
    p.zeros = w_.zero_words > 0 ? reinterpret_cast<const u32*>(w_.zeros.ptr()) : nullptr;
    p.row_scale = w_.row_floats > 0 ? reinterpret_cast<const float*>(w_.row_scale.ptr()) : nullptr;
    p.a = a;
    p.bias = args.bias;
    p.c = args.c;
    p.m = 0;  // per tile (moe_grouped_kernel)
    p.n = static_cast<i32>(problem_.n);
    p.k = static_cast<i32>(lda == problem_.k ? problem_.k : padded_k());
    p.lda = static_cast<i32>(lda);
    p.ldc = static_cast<i32>(problem_.n);
    p.n_tiles = w_.n_tiles;
    p.k_units = w_.k_units;
    p.groups = w_.groups;
    p.k_stages = c.k_stages(problem_.k);
    p.rows = positions;
    if (!c.sorted_rows) p.a_div = a_div(args);  // sorted tiles take a row shift per tile
    MoeGroupParams g{};
    g.tiles = tile_list;
    g.code_stride = static_cast<i64>(w_.code_bytes);
    g.scale_stride = static_cast<i64>(w_.scale_words);
    g.zero_stride = static_cast<i64>(w_.zero_words);
    g.row_scale_stride = static_cast<i64>(w_.row_floats);
    g.bias_stride = static_cast<i64>(problem_.n * out_bytes);
    MmaGemmMaps maps{};
    QGEMM_RETURN_IF_ERROR(encode_tma_maps(c, p, &maps, a_rows, experts_));
    const int64_t grid_x = (w_.n_tiles + c.tiles_n * c.warps_n - 1) / (c.tiles_n * c.warps_n);
    const int splits = k_splits(bucket, grid_x * tiles);
    return launch_clusters(kernels_[bucket], static_cast<unsigned>(grid_x),
                           static_cast<unsigned>(tiles), static_cast<unsigned>(splits), 1,
                           static_cast<unsigned>(splits), grouped_programmatic(problem_), stream, p,
                           maps, g);
  }

  /// The slots' rows copied in the tile list's order (padded to whole 16 bytes) for the tiles.
  Status sort_rows(const GroupedArgs& args, const i32* order, uint16_t* out,
                   CUstream stream) const {
    MoeSortRowsParams s{};
    s.a = static_cast<const u16*>(args.a);
    s.lda = problem_.k;
    s.a_div = a_div(args);
    s.order = order;
    s.rows = static_cast<i32>(grouped_slots(args));
    s.k = static_cast<i32>(problem_.k);
    s.ldo = static_cast<i32>(padded_k());
    s.out = out;
    s.vector = !needs_padding(args);
    const int64_t blocks =
        std::clamp<int64_t>(s.rows, 1, 8 * int64_t(problem_.device_info.multiprocessors));
    return launch_z_clusters(sort_kernel_, static_cast<unsigned>(blocks), 1, 1, 1,
                             grouped_programmatic(problem_), stream, s);
  }
  /// Slot s reads row s / a_div of A: top-k for routed tokens, 1 for a row per slot or position.
  static int a_div(const GroupedArgs& a) {
    return a.layout == GroupedLayout::kRouted && !a.a_per_slot ? a.top_k : 1;
  }
  /// Routed calls on TMA tiles read a copy of their rows sorted by the tile list.
  static bool sorts(const GroupedArgs& a, const MmaGemmConfig& c) {
    return c.sorted_rows && a.layout == GroupedLayout::kRouted;
  }
  int64_t a_rows(const GroupedArgs& a) const { return grouped_a_rows(a, experts_); }
  size_t bucket_for(const GroupedArgs& a) const {
    const int64_t m = grouped_rows_per_expert(a, experts_);
    for (size_t i = 0; i < plan_.size(); ++i)
      if (m <= plan_[i].max_m) return i;
    return plan_.size() - 1;
  }
  int64_t max_tiles(const GroupedArgs& a, const MmaGemmConfig& c) const {
    return moe_max_tiles(a.layout, grouped_slots(a), experts_, c.block_m());
  }
  int64_t padded_k() const { return (problem_.k + 7) / 8 * 8; }
  // NOTE: K splits only in pairs summed in a cluster (no partials, no counters: the dense
  // tiles' cluster sum, mma_split_cluster), only of the mma.sync decode tiles (the
  // warp-specialized tiles' cluster sum of gathered rows has no test), and only where the
  // doubled grid still fits the decode pair's share of a wave: at decode with few experts hit,
  // where a CTA per tile leaves SMs without enough weight bytes in flight (Mixtral's w2 at one
  // token: 128 CTAs over K = 14336). Tiles past the list's end count too: the grid is sized
  // before the routing is known.
  int k_splits(size_t bucket, int64_t ctas) const {
    const MmaGemmConfig& c = plan_[bucket].config;
    if (c.warp_specialized || c.k_stages(problem_.k) < 2 * settings().split_min_stages) return 1;
    const double fill = mma_waves(c, 2 * ctas, problem_.device_info, registers_[bucket]);
    return fill <= 1.0 && mma_split_cluster(c, 2, fill) == 2 ? 2 : 1;
  }
  bool needs_padding(const GroupedArgs& a) const { return problem_.k % 8 != 0 || !aligned16(a.a); }
  LayerProblem problem_;
  int64_t experts_;
  GroupedWeights w_;
  std::vector<MmaPlanEntry> plan_;
  std::vector<LoadedKernel> kernels_ = std::vector<LoadedKernel>(plan_.size());
  std::vector<int> registers_ = std::vector<int>(plan_.size(), 0);
  LoadedKernel tiles_kernel_, sort_kernel_;
};

}  // namespace

int64_t grouped_slots(const GroupedArgs& a) {
  return a.layout == GroupedLayout::kRouted ? a.rows * a.top_k : a.rows;
}

int64_t grouped_a_rows(const GroupedArgs& a, int64_t experts) {
  return a.layout == GroupedLayout::kMasked ? a.rows * experts
         : a.a_per_slot                     ? a.rows * a.top_k
                                            : a.rows;
}

int64_t grouped_rows_per_expert(const GroupedArgs& a, int64_t experts) {
  return a.layout == GroupedLayout::kMasked ? a.rows
                                            : moe_rows_per_expert(grouped_slots(a), experts);
}

Status launch_moe_tiles(const LoadedKernel& kernel, const GroupedArgs& args, int64_t experts,
                        int block_m, int64_t tiles, MoeTile* list, int32_t* positions,
                        int32_t* order, int64_t row_bytes, int sms, bool programmatic,
                        CUstream stream) {
  MoeTilesParams t{};
  t.layout = static_cast<i32>(args.layout == GroupedLayout::kRouted       ? MoeLayout::kRouted
                              : args.layout == GroupedLayout::kContiguous ? MoeLayout::kContiguous
                                                                          : MoeLayout::kMasked);
  t.slots = static_cast<i32>(grouped_slots(args));
  t.experts = static_cast<i32>(experts);
  t.expert_ids = args.expert_ids;
  t.expert_map = args.expert_map;
  t.global_experts = static_cast<i32>(args.expert_map != nullptr ? args.global_experts : experts);
  t.offsets = args.offsets;
  t.counts = args.counts;
  t.block_m = block_m;
  t.max_tiles = static_cast<i32>(tiles);
  t.tiles = list;
  t.positions = positions;
  t.order = order;
  t.c = static_cast<u8*>(args.c);
  t.c_pitch = row_bytes;
  t.row_bytes = static_cast<i32>(row_bytes);
  // Block 0 builds the list; routed calls add blocks that zero the unrouted slots' rows.
  const unsigned zero_blocks = args.layout == GroupedLayout::kRouted
                                   ? static_cast<unsigned>(std::clamp<int64_t>(t.slots, 1, sms))
                                   : 0;
  return launch_z_clusters(kernel, 1 + zero_blocks, 1, 1, 1, programmatic, stream, t);
}

bool grouped_programmatic(const DeviceInfo& device, bool requested) {
  return device.sm() >= 90 && requested && !settings().no_programmatic_launch;
}

Support grouped_jit_support(const LayerProblem& p) {
  if (p.device < 0) return Support::no("the layer is on host memory (device -1)");
  if (p.device_info.sm() == 0) return Support::no("no GPU");
  if (p.experts > kMaxMoeExperts)
    return Support::no(str(p.experts, " experts; the GPU tile list takes at most ", kMaxMoeExperts,
                           " per device"));
  if (auto nvrtc = nvrtc_library(); !nvrtc) return Support::no(nvrtc.status().message());
  if (p.act.is_quantized()) {
    const Support act8 = grouped_act8_support(p);
    if (act8.ok) return act8;
    // Else the rows quantized and widened back, for the 16-bit tiles.
    const Support widened = widened_act_grouped_support(p);
    if (!widened.ok) return Support::no(str(act8.reason, "; not widened: ", widened.reason));
    auto plan = plan_moe_grouped(p.n, p.k, p.weight, p.input, p.out, p.device_info, p.experts);
    if (!plan)
      return Support::no(
          str(act8.reason, "; widened to ", p.input.name(), ": ", plan.status().message()));
    return Support::yes();
  }
  auto plan = plan_moe_grouped(p.n, p.k, p.weight, p.act.type, p.out, p.device_info, p.experts);
  if (!plan) return Support::no(plan.status().message());
  return Support::yes();
}

Expected<std::unique_ptr<PreparedGrouped>> build_grouped_jit(const QuantizedWeight& stack,
                                                             const LayerProblem& p) {
  if (p.act.is_quantized()) {
    if (grouped_act8_support(p).ok) return build_grouped_act8(stack, p);
    auto weight_only = build_grouped_jit(stack, widened_problem(p));
    if (!weight_only) return weight_only.status();
    return make_widened_act_grouped(p, stack.experts, std::move(*weight_only));
  }
  auto plan = plan_moe_grouped(p.n, p.k, p.weight, p.act.type, p.out, p.device_info, p.experts);
  if (!plan) return plan.status();
  QGEMM_RETURN_IF_ERROR(use_device(p.device));
  auto weights = upload_stack(stack, p.act.type);
  if (!weights) return weights.status();
  return std::unique_ptr<PreparedGrouped>(
      new GroupedJitLayer(p, stack.experts, std::move(*weights), std::move(*plan)));
}

}  // namespace qgemm
