// A dense layer with 8-bit activations on the dense_act8 kernels (backend "jit").
#include <algorithm>
#include <cstring>
#include <map>

#include "backend/backend.h"
#include "backend/device_buffer.h"
#include "dense_act8/dense_act8_params.cuh"
#include "families/dense_act8.h"
#include "jit/kernel_loader.h"
#include "jit/tma_maps.h"
#include "quant/gpu_act_quantizer.h"
#include "util/error.h"
#include "util/memory.h"
#include "util/settings.h"

namespace qgemm {
namespace {

class Act8Layer final : public PreparedLayer {
 public:
  explicit Act8Layer(LayerProblem problem) : problem_(std::move(problem)) {}

  // Weight codes in rows padded to 16 bytes (TMA's pitch), and the fp32 scales as they are.
  Status upload(const QuantizedWeight& w) {
    ldw_ = align16(w.k);
    std::vector<uint8_t> rows(static_cast<size_t>(w.n * ldw_), 0);
    for (int64_t r = 0; r < w.n; ++r)
      std::memcpy(&rows[r * ldw_], &w.codes[r * w.row_bytes()], w.row_bytes());
    auto codes = DeviceBuffer::upload(rows.data(), rows.size());
    auto scales = DeviceBuffer::upload(w.scales.data(), w.scales.size() * 4);
    if (!codes) return codes.status();
    if (!scales) return scales.status();
    codes_ = std::move(*codes);
    scales_ = std::move(*scales);
    // Boxes of the whole 128-row tile, and of the half each CTA of a pair copies.
    QGEMM_RETURN_IF_ERROR(
        encode_tma_bytes_sw128(codes_.get(), problem_.k, problem_.n, ldw_, 128, 128, &w_maps_[0]));
    return encode_tma_bytes_sw128(codes_.get(), problem_.k, problem_.n, ldw_, 128, 64, &w_maps_[1]);
  }

  Status prepare(int64_t max_tokens) override {
    const std::string arch = problem_.device_info.arch();
    for (const DenseAct8Config& c : DenseAct8Config::all_for_layer(
             problem_.weight, problem_.act, problem_.out, arch, max_tokens, problem_.n, problem_.k,
             problem_.device_info.multiprocessors)) {
      if (kernels_.count(key(c))) continue;
      auto k = get_kernel(c.spec());
      if (!k) return k.status();
      kernels_[key(c)] = *k;
    }
    if (!quantizer_) {
      auto q = GpuActQuantizer::create(problem_.act, problem_.input, arch);
      if (!q) return q.status();
      quantizer_ = std::make_unique<GpuActQuantizer>(std::move(*q));
    }
    // Split-K arrival counters: one per CTA tile of the largest split launch.
    const int64_t tiles = (problem_.n + 127) / 128 * ((max_tokens + 7) / 8);
    if (counters_.bytes() < static_cast<size_t>(tiles * 4)) {
      auto counters = DeviceBuffer::allocate(tiles * 4);
      if (!counters) return counters.status();
      counters_ = std::move(*counters);
      auto driver = cuda_driver();
      if (!driver) return driver.status();
      QGEMM_CU(*driver, cuMemsetD8, counters_.ptr(), 0, counters_.bytes());
    }
    return Status();
  }

  // The activations the layer quantizes (or re-pitches) itself, then split-K partials.
  size_t workspace_bytes(int64_t m) const override {
    const DenseAct8Config c = config(m);
    const int s = splits(c, m);
    // Split partials: a slab of 128 rows x block_n tokens per split and CTA tile.
    const int64_t tiles = (problem_.n + 127) / 128 * ((m + c.block_n - 1) / c.block_n);
    return align256(act_workspace_bytes(problem_.act, m, problem_.k)) +
           (s > 1 ? static_cast<size_t>(s * tiles * 128 * c.block_n) * 4 : 0);
  }

  Status run(const LinearArgs& args) const override {
    const CUstream stream = static_cast<CUstream>(args.stream);
    const int64_t m = args.m, k = problem_.k;
    auto* ws = static_cast<uint8_t*>(args.workspace);
    DeviceActs acts = DeviceActs::of(args, k);
    if (args.a_scales.data == nullptr) {
      void* scratch = nullptr;
      acts = carve_act_workspace(ws, problem_.act, m, k, &scratch);
      QGEMM_RETURN_IF_ERROR(quantizer_->quantize(args.a, k, m, k, acts, scratch, stream));
    } else {
      if (k % 16 != 0 || reinterpret_cast<uintptr_t>(args.a) % 16 != 0) {
        // TMA reads rows 16-byte aligned: copy the codes to rows of align16(k).
        void* scratch = nullptr;
        DeviceActs padded = carve_act_workspace(ws, problem_.act, m, k, &scratch);
        auto driver = cuda_driver();
        if (!driver) return driver.status();
        CUDA_MEMCPY2D copy{};
        copy.srcMemoryType = CU_MEMORYTYPE_DEVICE;
        copy.srcDevice = reinterpret_cast<CUdeviceptr>(args.a);
        copy.srcPitch = static_cast<size_t>(k);
        copy.dstMemoryType = CU_MEMORYTYPE_DEVICE;
        copy.dstDevice = reinterpret_cast<CUdeviceptr>(padded.q);
        copy.dstPitch = static_cast<size_t>(padded.ldq);
        copy.WidthInBytes = static_cast<size_t>(k);
        copy.Height = static_cast<size_t>(m);
        QGEMM_CU(*driver, cuMemcpy2DAsync, &copy, stream);
        acts.q = padded.q;
        acts.ldq = padded.ldq;
      }
    }
    const DenseAct8Config c = config(m);
    auto kernel = kernels_.find(key(c));
    if (kernel == kernels_.end())
      return invalid_argument(
          str("qgemm::Linear::run: m=", m, " has no kernel; call prepare(", m, ") first"));
    const int s = splits(c, m);
    DenseAct8Params p{};
    p.w_scale = static_cast<const float*>(scales_.get());
    p.a_scale = acts.scales;
    p.bias = args.bias;
    p.c = args.c;
    p.partials = reinterpret_cast<float*>(ws + align256(act_workspace_bytes(problem_.act, m, k)));
    p.counters = static_cast<i32*>(counters_.get());
    p.m = static_cast<i32>(m);
    p.n = static_cast<i32>(problem_.n);
    p.k = static_cast<i32>(k);
    p.ldc = static_cast<i32>(problem_.n);
    p.k_stages = static_cast<i32>((k + 127) / 128);
    p.w_scale_cols = static_cast<i32>((k + 127) / 128);
    p.a_scale_cols = static_cast<i32>(std::max<int64_t>(problem_.act.scale_cols(k), 1));
    DenseAct8Maps maps;
    maps.w = w_maps_[c.cluster_y > 1 ? 1 : 0];
    QGEMM_RETURN_IF_ERROR(encode_tma_bytes_sw128(acts.q, k, m, acts.ldq, 128, c.block_n, &maps.a));
    const bool programmatic = problem_.programmatic_launch && !settings().no_programmatic_launch;
    // A cluster pair's second CTA past the last token tile still copies its weight half.
    const int64_t token_tiles = (m + c.block_n - 1) / c.block_n;
    const int64_t grid_y = (token_tiles + c.cluster_y - 1) / c.cluster_y * c.cluster_y;
    return launch_clusters(kernel->second, static_cast<unsigned>((problem_.n + 127) / 128),
                           static_cast<unsigned>(grid_y), static_cast<unsigned>(s),
                           static_cast<unsigned>(c.cluster_y), 1, programmatic, stream, p, maps);
  }

  std::string describe() const override {
    std::string s;
    int64_t from = 1;
    for (int bn : {8, 16, 32, 64, 128}) {
      const DenseAct8Config c = config(bn);
      s += str(bn == 8 ? "" : "\n  ", "M ", from, "-", bn, ": dense_act8 ", c.to_string());
      from = bn + 1;
    }
    s += str("\n  M 129+: dense_act8 ", config(129).to_string(),
             " (cy2 where unsplit: two token tiles share the weight tile); larger M: tiles of",
             " 128, 160 or 192 tokens, whichever the cost model estimates fastest");
    return s + str("\n  16-bit input: quantized to ", problem_.act.to_string(),
                   " on the GPU first (kernels/act_quant)");
  }

 private:
  DenseAct8Config config(int64_t m) const {
    return DenseAct8Config::for_layer(problem_.weight, problem_.act, problem_.out,
                                      problem_.device_info.arch(), m, problem_.n, problem_.k,
                                      problem_.device_info.multiprocessors);
  }
  static int key(const DenseAct8Config& c) { return c.cluster_y * 1000 + c.block_n; }
  int splits(const DenseAct8Config& c, int64_t m) const {
    return dense_act8_splits(problem_.n, m, problem_.k, c.block_n,
                             problem_.device_info.multiprocessors);
  }

  LayerProblem problem_;
  int64_t ldw_ = 0;
  DeviceBuffer codes_, scales_, counters_;
  TmaMap w_maps_[2] = {};                ///< boxes of 128 weight rows, and of 64
  std::map<int, LoadedKernel> kernels_;  ///< by key(): cluster and tokens per CTA
  std::unique_ptr<GpuActQuantizer> quantizer_;
};

}  // namespace

Expected<std::unique_ptr<PreparedLayer>> build_dense_act8_layer(const QuantizedWeight& w,
                                                                const LayerProblem& p) {
  QGEMM_RETURN_IF_ERROR(use_device(p.device));
  auto layer = std::make_unique<Act8Layer>(p);
  QGEMM_RETURN_IF_ERROR(layer->upload(w));
  return std::unique_ptr<PreparedLayer>(std::move(layer));
}

}  // namespace qgemm
