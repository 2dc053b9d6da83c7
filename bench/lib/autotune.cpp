#include "bench/lib/autotune.h"
#include "families/dense_expand.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "api/host_run.h"
#include "backend/cublaslt_library.h"
#include "backend/device_buffer.h"
#include "backend/jit_layer.h"
#include "bench/lib/gpu_timer.h"
#include "bench/lib/sampling.h"
#include "bench/lib/stats.h"
#include "jit/kernel_cache.h"
#include "qgemm/reference.h"
#include "util/progress.h"
#include "util/error.h"
#include "util/random.h"

namespace qgemm::bench {
namespace {

constexpr int kMaxCopies = 32;

// The name of the hand-off candidate in reports and tables.
constexpr const char* kExpandName = "expand+cublaslt";

// One candidate's layers: the same plan over every weight copy.
struct CandidateLayers {
  std::vector<std::unique_ptr<JitLayer>> copies;
  std::string error;
};

}  // namespace

std::vector<MmaTile> default_tune_tiles(const DeviceInfo& device) {
  // warps_n, warps_m, tiles_n, frags_m, stages, stage_k, split-K targets (CTAs per SM), wgmma,
  // warp-specialized.
  struct Shape {
    MmaTile tile;
    std::vector<int> waves;
  };
  // NOTE: tiles that lost at every M by more than 20% in a sweep of every candidate are gone
  // (w4x2 t1 f8, the split targets that never won). The 4-stage decode tile fits four CTAs per
  // SM (docs/design.md, "loader").
  const Shape mma_sync[] = {
      {{4, 1, 1, 1, 6, 256, 0}, {2, 4}}, {{4, 1, 1, 1, 4, 256, 0}, {4}},
      {{4, 1, 1, 2, 6, 256, 0}, {2}},
      {{4, 1, 1, 4, 6, 128, 0}, {4}},    {{4, 1, 1, 8, 4, 128, 0}, {1}},
      {{8, 1, 1, 8, 4, 128, 0}, {1}},    {{4, 2, 1, 4, 4, 128, 0}, {1, 2}},
      {{4, 2, 2, 4, 4, 128, 0}, {1}},
  };
  const Shape wgmma[] = {
      {{4, 1, 1, 1, 6, 256, 0, true}, {2}},  {{4, 1, 1, 2, 6, 128, 0, true}, {2, 4}},
      {{4, 1, 1, 4, 6, 128, 0, true}, {2}},  {{4, 2, 1, 4, 4, 128, 0, true}, {1}},
      {{4, 1, 1, 8, 4, 128, 0, true}, {1}},  {{4, 2, 1, 8, 4, 128, 0, true}, {1}},
      {{4, 1, 1, 16, 4, 128, 0, true}, {1}},
      // Warp-specialized: two warpgroups of 64 rows share 64 or 128 tokens, a third copies.
      {{8, 1, 1, 8, 6, 128, 0, true, true}, {1}}, {{8, 1, 1, 16, 5, 128, 0, true, true}, {1}},
  };
  std::vector<MmaTile> tiles;
  auto add = [&](const Shape& s) {
    for (int w : s.waves) {
      MmaTile t = s.tile;
      t.waves = w;
      tiles.push_back(t);
    }
  };
  for (const Shape& s : mma_sync) add(s);
  if (device.arch() == "sm_90a")
    for (const Shape& s : wgmma) add(s);
  return tiles;
}

Expected<std::vector<MmaTile>> tune_candidate_tiles(const TuneOptions& o,
                                                    const DeviceInfo& device) {
  if (!o.tiles.empty()) return o.tiles;
  std::vector<MmaTile> tiles = default_tune_tiles(device);
  // NOTE: the heuristic plan's kernels (long decode stages, the ws stage shapes the planner
  // derives per format) are not all among the defaults; without them a table could pick a
  // slower kernel than the layer runs with no table.
  auto plan = plan_mma_gemm(o.n, o.k, o.weight, o.act.type, o.out, device);
  if (!plan) return plan.status();
  for (const MmaPlanEntry& e : *plan) {
    const MmaTile t = mma_tile_of(e.config);
    if (std::find(tiles.begin(), tiles.end(), t) == tiles.end()) tiles.push_back(t);
  }
  return tiles;
}

Expected<TuneResult> autotune(const TuneOptions& o) {
  const auto t_start = std::chrono::steady_clock::now();
  TuneResult r;
  r.ms = o.m;
  std::sort(r.ms.begin(), r.ms.end());
  r.ms.erase(std::unique(r.ms.begin(), r.ms.end()), r.ms.end());
  if (r.ms.empty() || r.ms.front() < 1)
    return invalid_argument("qgemm tune: --m takes positive token counts, e.g. 1,16,256");
  if (o.act.is_quantized() || !(o.act.type == DType::fp16() || o.act.type == DType::bf16()))
    return invalid_argument(str("qgemm tune: activations ", o.act.to_string(),
                                ": the jit kernels take fp16 or bf16 activations"));
  if (!(o.out == DType::fp16() || o.out == DType::bf16() || o.out == DType::fp32()))
    return invalid_argument(str("qgemm tune: output type ", o.out.name(),
                                " is not supported; accepted: bf16, fp16, fp32"));
  QGEMM_RETURN_IF_ERROR(o.weight.check_shape(o.n, o.k));
  if (o.max_kernels < 1) return invalid_argument("qgemm tune: max_kernels must be at least 1");
  const auto devices = list_devices();
  if (devices.empty())
    return Status(ErrorCode::kNotFound, str("no GPU to tune on: ", no_gpu_reason()));
  QGEMM_RETURN_IF_ERROR(use_device(0));
  r.device = devices[0];
  const int64_t max_m = r.ms.back();
  const bool cublas = cublaslt_library().ok();

  // Operands: one random weight, activations per M, sampled reference rows per M.
  const auto w_values = random_normal(o.n * o.k, o.seed, 0.05f);
  auto w = quantize_weights(HostValues::of(w_values), 1, o.n, o.k, o.weight);
  if (!w) return w.status();
  LayerProblem problem;
  problem.n = o.n;
  problem.k = o.k;
  problem.weight = o.weight;
  problem.act = o.act;
  problem.out = o.out;
  problem.device_info = r.device;
  // Candidates are timed with plain launches, like the bench's "jit" rows: what a layer gets
  // when the kernel before it does not let it start early.
  problem.programmatic_launch = false;
  r.copies = weight_copies(double(w->storage_bytes()), o.rotate_bytes, kMaxCopies);
  std::vector<std::shared_ptr<const JitWeights>> weights;
  for (int i = 0; i < r.copies; ++i) {
    auto up = JitWeights::upload(*w, o.act.type);
    if (!up) return up.status();
    weights.push_back(std::move(*up));
  }

  // Candidates: every tile as a one-bucket plan, then the hand-off.
  const auto tiles = tune_candidate_tiles(o, r.device);
  if (!tiles) return tiles.status();
  std::vector<std::vector<TunedBucket>> plans;
  for (const MmaTile& t : *tiles) {
    auto c = mma_config_for(t, o.weight, o.act.type, o.out, r.device);
    if (!c) {
      r.errors.push_back(str(t.to_string(), ": ", c.status().message()));
      continue;
    }
    TimedCandidate cand;
    cand.name = str("mma_gemm ", t.to_string());
    cand.kernel = c->spec().source;
    cand.bucket.tile = t;
    r.candidates.push_back(cand);
    plans.push_back({cand.bucket});
  }
  if (r.candidates.empty()) return unsupported("qgemm tune: no mma tile fits this layer");
  if (cublas && cublaslt_has_gemm(o.act.type, o.out)) {
    TimedCandidate cand;
    cand.name = kExpandName;
    cand.kernel = kExpandName;
    cand.bucket.expand = true;
    r.candidates.push_back(cand);
    TunedBucket first = r.candidates.front().bucket;
    first.max_m = 0;  // never used: every M takes the hand-off
    plans.push_back({first, cand.bucket});
  }

  // Compile everything first, in parallel (progress bar), then build the layers.
  std::vector<JitKernelPlan> jit_plans;
  std::vector<KernelSpec> specs;
  for (const auto& buckets : plans) {
    auto p = plan_from_buckets(buckets, o.weight, o.act.type, o.out, r.device, cublas);
    if (!p) return p.status();
    const auto s = p->kernels(max_m);
    specs.insert(specs.end(), s.begin(), s.end());
    jit_plans.push_back(std::move(*p));
  }
  auto heuristic =
      plan_jit_kernels(o.n, o.k, o.weight, o.act.type, o.out, r.device, cublas, kNoTuningTable);
  if (!heuristic) return heuristic.status();
  const auto hs = heuristic->kernels(max_m);
  specs.insert(specs.end(), hs.begin(), hs.end());
  KernelCache::instance().get_all(specs);
  jit_plans.push_back(*heuristic);

  std::vector<CandidateLayers> layers(jit_plans.size());
  size_t workspace = 0;
  for (size_t ci = 0; ci < jit_plans.size(); ++ci) {
    for (int i = 0; i < r.copies; ++i) {
      auto l = std::make_unique<JitLayer>(problem, weights[i], jit_plans[ci]);
      Status s = l->prepare(max_m);
      if (!s.ok()) {
        layers[ci].error = s.message();
        break;
      }
      for (int64_t m : r.ms) workspace = std::max(workspace, l->workspace_bytes(m));
      layers[ci].copies.push_back(std::move(l));
    }
  }

  const CudaDriver* d = *cuda_driver();
  const size_t out_bytes = size_t(max_m) * o.n * ((o.out.bits + 7) / 8);
  auto a_buf = DeviceBuffer::allocate(size_t(max_m) * o.k * 2);
  auto c_buf = DeviceBuffer::allocate(out_bytes);
  auto ws_buf = DeviceBuffer::allocate(std::max<size_t>(workspace, 256));
  for (auto* b : {&a_buf, &c_buf, &ws_buf})
    if (!*b) return b->status();

  for (auto& c : r.candidates) c.us.assign(r.ms.size(), NAN);
  r.heuristic_us.assign(r.ms.size(), NAN);
  Progress progress("tune", r.ms.size() * jit_plans.size(), o.progress);
  for (size_t mi = 0; mi < r.ms.size(); ++mi) {
    const int64_t m = r.ms[mi];
    const auto a_values = random_normal(m * o.k, o.seed + 7 + m, 1.0f);
    auto a = quantize_activations(HostValues::of(a_values), m, o.k, o.act);
    if (!a) return a.status();
    QGEMM_CU(d, cuMemcpyHtoD, a_buf->ptr(), a->data.data(), a->data.size());
    const std::vector<int64_t> rows = sample_rows(m, o.seed + m);
    auto ref = reference_gemm(*a, *w, {}, rows);
    if (!ref) return ref.status();
    auto args_for = [&](CUstream stream) {
      return device_linear_args(m, *a_buf, *c_buf, *ws_buf, stream);
    };
    // Identical launches (same kernel and grid at this M) are timed once.
    std::map<std::string, double> timed;
    progress.set_detail(str("M=", m));
    for (size_t ci = 0; ci < jit_plans.size(); ++ci, progress.advance()) {
      const bool is_heuristic = ci == r.candidates.size();
      CandidateLayers& set = layers[ci];
      if (!set.error.empty()) continue;
      if (!is_heuristic && r.candidates[ci].bucket.expand && mi == 0) continue;
      const JitBucket& bucket = jit_plans[ci].bucket_for(m);
      const std::string launch = bucket.expand
                                     ? std::string(kExpandName)
                                     : str(bucket.config.spec().source, " splits ",
                                           mma_splits(bucket.config, m, o.n, o.k, r.device));
      double us = NAN;
      if (auto it = timed.find(launch); it != timed.end()) {
        us = it->second;
      } else {
        // Poisoned output, one run, checked against the reference before it is timed.
        QGEMM_CU(d, cuMemsetD8, c_buf->ptr(), 0xff, out_bytes);
        Status s = set.copies[0]->run(args_for(nullptr));
        if (s.ok()) s = cuda_status(d->cuCtxSynchronize(), "cuCtxSynchronize");
        if (!s.ok()) return s;  // a failed launch leaves the context unusable
        std::vector<uint8_t> bytes(out_bytes);
        QGEMM_RETURN_IF_ERROR(c_buf->download(bytes.data(), bytes.size()));
        const auto values = decode_output(o.out, bytes);
        const Comparison cmp = compare(*ref, pick_rows(values, rows, o.n));
        if (cmp.nan_count > 0 || !(cmp.rel_frobenius <= tolerance_for(o.out, o.act.type))) {
          r.errors.push_back(str(is_heuristic ? "heuristic plan" : r.candidates[ci].name,
                                 " at M=", m, ": wrong result (rel. error ", cmp.rel_frobenius,
                                 ", ", cmp.nan_count, " NaN)"));
          continue;
        }
        auto times = time_graph_replays(
            [&](int i, CUstream stream) { return set.copies[i]->run(args_for(stream)); }, r.copies,
            o.warmup, o.repetitions);
        if (!times) return times.status();
        us = summarize(*times).median_us;
        timed[launch] = us;
      }
      if (is_heuristic) {
        r.heuristic_us[mi] = us;
      } else {
        r.candidates[ci].us[mi] = us;
      }
    }
  }
  progress.finish();

  auto sel = select_kernels(r.candidates, r.ms.size(), o.max_kernels, o.tolerance);
  if (!sel) return sel.status();
  r.selection = *sel;
  r.layer.n = o.n;
  r.layer.k = o.k;
  r.layer.weight = o.weight.to_string();
  r.layer.act = o.act.type.name();
  r.layer.out = o.out.name();
  r.layer.buckets = buckets_for(r.ms, r.candidates, r.selection);
  for (size_t mi = 0; mi < r.ms.size(); ++mi) {
    size_t best = 0;
    for (size_t ci = 0; ci < r.candidates.size(); ++ci)
      if (std::isfinite(r.candidates[ci].us[mi]) &&
          !(r.candidates[best].us[mi] <= r.candidates[ci].us[mi]))
        best = ci;
    const TimedCandidate& chosen = r.candidates[r.selection.choice[mi]];
    r.layer.measured.push_back(
        {r.ms[mi], r.candidates[best].name, chosen.name, r.candidates[best].us[mi], chosen.us[mi]});
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  return r;
}

}  // namespace qgemm::bench
