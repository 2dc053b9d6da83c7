// Plans from tuning tables, the autotuner end to end, and activation padding (odd K, unaligned
// pointers, under graph capture) through the public Linear object.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <functional>
#include <filesystem>

#include "backend/device_buffer.h"
#include "bench/lib/autotune.h"
#include "gpu_test_util.h"
#include "plan/jit_kernel_plan.h"
#include "plan/tuning_table.h"
#include "util/error.h"
#include "util/random.h"

namespace qgemm {
namespace {

namespace fs = std::filesystem;

struct LayerCase {
  const char* weight;
  const char* act;
  DType out;
  int64_t n, k;
};

// Options for `lc` on the jit backend with the heuristic plan (no tuning table).
LinearOptions jit_options(const LayerCase& lc, bool programmatic) {
  LinearOptions o;
  o.tuning_table = kNoTuningTable;
  o.programmatic_launch = programmatic;
  o.act = *ActFormat::parse(lc.act);
  o.out = lc.out;
  o.backend = BackendKind::kJit;
  return o;
}

// The arguments of one call of m tokens (a and c device pointers, the workspace buffer).
LinearArgs call_args(int64_t m, const void* a, void* c, const DeviceBuffer& workspace,
                     CUstream stream) {
  LinearArgs args;
  args.m = m;
  args.a = a;
  args.c = c;
  args.workspace = workspace.get();
  args.workspace_bytes = workspace.bytes();
  args.stream = stream;
  return args;
}

// Captures one run() of `layer` on `stream` into a graph and instantiates it into `*exec` (the
// caller destroys it with cuGraphExecDestroy).
void capture_run(const Linear& layer, const LinearArgs& args, CUstream stream, CUgraphExec* exec) {
  const CudaDriver* d = *cuda_driver();
  CUgraph g;
  ASSERT_EQ(d->cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  Status captured = layer.run(args);
  ASSERT_EQ(d->cuStreamEndCapture(stream, &g), CUDA_SUCCESS);
  ASSERT_TRUE(captured.ok()) << captured.to_string();
  const CUresult instantiated = d->cuGraphInstantiateWithFlags(exec, g, 0);
  d->cuGraphDestroy(g);
  ASSERT_EQ(instantiated, CUDA_SUCCESS);
}

// Downloads the m x N output in `c` and checks sampled rows against the reference of `a` and
// `w`: within the output's tolerance, no NaN anywhere (every element written over the poison).
void expect_output_matches(const LayerCase& lc, DType act, const QuantizedActivations& a,
                           const QuantizedWeight& w, const DeviceBuffer& c, int64_t m,
                           uint64_t seed) {
  std::vector<uint8_t> bytes(size_t(m) * lc.n * 2);
  ASSERT_TRUE(c.download(bytes.data(), bytes.size()).ok());
  const auto got = decode_output(lc.out, bytes);
  const auto rows = testing::check_rows(m, 64, seed);
  auto ref = reference_gemm(a, w, {}, rows);
  ASSERT_TRUE(ref.ok());
  std::vector<double> picked;
  for (int64_t r : rows)
    picked.insert(picked.end(), got.begin() + r * lc.n, got.begin() + (r + 1) * lc.n);
  const Comparison cmp = compare(*ref, picked);
  EXPECT_EQ(cmp.nan_count, 0);
  EXPECT_LE(cmp.rel_frobenius, tolerance_for(lc.out, act));
  EXPECT_EQ(std::count_if(got.begin(), got.end(), [](double v) { return std::isnan(v); }), 0);
}

// Runs `m` tokens through a Linear built with `options` on fresh data, with the activations
// `offset` bytes past an aligned address, optionally inside a captured CUDA graph, and returns
// the comparison with the reference (all checked rows) and the poison left.
void run_layer(const LayerCase& lc, LinearOptions options, int64_t m, size_t offset, bool graph,
               uint64_t seed) {
  SCOPED_TRACE(str(lc.weight, " ", lc.act, "->", lc.out.name(), " N=", lc.n, " K=", lc.k, " M=", m,
                   " offset ", offset, graph ? " graph" : ""));
  const auto wv = random_normal(lc.n * lc.k, seed, 0.05f);
  auto w = quantize_weights(HostValues::of(wv), 1, lc.n, lc.k, *WeightFormat::parse(lc.weight));
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  options.act = *ActFormat::parse(lc.act);
  options.out = lc.out;
  options.backend = BackendKind::kJit;
  const auto av = random_normal(m * lc.k, seed + 1, 1.0f);
  auto a = quantize_activations(HostValues::of(av), m, lc.k, options.act);
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(use_device(0).ok());
  auto layer = Linear::create(*w, options);
  ASSERT_TRUE(layer.ok()) << layer.status().to_string();
  ASSERT_TRUE(layer->prepare(m).ok());

  const CudaDriver* d = *cuda_driver();
  const size_t out_bytes = size_t(m) * lc.n * 2;
  auto d_a = DeviceBuffer::allocate(a->data.size() + offset);
  auto d_c = DeviceBuffer::allocate(out_bytes);
  auto d_w = DeviceBuffer::allocate(std::max<size_t>(layer->workspace_bytes(m), 1));
  ASSERT_TRUE(d_a.ok() && d_c.ok() && d_w.ok());
  ASSERT_EQ(d->cuMemcpyHtoD(d_a->ptr() + offset, a->data.data(), a->data.size()), CUDA_SUCCESS);
  ASSERT_EQ(d->cuMemsetD8(d_c->ptr(), 0xff, out_bytes), CUDA_SUCCESS);
  // The workspace holds garbage (NaN bits), as a caller's scratch would.
  ASSERT_EQ(d->cuMemsetD8(d_w->ptr(), 0xff, d_w->bytes()), CUDA_SUCCESS);
  // The copy and fills go on the legacy stream, which a non-blocking stream does not wait for.
  ASSERT_EQ(d->cuCtxSynchronize(), CUDA_SUCCESS);
  CUstream stream;
  ASSERT_EQ(d->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  const LinearArgs args =
      call_args(m, reinterpret_cast<const void*>(d_a->ptr() + offset), d_c->get(), *d_w, stream);
  if (graph) {
    CUgraphExec exec;
    ASSERT_NO_FATAL_FAILURE(capture_run(*layer, args, stream, &exec));
    ASSERT_EQ(d->cuGraphLaunch(exec, stream), CUDA_SUCCESS);
    ASSERT_EQ(d->cuStreamSynchronize(stream), CUDA_SUCCESS);
    d->cuGraphExecDestroy(exec);
  } else {
    Status s = layer->run(args);
    ASSERT_TRUE(s.ok()) << s.to_string();
    ASSERT_EQ(d->cuStreamSynchronize(stream), CUDA_SUCCESS);
  }
  d->cuStreamDestroy(stream);
  expect_output_matches(lc, options.act.type, *a, *w, *d_c, m, seed + 3);
}

// A scratch directory for tables.
struct TempDir {
  fs::path path = fs::temp_directory_path() /
                  str("qgemm-tuned-plan-", getpid(), "-",
                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
  TempDir() { fs::create_directories(path); }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

TEST(TunedPlanGpu, EveryBucketOfATableMatchesTheReference) {
  QGEMM_REQUIRE_GPU();
  const DeviceInfo device = list_devices()[0];
  const LayerCase cases[] = {
      {"int4/g128/bf16", "bf16", DType::bf16(), 1000, 1536},
      {"uint4/g128/fp16/zp", "fp16", DType::fp16(), 1000, 1536},
      {"nvfp4", "bf16", DType::bf16(), 1000, 1536},
  };
  for (const LayerCase& lc : cases) {
    TempDir dir;
    TuningTable t;
    t.device = device.name;
    TunedLayer l;
    l.n = lc.n;
    l.k = lc.k;
    l.weight = WeightFormat::parse(lc.weight)->to_string();
    l.act = lc.act;
    l.out = lc.out.name();
    // Tiles the heuristics never use, so the table is visibly what runs; two with fixed split
    // counts (5 splits over 6 stages of 256 K: splits of one and two stages).
    l.buckets = {{2, false, *MmaTile::parse("w4x1 t1 f2 s6 k256 waves4 splits5")},
                 {40, false, *MmaTile::parse("w4x2 t1 f4 s4 k128 waves1")},
                 {300, false, *MmaTile::parse("w8x1 t1 f8 s4 k128 waves2 splits3")},
                 {INT64_MAX, true, {}}};
    t.put(l);
    const std::string path = (dir.path / "t.json").string();
    ASSERT_TRUE(write_tuning_table(t, path).ok());
    auto plan = plan_jit_kernels(lc.n, lc.k, *WeightFormat::parse(lc.weight),
                                 ActFormat::parse(lc.act)->type, lc.out, device, true, path);
    ASSERT_TRUE(plan.ok());
    EXPECT_EQ(plan->source, "tuning table " + path);
    LinearOptions o;
    o.tuning_table = path;
    uint64_t seed = 40;
    for (int64_t m : {1, 2, 3, 40, 41, 300, 301, 1000}) run_layer(lc, o, m, 0, false, seed++);
  }
}

TEST(TunedPlanGpu, OddKAndUnalignedActivationsArePaddedEvenUnderGraphCapture) {
  QGEMM_REQUIRE_GPU();
  LinearOptions o;
  o.tuning_table = kNoTuningTable;
  const LayerCase odd_k{"int8/channel/bf16", "bf16", DType::bf16(), 520, 1001};
  const LayerCase aligned_k{"int4/g128/bf16", "bf16", DType::bf16(), 1000, 1536};
  uint64_t seed = 70;
  for (bool graph : {false, true}) {
    for (int64_t m : {1, 33, 700}) {
      run_layer(odd_k, o, m, 0, graph, seed++);
      run_layer(aligned_k, o, m, 2, graph, seed++);  // 2-byte offset: not 16-byte aligned
      run_layer(odd_k, o, m, 6, graph, seed++);
    }
  }
}

// On Hopper the 8-token decode tile's two K splits are summed in a thread-block cluster
// (mma_split_cluster): odd N, several codes, plain and programmatic launches, under graph
// capture too.
TEST(TunedPlanGpu, DecodeTileSplitInTwoSumsInAClusterAndMatchesTheReference) {
  QGEMM_REQUIRE_GPU();
  if (list_devices()[0].arch() != "sm_90a")
    GTEST_SKIP() << "decode splits go to clusters on sm_90a only; this GPU is "
                 << list_devices()[0].arch();
  const LayerCase cases[] = {
      {"int4/g128/bf16", "bf16", DType::bf16(), 1000, 2048},
      {"uint4/g128/fp16/zp", "fp16", DType::fp16(), 7000, 4096},
      {"int3/g64/bf16", "bf16", DType::bf16(), 5000, 2048},
  };
  uint64_t seed = 90;
  for (const LayerCase& lc : cases) {
    // The plain plan splits these in two at M <= 8.
    LinearOptions o = jit_options(lc, false);
    auto w = quantize_weights(HostValues::of(random_normal(lc.n * lc.k, 1, 0.05f)), 1, lc.n, lc.k,
                              *WeightFormat::parse(lc.weight));
    ASSERT_TRUE(w.ok());
    auto layer = Linear::create(*w, o);
    ASSERT_TRUE(layer.ok()) << layer.status().to_string();
    ASSERT_TRUE(layer->prepare(8).ok());
    EXPECT_NE(layer->explain().find("split-K at M=1: 2 (summed in a cluster)"), std::string::npos)
        << layer->explain();
    for (bool programmatic : {false, true}) {
      o.programmatic_launch = programmatic;
      for (int64_t m : {1, 3, 8}) run_layer(lc, o, m, 0, m == 3, seed++);
    }
  }
}

// The 16-token tile's K splits sum through marked partials that the layer owns: every launch
// must leave them marked again. One layer runs token counts of 9..32 (other split counts, other
// partial layouts) one after another, then a captured graph replayed with new activations each
// time; every output is checked. A partial left unmarked would feed the next launch stale sums.
TEST(TunedPlanGpu, SixteenTokenSplitsLeaveTheirMarkedPartialsReadyForTheNextLaunch) {
  QGEMM_REQUIRE_GPU();
  const LayerCase cases[] = {
      {"int4/g128/bf16", "bf16", DType::bf16(), 1000, 4096},     // 4 splits at M = 24
      {"uint4/g128/fp16/zp", "fp16", DType::fp16(), 2047, 2048},  // odd N
      {"int2/g64/bf16", "bf16", DType::fp16(), 8000, 8192},      // two 512-K stages
  };
  const CudaDriver* d = *cuda_driver();
  uint64_t seed = 500;
  for (const LayerCase& lc : cases) {
    SCOPED_TRACE(str(lc.weight, " N=", lc.n, " K=", lc.k));
    const LinearOptions o = jit_options(lc, false);
    auto w = quantize_weights(HostValues::of(random_normal(lc.n * lc.k, seed++, 0.05f)), 1, lc.n,
                              lc.k, *WeightFormat::parse(lc.weight));
    ASSERT_TRUE(w.ok());
    auto layer = Linear::create(*w, o);
    ASSERT_TRUE(layer.ok()) << layer.status().to_string();
    constexpr int64_t kMaxM = 32;
    ASSERT_TRUE(layer->prepare(kMaxM).ok());
    EXPECT_NE(layer->explain().find("split-K at M=9: "), std::string::npos) << layer->explain();
    auto d_a = DeviceBuffer::allocate(size_t(kMaxM) * lc.k * 2);
    auto d_c = DeviceBuffer::allocate(size_t(kMaxM) * lc.n * 2);
    auto d_w = DeviceBuffer::allocate(std::max<size_t>(layer->workspace_bytes(kMaxM), 1));
    ASSERT_TRUE(d_a.ok() && d_c.ok() && d_w.ok());
    ASSERT_EQ(d->cuMemsetD8(d_w->ptr(), 0xff, d_w->bytes()), CUDA_SUCCESS);
    CUstream stream;
    ASSERT_EQ(d->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    const auto args_for = [&](int64_t m) {
      return call_args(m, d_a->get(), d_c->get(), *d_w, stream);
    };
    // Fresh activations in, poison out; after `launch`, the output against the reference.
    const auto check = [&](int64_t m, const std::function<void()>& launch) {
      SCOPED_TRACE(str("M=", m));
      auto a = quantize_activations(HostValues::of(random_normal(m * lc.k, seed++, 1.0f)), m,
                                    lc.k, o.act);
      ASSERT_TRUE(a.ok());
      ASSERT_EQ(d->cuMemcpyHtoD(d_a->ptr(), a->data.data(), a->data.size()), CUDA_SUCCESS);
      ASSERT_EQ(d->cuMemsetD8(d_c->ptr(), 0xff, d_c->bytes()), CUDA_SUCCESS);
      // The copy and the poison go on the legacy stream, which `stream` (non-blocking) does not
      // wait for.
      ASSERT_EQ(d->cuCtxSynchronize(), CUDA_SUCCESS);
      launch();
      ASSERT_EQ(d->cuStreamSynchronize(stream), CUDA_SUCCESS);
      expect_output_matches(lc, o.act.type, *a, *w, *d_c, m, seed);
    };
    for (int64_t m : {16, 9, 32, 24, 13, 16}) {
      check(m, [&] {
        Status s = layer->run(args_for(m));
        ASSERT_TRUE(s.ok()) << s.to_string();
      });
    }
    CUgraphExec exec;
    ASSERT_NO_FATAL_FAILURE(capture_run(*layer, args_for(16), stream, &exec));
    for (int replay = 0; replay < 3; ++replay)
      check(16, [&] { ASSERT_EQ(d->cuGraphLaunch(exec, stream), CUDA_SUCCESS); });
    d->cuGraphExecDestroy(exec);
    d->cuStreamDestroy(stream);
  }
}

// Back-to-back calls of one layer on different activations, launched plainly and
// programmatically (the second call's CTAs start while the first one's finish): the second must
// not see the first one's partial sums.
TEST(TunedPlanGpu, BackToBackSixteenTokenCallsKeepTheirPartialsApart) {
  QGEMM_REQUIRE_GPU();
  const LayerCase lc = {"int4/g128/bf16", "bf16", DType::bf16(), 4096, 4096};  // 4 splits
  const CudaDriver* d = *cuda_driver();
  constexpr int64_t kM = 16;
  constexpr int kCalls = 4;
  auto w = quantize_weights(HostValues::of(random_normal(lc.n * lc.k, 700, 0.05f)), 1, lc.n, lc.k,
                            *WeightFormat::parse(lc.weight));
  ASSERT_TRUE(w.ok());
  for (bool programmatic : {false, true}) {
    SCOPED_TRACE(programmatic ? "programmatic" : "plain");
    const LinearOptions o = jit_options(lc, programmatic);
    auto layer = Linear::create(*w, o);
    ASSERT_TRUE(layer.ok()) << layer.status().to_string();
    ASSERT_TRUE(layer->prepare(kM).ok());
    std::vector<QuantizedActivations> acts;
    std::vector<DeviceBuffer> a_bufs, c_bufs;
    for (int i = 0; i < kCalls; ++i) {
      auto a = quantize_activations(HostValues::of(random_normal(kM * lc.k, 710 + i, 1.0f)), kM,
                                    lc.k, o.act);
      ASSERT_TRUE(a.ok());
      auto d_a = DeviceBuffer::allocate(a->data.size());
      auto d_c = DeviceBuffer::allocate(size_t(kM) * lc.n * 2);
      ASSERT_TRUE(d_a.ok() && d_c.ok());
      ASSERT_EQ(d->cuMemcpyHtoD(d_a->ptr(), a->data.data(), a->data.size()), CUDA_SUCCESS);
      ASSERT_EQ(d->cuMemsetD8(d_c->ptr(), 0xff, d_c->bytes()), CUDA_SUCCESS);
      acts.push_back(std::move(*a));
      a_bufs.push_back(std::move(*d_a));
      c_bufs.push_back(std::move(*d_c));
    }
    auto d_w = DeviceBuffer::allocate(std::max<size_t>(layer->workspace_bytes(kM), 1));
    ASSERT_TRUE(d_w.ok());
    // The copies and fills went on the legacy stream, which `stream` (non-blocking) does not
    // wait for.
    ASSERT_EQ(d->cuCtxSynchronize(), CUDA_SUCCESS);
    CUstream stream;
    ASSERT_EQ(d->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    for (int i = 0; i < kCalls; ++i) {  // no synchronization between the calls
      Status s = layer->run(call_args(kM, a_bufs[i].get(), c_bufs[i].get(), *d_w, stream));
      ASSERT_TRUE(s.ok()) << s.to_string();
    }
    ASSERT_EQ(d->cuStreamSynchronize(stream), CUDA_SUCCESS);
    d->cuStreamDestroy(stream);
    for (int i = 0; i < kCalls; ++i) {
      SCOPED_TRACE(str("call ", i));
      expect_output_matches(lc, o.act.type, acts[i], *w, c_bufs[i], kM, 720);
    }
  }
}

// The K splits of a tile are summed in split order, whichever split finishes last: the same
// call on the same data gives the same bits every time, whatever the workspace held before, in
// a captured graph as well. One layer per sum: the 8-token tile's counter fix-up (int4, 4
// splits; uint4/zp launched plainly: a cluster pair of 2), the 16-token tile's marked partials,
// the ws tiles' cluster sums (kw2 and f8 at 33..128 tokens, f16 from 129), plain and
// programmatic launches.
TEST(TunedPlanGpu, SplitKSumsAreBitwiseReproducible) {
  QGEMM_REQUIRE_GPU();
  struct SplitCase {
    LayerCase layer;
    std::vector<int64_t> split_buckets;  // lowest M of each bucket whose plan splits K
  };
  const SplitCase cases[] = {
      {{"int4/g128/bf16", "bf16", DType::bf16(), 4096, 8192}, {1, 9, 33, 129}},
      {{"uint4/g128/bf16/zp", "bf16", DType::fp16(), 8192, 8192}, {1, 9, 33}},
  };
  const CudaDriver* d = *cuda_driver();
  constexpr int64_t kMaxM = 200;
  uint64_t seed = 900;
  for (const SplitCase& sc : cases)
    for (bool programmatic : {false, true}) {
      const LayerCase& lc = sc.layer;
      SCOPED_TRACE(str(lc.weight, " N=", lc.n, " K=", lc.k, programmatic ? " programmatic" : ""));
      const LinearOptions o = jit_options(lc, programmatic);
      auto w = quantize_weights(HostValues::of(random_normal(lc.n * lc.k, seed++, 0.05f)), 1,
                                lc.n, lc.k, *WeightFormat::parse(lc.weight));
      ASSERT_TRUE(w.ok());
      auto layer = Linear::create(*w, o);
      ASSERT_TRUE(layer.ok()) << layer.status().to_string();
      ASSERT_TRUE(layer->prepare(kMaxM).ok());
      const std::string plan = layer->explain();
      // The buckets split K (else this test would compare unsplit sums).
      for (int64_t lo : sc.split_buckets) {
        const std::string key = str("split-K at M=", lo, ": ");
        const size_t at = plan.find(key);
        ASSERT_NE(at, std::string::npos) << plan;
        EXPECT_GT(std::atoi(plan.c_str() + at + key.size()), 1) << plan;
      }
      auto d_a = DeviceBuffer::allocate(size_t(kMaxM) * lc.k * 2);
      auto d_c = DeviceBuffer::allocate(size_t(kMaxM) * lc.n * 2);
      constexpr int64_t kTokens[] = {1, 16, 64, kMaxM};
      size_t workspace = 1;
      for (int64_t m : kTokens) workspace = std::max(workspace, layer->workspace_bytes(m));
      auto d_w = DeviceBuffer::allocate(workspace);
      ASSERT_TRUE(d_a.ok() && d_c.ok() && d_w.ok());
      CUstream stream;
      ASSERT_EQ(d->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
      for (int64_t m : kTokens) {
        SCOPED_TRACE(str("M=", m));
        auto a = quantize_activations(HostValues::of(random_normal(m * lc.k, seed++, 1.0f)), m,
                                      lc.k, o.act);
        ASSERT_TRUE(a.ok());
        ASSERT_EQ(d->cuMemcpyHtoD(d_a->ptr(), a->data.data(), a->data.size()), CUDA_SUCCESS);
        // NOTE: a copy from pageable memory may return before its DMA lands, on the legacy
        // stream, which the non-blocking `stream` does not wait for.
        ASSERT_EQ(d->cuStreamSynchronize(nullptr), CUDA_SUCCESS);
        const LinearArgs args = call_args(m, d_a->get(), d_c->get(), *d_w, stream);
        const size_t out_bytes = size_t(m) * lc.n * 2;
        // One call with the workspace filled with `fill` and C poisoned; returns C's bytes.
        const auto run_once = [&](uint8_t fill, CUgraphExec exec) {
          std::vector<uint8_t> out(out_bytes);
          EXPECT_EQ(d->cuMemsetD8Async(d_w->ptr(), fill, d_w->bytes(), stream), CUDA_SUCCESS);
          EXPECT_EQ(d->cuMemsetD8Async(d_c->ptr(), 0xff, d_c->bytes(), stream), CUDA_SUCCESS);
          if (exec) {
            EXPECT_EQ(d->cuGraphLaunch(exec, stream), CUDA_SUCCESS);
          } else {
            Status s = layer->run(args);
            EXPECT_TRUE(s.ok()) << s.to_string();
          }
          EXPECT_EQ(d->cuStreamSynchronize(stream), CUDA_SUCCESS);
          EXPECT_TRUE(d_c->download(out.data(), out.size()).ok());
          return out;
        };
        const std::vector<uint8_t> first = run_once(0xff, nullptr);
        expect_output_matches(lc, o.act.type, *a, *w, *d_c, m, seed);
        for (uint8_t fill : {0x00, 0x5a, 0xff})
          EXPECT_TRUE(run_once(fill, nullptr) == first) << "workspace filled with " << int(fill);
        CUgraphExec exec;
        ASSERT_NO_FATAL_FAILURE(capture_run(*layer, args, stream, &exec));
        for (int replay = 0; replay < 3; ++replay)
          EXPECT_TRUE(run_once(0xff, exec) == first) << "graph replay " << replay;
        d->cuGraphExecDestroy(exec);
      }
      d->cuStreamDestroy(stream);
    }
}

TEST(AutotuneGpu, SmallLayerEndToEnd) {
  QGEMM_REQUIRE_GPU();
  bench::TuneOptions t;
  t.m = {1, 16, 200, 600};
  t.n = 1000;
  t.k = 1536;
  t.weight = *WeightFormat::parse("int4/g128/bf16");
  t.act = *ActFormat::parse("bf16");
  t.tiles = {
      *MmaTile::parse("w4x1 t1 f1 s6 k256 waves2"), *MmaTile::parse("w4x1 t1 f1 s6 k256 waves4"),
      *MmaTile::parse("w4x1 t1 f4 s6 k128 waves4"), *MmaTile::parse("w4x2 t2 f4 s4 k128 waves2")};
  t.max_kernels = 2;
  t.repetitions = 5;
  t.rotate_bytes = 64 << 20;
  t.progress = false;
  auto r = bench::autotune(t);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE(r->errors.empty()) << r->errors.front();
  ASSERT_EQ(r->candidates.size(), 5u);  // four tiles and the hand-off
  for (size_t ci = 0; ci < 4; ++ci)
    for (double us : r->candidates[ci].us) EXPECT_GT(us, 0.5) << r->candidates[ci].name;
  EXPECT_TRUE(std::isnan(r->candidates[4].us[0]));  // no hand-off at the smallest M
  EXPECT_LE(r->selection.kernels, 2u);
  ASSERT_EQ(r->layer.measured.size(), 4u);
  for (const TunedMeasurement& m : r->layer.measured) EXPECT_LE(m.best_us, m.chosen_us);
  for (double us : r->heuristic_us) EXPECT_GT(us, 0.5);
  EXPECT_EQ(r->layer.buckets.back().max_m, INT64_MAX);
  EXPECT_FALSE(r->layer.buckets.front().expand);

  // The table it makes drives a layer that still matches the reference.
  TempDir dir;
  TuningTable table;
  table.device = r->device.name;
  table.put(r->layer);
  const std::string path = (dir.path / "t.json").string();
  ASSERT_TRUE(write_tuning_table(table, path).ok());
  LinearOptions o;
  o.tuning_table = path;
  const LayerCase lc{"int4/g128/bf16", "bf16", DType::bf16(), 1000, 1536};
  uint64_t seed = 90;
  for (int64_t m : {1, 16, 200, 600}) run_layer(lc, o, m, 0, false, seed++);
}

}  // namespace
}  // namespace qgemm
