#include "backend/jit_layer.h"

#include <algorithm>
#include <cstdint>

#include "backend/cublaslt_library.h"
#include "dense/mma_gemm_params.cuh"
#include "dense_expand/dense_expand_params.cuh"
#include "jit/kernel_cache.h"
#include "jit/tma_maps.h"
#include "pack/mma_pack.h"
#include "util/error.h"
#include "util/memory.h"
#include "util/settings.h"

namespace qgemm {
namespace {

constexpr size_t kCublasWorkspace = 32u << 20;
bool aligned16(const void* ptr) { return reinterpret_cast<uintptr_t>(ptr) % 16 == 0; }

// Points the weight operands of a kernel's parameters (the GEMM's or the expansion's, each with
// its own pointer types) at the uploaded weights; null where the format has none of a table.
template <typename Params>
void point_at_weights(const JitWeights& w, Params& p) {
  p.weights = reinterpret_cast<decltype(p.weights)>(w.codes.ptr());
  p.scales = w.groups > 0 ? reinterpret_cast<decltype(p.scales)>(w.scales.ptr()) : nullptr;
  p.zeros = w.zeros.bytes() > 0 ? reinterpret_cast<decltype(p.zeros)>(w.zeros.ptr()) : nullptr;
  p.row_scale = w.row_scale.bytes() > 0 ? reinterpret_cast<decltype(p.row_scale)>(w.row_scale.ptr())
                                        : nullptr;
}

}  // namespace

Expected<std::shared_ptr<const JitWeights>> JitWeights::upload(const QuantizedWeight& w,
                                                               DType act) {
  auto packed = pack_mma(w, 0, act);
  if (!packed) return packed.status();
  auto out = std::make_shared<JitWeights>();
  out->n_tiles = packed->n_tiles;
  out->k_units = packed->k_units;
  out->groups = packed->groups;
  auto codes = DeviceBuffer::upload(packed->codes.data(), packed->codes.size() * 4);
  auto scales = DeviceBuffer::upload(packed->scales.data(), packed->scales.size() * 4);
  auto zeros = DeviceBuffer::upload(packed->zeros.data(), packed->zeros.size() * 4);
  auto rows = DeviceBuffer::upload(packed->row_scale.data(), packed->row_scale.size() * 4);
  for (auto* b : {&codes, &scales, &zeros, &rows})
    if (!*b) return b->status();
  out->codes = std::move(*codes);
  out->scales = std::move(*scales);
  out->zeros = std::move(*zeros);
  out->row_scale = std::move(*rows);
  return std::shared_ptr<const JitWeights>(std::move(out));
}

JitLayer::JitLayer(LayerProblem problem, std::shared_ptr<const JitWeights> weights,
                   JitKernelPlan plan)
    : problem_(std::move(problem)), w_(std::move(weights)), plan_(std::move(plan)) {}

Status JitLayer::prepare(int64_t max_tokens) {
  // The kernels of every bucket that starts at or below max_tokens.
  std::vector<size_t> used;
  std::vector<KernelSpec> wanted;
  int64_t lo = 1;
  for (size_t i = 0; i < plan_.buckets.size() && lo <= max_tokens; ++i) {
    const JitBucket& b = plan_.buckets[i];
    used.push_back(i);
    wanted.push_back(b.spec());
    if (b.max_m == INT64_MAX) break;
    lo = b.max_m + 1;
  }
  auto compiled = KernelCache::instance().get_all(wanted);
  kernels_.resize(plan_.buckets.size());
  cluster_slots_.resize(plan_.buckets.size(), ClusterSlots{});
  bool expand = false;
  for (size_t j = 0; j < used.size(); ++j) {
    if (!compiled[j]) return compiled[j].status();
    auto loaded = load_kernel(*compiled[j], wanted[j]);
    if (!loaded) return loaded.status();
    kernels_[used[j]] = *loaded;
    const JitBucket& b = plan_.buckets[used[j]];
    expand |= b.expand;
    for (int z = 2; !b.expand && z <= kMaxClusterSplits; ++z)
      if (mma_split_cluster(b.config, z) == z) {
        // A driver that cannot tell leaves the count unknown: the planned splits stand.
        auto slots = max_active_clusters(*loaded, static_cast<unsigned>(z));
        cluster_slots_[used[j]][z] = slots.ok() ? *slots : 0;
      }
  }
  if (expand) {
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
  // Split-K arrival counters: one per CTA tile of the largest grid any mma bucket launches (an
  // mma bucket also runs the M above it when the hand-off cannot take the operands).
  int64_t tiles = 1;
  for (size_t i : used) {
    const MmaGemmConfig& c = plan_.buckets[i].config;
    tiles = std::max<int64_t>(tiles, grid_x(c) * token_tiles(c, max_tokens));
  }
  // Marked partials for the bucket's whole M range (the last one's up to max_tokens).
  size_t marked = 0;
  lo = 1;
  for (size_t i : used) {
    const JitBucket& b = plan_.buckets[i];
    const int64_t hi = b.max_m == INT64_MAX ? max_tokens : b.max_m;
    for (int64_t m = lo; !b.expand && b.config.marks_partials() && m <= hi; ++m)
      marked = std::max(marked, marked_floats(i, m));
    if (b.max_m != INT64_MAX) lo = b.max_m + 1;
  }
  if (marked_partials_.bytes() < marked * 4) {
    auto buffer = DeviceBuffer::allocate(marked * 4);
    if (!buffer) return buffer.status();
    marked_partials_ = std::move(*buffer);
    const CudaDriver* d = *cuda_driver();
    QGEMM_CU(d, cuMemsetD8, marked_partials_.ptr(), 0xff, marked_partials_.bytes());
  }
  if (counters_.bytes() < size_t(tiles) * 4) {
    auto counters = DeviceBuffer::allocate(tiles * 4);
    if (!counters) return counters.status();
    counters_ = std::move(*counters);
    const CudaDriver* d = *cuda_driver();
    QGEMM_CU(d, cuMemsetD8, counters_.ptr(), 0, counters_.bytes());
  }
  // NOTE: the fills above go on the legacy default stream, which a caller's non-blocking stream
  // does not wait for: they must be done before prepare() returns, or a first run() could read
  // the buffers unfilled.
  const CudaDriver* d = *cuda_driver();
  QGEMM_CU(d, cuCtxSynchronize);
  return Status();
}

size_t JitLayer::marked_floats(size_t bucket, int64_t m) const {
  const MmaGemmConfig& c = plan_.buckets[bucket].config;
  if (!c.marks_partials()) return 0;
  const int splits = most_splits(bucket, m);
  if (splits < 2) return 0;
  return size_t(grid_x(c)) * token_tiles(c, m) * (splits - 1) * c.block_n() * c.block_m();
}

size_t JitLayer::workspace_bytes(int64_t m) const {
  const bool expand = plan_.bucket_for(m).expand;
  const size_t expanded = expand ? align256(size_t(problem_.n) * padded_k() * 2) : 0;
  return std::max(expanded, mma_workspace_bytes(m));
}

int JitLayer::registers(size_t bucket) const {
  return bucket < kernels_.size() && kernels_[bucket].compiled
             ? kernels_[bucket].compiled->resources.registers
             : 0;
}

int JitLayer::splits(size_t bucket, int64_t m) const {
  // NOTE: the compiled kernel's registers can hold fewer CTAs per SM than shared memory and
  // threads allow (int3 decode: 4, not 7), and split-K must not spill into a partial wave of
  // what really fits. Before prepare() the estimate is an upper bound (more splits, more
  // workspace), so sizes taken then stay large enough.
  const MmaGemmConfig& c = plan_.buckets[bucket].config;
  const int splits = mma_splits(c, m, problem_.n, problem_.k, problem_.device_info,
                                registers(bucket), programmatic(c));
  return bucket < cluster_slots_.size()
             ? mma_splits_fitting_clusters(c, splits, grid_x(c) * token_tiles(c, m),
                                           cluster_slots_[bucket])
             : splits;
}

int JitLayer::most_splits(size_t bucket, int64_t m) const {
  return std::max(splits(bucket, m), tail_split(bucket, m).splits);
}

int JitLayer::split_cluster(size_t bucket, int64_t m, int splits) const {
  const MmaGemmConfig& c = plan_.buckets[bucket].config;
  const int64_t ctas = grid_x(c) * token_tiles(c, m) * splits;
  return mma_split_cluster(c, splits, mma_waves(c, ctas, problem_.device_info, registers(bucket)));
}

int64_t JitLayer::token_tiles(const MmaGemmConfig& c, int64_t m) const {
  return (m + c.block_m() - 1) / c.block_m();
}

bool JitLayer::programmatic(const MmaGemmConfig& c) const {
  return c.programmatic_launch() && problem_.programmatic_launch &&
         !settings().no_programmatic_launch;
}

size_t JitLayer::mma_workspace_bytes(int64_t m) const {
  const size_t bucket = plan_.mma_bucket_for(m);
  // The tail split's partials too: they go through the workspace when its cluster sum is off.
  const int splits = most_splits(bucket, m);
  // NOTE: room for padded activations is reserved even when K is a multiple of 8: a caller's
  // pointer that is not 16-byte aligned is padded too.
  size_t bytes = align256(size_t(m) * padded_k() * 2);
  // (Marked partials live in the layer's own buffer.)
  const bool marked = plan_.buckets[bucket].config.marks_partials();
  if (splits > 1 && !marked) bytes += align256(size_t(splits) * m * w_->n_tiles * 16 * 4);
  return bytes;
}

MmaTailSplit JitLayer::tail_split(size_t bucket, int64_t m) const {
  const MmaGemmConfig& c = plan_.buckets[bucket].config;
  MmaTailSplit tail =
      mma_tail_split(c, grid_x(c), token_tiles(c, m), splits(bucket, m), c.k_stages(problem_.k),
                     problem_.device_info, registers(bucket));
  if (tail.splits > 1 && bucket < cluster_slots_.size()) {
    tail.splits = mma_splits_fitting_clusters(
        c, tail.splits, (grid_x(c) - tail.main_x) * token_tiles(c, m), cluster_slots_[bucket]);
    if (tail.splits < 2) tail = MmaTailSplit{grid_x(c), 1};
  }
  return tail;
}

int64_t JitLayer::grid_x(const MmaGemmConfig& c) const {
  return (w_->n_tiles + c.tiles_n * c.warps_n - 1) / (c.tiles_n * c.warps_n);
}

bool JitLayer::hands_off(const LinearArgs& args) const {
  // NOTE: cuBLASLt wants 16-byte aligned operands; other pointers take the mma kernel.
  return plan_.bucket_for(args.m).expand && aligned16(args.a) && aligned16(args.c) &&
         aligned16(args.bias) && problem_.k % 8 == 0 && problem_.n % 8 == 0;
}

bool JitLayer::gathers_columns(const LinearArgs& args) const {
  return problem_.k_order != nullptr && !hands_off(args) &&
         plan_.buckets[plan_.mma_bucket_for(args.m)].config.gather_rows > 0;
}

Status JitLayer::run(const LinearArgs& args) const {
  const JitBucket& b = plan_.bucket_for(args.m);
  if (hands_off(args)) {
    if (kernels_.empty() || kernels_[&b - plan_.buckets.data()].function == nullptr)
      return Status(ErrorCode::kInvalidArgument,
                    str("qgemm::Linear::run: m=", args.m,
                        " needs the expansion kernel, which prepare() did not compile; call "
                        "prepare(",
                        args.m, ") first"));
    return run_expanded(args);
  }
  return run_mma(args, plan_.mma_bucket_for(args.m));
}

Status copy_padded_rows(const void* src, void* dst, int64_t rows, int64_t k, CUstream stream) {
  auto driver = cuda_driver();
  if (!driver) return driver.status();
  const int64_t padded = (k + 7) / 8 * 8;
  const size_t row = size_t(k) * 2, pitch = size_t(padded) * 2;
  const CUdeviceptr base = reinterpret_cast<CUdeviceptr>(dst);
  if (padded != k)
    QGEMM_CU(*driver, cuMemsetD2D16Async, base + row, pitch, 0, size_t(padded - k), size_t(rows),
             stream);
  CUDA_MEMCPY2D copy{};
  copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.srcDevice = reinterpret_cast<CUdeviceptr>(src);
  copy.srcPitch = row;
  copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
  copy.dstDevice = base;
  copy.dstPitch = pitch;
  copy.WidthInBytes = row;
  copy.Height = size_t(rows);
  QGEMM_CU(*driver, cuMemcpy2DAsync, &copy, stream);
  return Status();
}

Status JitLayer::run_mma(const LinearArgs& args, size_t bucket) const {
  if (kernels_.empty() || kernels_[bucket].function == nullptr)
    return Status(ErrorCode::kInvalidArgument,
                  str("qgemm::Linear::run: m=", args.m,
                      " needs the kernel of bucket M <= ", plan_.buckets[bucket].max_m,
                      ", which prepare() did not compile; call prepare(", args.m, ") first"));
  const CUstream stream = static_cast<CUstream>(args.stream);
  auto* workspace = static_cast<uint8_t*>(args.workspace);
  const size_t pad_bytes = align256(size_t(args.m) * padded_k() * 2);
  const uint16_t* a = static_cast<const uint16_t*>(args.a);
  int64_t lda = problem_.k;
  if (problem_.k % 8 != 0 || !aligned16(args.a)) {
    QGEMM_RETURN_IF_ERROR(copy_padded_rows(args.a, workspace, args.m, problem_.k,
                                           static_cast<CUstream>(args.stream)));
    a = reinterpret_cast<const uint16_t*>(workspace);
    lda = padded_k();
  }
  const MmaGemmConfig& c = plan_.buckets[bucket].config;
  const int k_stages = c.k_stages(problem_.k);
  const int splits = std::min(this->splits(bucket, args.m), k_stages);

  MmaGemmParams p{};
  point_at_weights(*w_, p);
  p.a = a;
  p.bias = args.bias;
  p.c = args.c;
  p.partials = reinterpret_cast<float*>(workspace + pad_bytes);
  p.counters = reinterpret_cast<i32*>(counters_.ptr());
  if (c.marks_partials()) {
    if (marked_floats(bucket, args.m) * 4 > marked_partials_.bytes())
      return Status(ErrorCode::kInvalidArgument,
                    str("qgemm::Linear::run: m=", args.m, " needs more split-K partials than ",
                        "prepare() set up; call prepare(", args.m, ") first"));
    p.partials = reinterpret_cast<float*>(marked_partials_.ptr());
    p.counters = nullptr;
  }
  p.m = static_cast<i32>(args.m);
  p.n = static_cast<i32>(problem_.n);
  p.k = static_cast<i32>(lda == problem_.k ? problem_.k : padded_k());
  p.lda = static_cast<i32>(lda);
  p.ldc = static_cast<i32>(problem_.n);
  p.n_tiles = w_->n_tiles;
  p.k_units = w_->k_units;
  p.groups = w_->groups;
  p.k_stages = k_stages;
  if (c.gather_rows > 0) {
    if (problem_.k_order == nullptr || args.m > c.gather_rows)
      return Status(ErrorCode::kInternal,
                    str("qgemm::Linear::run: m=", args.m, " on an act-order tile that stages ",
                        c.gather_rows, " rows, or without the layer's column order"));
    p.k_order = problem_.k_order;
  }
  MmaGemmMaps maps;
  QGEMM_RETURN_IF_ERROR(encode_tma_maps(c, p, &maps));
  const unsigned grid_y = static_cast<unsigned>(token_tiles(c, args.m));
  const MmaTailSplit tail = tail_split(bucket, args.m);
  if (tail.splits > 1) {
    // Whole waves first, then the last wave's columns with K split over the idle SMs.
    p.cta_x0 = 0;
    QGEMM_RETURN_IF_ERROR(launch_z_clusters(kernels_[bucket], static_cast<unsigned>(tail.main_x),
                                            grid_y, 1, 1, programmatic(c), stream, p, maps));
    p.cta_x0 = static_cast<i32>(tail.main_x);
    return launch_z_clusters(kernels_[bucket], static_cast<unsigned>(grid_x(c) - tail.main_x),
                             grid_y, static_cast<unsigned>(tail.splits),
                             static_cast<unsigned>(mma_split_cluster(c, tail.splits)),
                             programmatic(c), stream, p, maps);
  }
  return launch_z_clusters(kernels_[bucket], static_cast<unsigned>(grid_x(c)), grid_y,
                           static_cast<unsigned>(splits),
                           static_cast<unsigned>(split_cluster(bucket, args.m, splits)),
                           programmatic(c), stream, p, maps);
}

std::string JitLayer::describe() const {
  std::string s;
  int64_t lo = 1;
  for (const JitBucket& b : plan_.buckets) {
    const std::string range =
        b.max_m == INT64_MAX ? str("M >= ", lo) : str("M ", lo, "..", b.max_m);
    if (b.expand)
      s += str(range, ": expand the packed weight to ", problem_.act.type.name(),
               " (mma_dequant), then cuBLASLt\n  ");
    else {
      const size_t i = &b - plan_.buckets.data();
      // The tail split depends on M; shown at the bucket's largest M, where its grid is widest.
      std::string tail;
      if (b.max_m != INT64_MAX)
        if (const MmaTailSplit t = tail_split(i, b.max_m); t.splits > 1)
          tail = str(", at M=", b.max_m, ": ", t.main_x,
                     " CTA columns, then the rest with K split ", t.splits, " ways");
      const int lo_splits = splits(i, lo);
      s += str(range, ": mma_gemm ", b.config.to_string(), ", split-K at M=", lo, ": ", lo_splits,
               split_cluster(i, lo, lo_splits) > 1 ? " (summed in a cluster)" : "", tail,
               programmatic(b.config) ? ", programmatic launch" : "", "\n  ");
    }
    if (b.max_m == INT64_MAX) break;
    lo = b.max_m + 1;
  }
  s += str("plan from ", plan_.source);
  for (const std::string& note : plan_.notes) s += "\n  note: " + note;
  return s;
}

// NOTE: cuBLASLt plans are cached per (M, bias). prepare() makes the one for max_tokens; run()
// makes others on first use (host memory only, no device allocation, no compilation).
Expected<std::shared_ptr<LtGemm>> JitLayer::gemm_for(int64_t m, bool bias) const {
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
Status JitLayer::run_expanded(const LinearArgs& args) const {
  auto gemm = gemm_for(args.m, args.bias != nullptr);
  if (!gemm) return gemm.status();
  const JitBucket& b = plan_.bucket_for(args.m);
  MmaDequantParams p{};
  point_at_weights(*w_, p);
  p.out = static_cast<u16*>(args.workspace);
  p.ldo = static_cast<i32>(padded_k());
  p.n = static_cast<i32>(problem_.n);
  p.k = static_cast<i32>(problem_.k);
  p.n_tiles = w_->n_tiles;
  p.k_units = w_->k_units;
  p.groups = w_->groups;
  const LaunchShape shape =
      mma_dequant_launch(b.config, w_->n_tiles, w_->k_units, problem_.device_info.multiprocessors);
  const CUstream stream = static_cast<CUstream>(args.stream);
  QGEMM_RETURN_IF_ERROR(launch(kernels_[&b - plan_.buckets.data()], shape.blocks, 1, 1, p, stream));
  return (*gemm)->run(args.a, args.workspace, args.c, args.bias, nullptr, nullptr,
                      cublas_workspace_.get(), cublas_workspace_.bytes(), stream);
}

}  // namespace qgemm
