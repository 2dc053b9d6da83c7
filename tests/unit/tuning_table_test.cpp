#include "plan/tuning_table.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "bench/lib/autotune.h"
#include "plan/jit_kernel_plan.h"
#include "plan/kernel_selection.h"
#include "qgemm/device.h"
#include "util/error.h"
#include "backend/device_presets.h"

namespace qgemm {
namespace {

namespace fs = std::filesystem;

// A scratch directory of this process and test, removed at the end of the test (ctest runs
// the tests of this file in parallel processes).
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() /
           str("qgemm-tuning-test-", getpid(), "-",
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

DeviceInfo h200_named(const std::string& name) {
  DeviceInfo d = *device_preset("h200");
  d.name = name;
  return d;
}

TunedLayer sample_layer() {
  TunedLayer l;
  l.n = 8192;
  l.k = 8192;
  l.weight = "int4/g128/bf16";
  l.act = "bf16";
  l.out = "bf16";
  l.buckets = {{4, false, *MmaTile::parse("w4x1 t1 f1 s6 k256 waves2")},
               {128, false, *MmaTile::parse("w4x1 t1 f8 s4 k128 waves1")},
               {INT64_MAX, true, {}}};
  l.measured = {{1, "a", "a", 15.5, 15.5}, {64, "b", "c", 30.0, 31.0}};
  return l;
}

// A tile and its config.
struct TileAndConfig {
  MmaTile tile;
  MmaGemmConfig config;
};

// Parses the tile written `text`, expects it to print back as `text`, and makes its config for
// `f` on the H200 (bf16 in and out), which must read back as the same tile.
void expect_tile_round_trip(const std::string& text, const WeightFormat& f, TileAndConfig& out) {
  auto tile = MmaTile::parse(text);
  ASSERT_TRUE(tile.ok()) << tile.status().to_string();
  EXPECT_EQ(tile->to_string(), text);
  auto config = mma_config_for(*tile, f, DType::bf16(), DType::bf16(), *device_preset("h200"));
  ASSERT_TRUE(config.ok()) << config.status().to_string();
  EXPECT_EQ(mma_tile_of(*config), *tile);
  out = {*tile, *config};
}

TEST(MmaTile, TextRoundTripAndErrors) {
  const MmaTile t{4, 2, 2, 4, 4, 128, 2};
  EXPECT_EQ(t.to_string(), "w4x2 t2 f4 s4 k128 waves2");
  auto back = MmaTile::parse(t.to_string());
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(*back, t);
  // The wgmma variant: " wg", only for sm_90a.
  auto wg = MmaTile::parse("w4x2 t1 f8 s4 k128 waves1 wg");
  ASSERT_TRUE(wg.ok());
  EXPECT_TRUE(wg->wgmma);
  EXPECT_EQ(wg->to_string(), "w4x2 t1 f8 s4 k128 waves1 wg");
  const WeightFormat f = *WeightFormat::parse("int4/g128/bf16");
  auto hopper = mma_config_for(*wg, f, DType::bf16(), DType::bf16(), *device_preset("h200"));
  ASSERT_TRUE(hopper.ok()) << hopper.status().to_string();
  EXPECT_TRUE(hopper->wgmma);
  auto ampere = mma_config_for(*wg, f, DType::bf16(), DType::bf16(), *device_preset("sm_80"));
  EXPECT_EQ(ampere.status().code(), ErrorCode::kUnsupported);
  // waves is optional (defaults to 2); the rest is required.
  EXPECT_TRUE(MmaTile::parse("w4x1 t1 f1 s6 k256").ok());
  // A fixed split count, 1..16, kept through the text form and into the config.
  auto fixed = MmaTile::parse("w4x1 t1 f1 s4 k256 waves4 splits7");
  ASSERT_TRUE(fixed.ok()) << fixed.status().to_string();
  EXPECT_EQ(fixed->splits, 7);
  EXPECT_EQ(fixed->to_string(), "w4x1 t1 f1 s4 k256 waves4 splits7");
  auto fixed_config =
      mma_config_for(*fixed, f, DType::bf16(), DType::bf16(), *device_preset("h200"));
  ASSERT_TRUE(fixed_config.ok());
  EXPECT_EQ(fixed_config->split_count, 7);
  // Two compute warpgroups along K ("kw2"): a 64-row warp-specialized tile of 384 threads;
  // elsewhere the config is refused with the reason.
  auto kw2 = MmaTile::parse("w4x1 t1 f8 s6 k128 waves1 ws kw2");
  ASSERT_TRUE(kw2.ok()) << kw2.status().to_string();
  EXPECT_EQ(kw2->warps_k, 2);
  EXPECT_EQ(kw2->to_string(), "w4x1 t1 f8 s6 k128 waves1 ws kw2");
  auto kw2_config = mma_config_for(*kw2, f, DType::bf16(), DType::bf16(), *device_preset("h200"));
  ASSERT_TRUE(kw2_config.ok()) << kw2_config.status().to_string();
  EXPECT_EQ(kw2_config->warps_k, 2);
  EXPECT_EQ(kw2_config->threads(), 384);
  EXPECT_NE(kw2_config->to_string().find(" kw2"), std::string::npos);
  for (const char* refused : {"w8x1 t1 f8 s6 k128 waves1 ws kw2", "w4x1 t1 f8 s6 k128 wg kw2"}) {
    auto c = mma_config_for(*MmaTile::parse(refused), f, DType::bf16(), DType::bf16(),
                            *device_preset("h200"));
    EXPECT_FALSE(c.ok()) << refused;
    if (!c.ok()) {
      EXPECT_NE(c.status().message().find("warps_k=2 is not supported"), std::string::npos)
          << c.status().to_string();
    }
  }
  EXPECT_FALSE(MmaTile::parse("w4x1 t1 f8 s6 k128 ws kw3").ok());
  // Group scales on the weights (" ps"): warp-specialized tiles with bf16 in and out only.
  TileAndConfig ps;
  ASSERT_NO_FATAL_FAILURE(expect_tile_round_trip("w8x1 t1 f16 s5 k128 waves1 ws ps", f, ps));
  EXPECT_TRUE(ps.tile.prescaled);
  EXPECT_TRUE(ps.config.prescaled);
  auto ps_fp16 = mma_config_for(ps.tile, f, DType::bf16(), DType::fp16(), *device_preset("h200"));
  ASSERT_FALSE(ps_fp16.ok());
  EXPECT_NE(ps_fp16.status().message().find("bf16 activations and output only, not bf16 -> fp16"),
            std::string::npos)
      << ps_fp16.status().to_string();
  auto ps_wg = mma_config_for(*MmaTile::parse("w4x1 t1 f8 s4 k128 wg ps"), f, DType::bf16(),
                              DType::bf16(), *device_preset("h200"));
  ASSERT_FALSE(ps_wg.ok());
  EXPECT_NE(ps_wg.status().message().find("prescaled tiles (ps) are warp-specialized (ws)"),
            std::string::npos);
  // TMA stage copies (" tma"): warp-specialized tiles with at most 1 KB of codes per 16-row
  // tile and stage (3-bit codes take 1.5 KB per 64-K unit), through the text form, the config
  // and the kernel source.
  TileAndConfig tma;
  ASSERT_NO_FATAL_FAILURE(expect_tile_round_trip("w8x1 t1 f32 s6 k64 waves1 ws ps tma", f, tma));
  EXPECT_TRUE(tma.tile.tma);
  EXPECT_TRUE(tma.config.tma);
  EXPECT_NE(tma.config.spec().source.find("kTma = true"), std::string::npos);
  for (const auto& [tile, weight] :
       {std::pair{"w4x1 t1 f8 s4 k128 wg tma", "int4/g128/bf16"},
        std::pair{"w8x1 t1 f16 s5 k128 waves1 ws tma", "int3/g128/bf16"},
        std::pair{"w8x1 t1 f8 s3 k256 waves1 ws tma", "int4/g128/bf16"}}) {
    auto c = mma_config_for(*MmaTile::parse(tile), *WeightFormat::parse(weight), DType::bf16(),
                            DType::bf16(), *device_preset("h200"));
    EXPECT_FALSE(c.ok()) << tile << " " << weight;
    if (!c.ok()) {
      EXPECT_NE(c.status().message().find("TMA stage copies (tma) are for warp-specialized"),
                std::string::npos)
          << c.status().to_string();
    }
  }
  for (const char* bad : {"w4x1 t1 f1 s4 k256 splits0", "w4x1 t1 f1 s4 k256 splits17"}) {
    auto r = MmaTile::parse(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find("splits must be 1..16"), std::string::npos);
    }
  }
  for (const char* bad : {"", "w4x1 t1 f1 s6", "w4 t1 f1 s6 k256", "w4x1 t1 f0 s6 k256",
                          "w4x1 t1 f1 s1 k256", "w4x1 t1 f1 s6 k256 z3", "w4x1 t1x f1 s6 k256"}) {
    auto r = MmaTile::parse(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find("expected e.g."), std::string::npos) << bad;
    }
  }
}

TEST(TuningTable, RoundTripsThroughJson) {
  TempDir dir;
  TuningTable t;
  t.device = "NVIDIA H200";
  t.arch = "sm_90a";
  t.created = "2026-11-29T00:00:00Z";
  t.put(sample_layer());
  TunedLayer other = sample_layer();
  other.n = 28672;
  t.put(other);
  ASSERT_TRUE(write_tuning_table(t, dir.file("t.json")).ok());
  auto back = read_tuning_table(dir.file("t.json"));
  ASSERT_TRUE(back.ok()) << back.status().to_string();
  EXPECT_EQ(*back, t);
  // put() replaces the entry of the same problem.
  other.buckets.pop_back();
  other.buckets.back().max_m = INT64_MAX;
  t.put(other);
  EXPECT_EQ(t.layers.size(), 2u);
  EXPECT_EQ(t.find(28672, 8192, "int4/g128/bf16", "bf16", "bf16")->buckets.size(), 2u);
  EXPECT_EQ(t.find(28672, 8192, "int4/g128/bf16", "bf16", "fp16"), nullptr);
}

TEST(TuningTable, BadFilesNameTheProblem) {
  TempDir dir;
  auto missing = read_tuning_table(dir.file("none.json"));
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound);
  const std::pair<const char*, const char*> cases[] = {
      {"{", "tuning table"},
      {R"({"schema": "other/1", "device": "x", "layers": []})", "schema"},
      {R"({"schema": "qgemm-tuning/1", "device": "x", "layers": [{"n": 64, "k": 64,
        "weight": "int4/g32/bf16", "act": "bf16", "out": "bf16",
        "buckets": [{"max_m": 8, "kernel": "mma_gemm", "tile": "w4x1 t1 f1 s6 k256"}]}]})",
       "last bucket"},
      {R"({"schema": "qgemm-tuning/1", "device": "x", "layers": [{"n": 64, "k": 64,
        "weight": "int4/g32/bf16", "act": "bf16", "out": "bf16",
        "buckets": [{"max_m": null, "kernel": "magic"}]}]})",
       "unknown kernel"},
      {R"({"schema": "qgemm-tuning/1", "device": "x", "layers": [{"n": 64, "k": 64,
        "weight": "int4/g32/bf16", "act": "bf16", "out": "bf16",
        "buckets": [{"max_m": null, "kernel": "mma_gemm", "tile": "w4x1"}]}]})",
       "mma tile"},
      {R"({"schema": "qgemm-tuning/1", "device": "x", "layers": [{"n": 64, "k": 64,
        "weight": "int4/g32/bf16", "act": "bf16", "out": "bf16",
        "buckets": [{"max_m": null, "kernel": "expand+cublaslt"}]}]})",
       "first bucket"},
  };
  for (const auto& [text, expected] : cases) {
    std::ofstream(dir.file("bad.json")) << text;
    auto r = read_tuning_table(dir.file("bad.json"));
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_NE(r.status().message().find(expected), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find("bad.json"), std::string::npos) << r.status().message();
  }
}

TEST(TuningTable, PlansReadTablesOfTheirDeviceAndIgnoreOthersWithANote) {
  TempDir dir;
  TuningTable t;
  t.device = "NVIDIA H200";
  t.arch = "sm_90a";
  t.put(sample_layer());
  ASSERT_TRUE(write_tuning_table(t, dir.file("h200.json")).ok());
  const WeightFormat w = *WeightFormat::parse("int4/g128/bf16");

  // The same device: the table's buckets, with their tiles.
  auto tuned = plan_jit_kernels(8192, 8192, w, DType::bf16(), DType::bf16(),
                                h200_named("NVIDIA H200"), true, dir.file("h200.json"));
  ASSERT_TRUE(tuned.ok()) << tuned.status().to_string();
  EXPECT_EQ(tuned->source, "tuning table " + dir.file("h200.json"));
  ASSERT_EQ(tuned->buckets.size(), 3u);
  EXPECT_EQ(tuned->buckets[0].max_m, 4);
  EXPECT_EQ(tuned->buckets[0].config.frags_m, 1);
  EXPECT_EQ(tuned->buckets[0].config.split_waves, 2);
  EXPECT_EQ(tuned->buckets[1].config.frags_m, 8);
  EXPECT_EQ(tuned->buckets[1].config.split_waves, 1);
  EXPECT_TRUE(tuned->buckets[2].expand);
  EXPECT_EQ(tuned->kernels(16384).size(), 3u);

  // Another device: heuristics, and a note that says why.
  auto other = plan_jit_kernels(8192, 8192, w, DType::bf16(), DType::bf16(),
                                h200_named("NVIDIA H100 80GB HBM3"), true, dir.file("h200.json"));
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(other->source, "heuristics");
  ASSERT_EQ(other->notes.size(), 1u);
  EXPECT_NE(other->notes[0].find("measured on NVIDIA H200"), std::string::npos) << other->notes[0];

  // Another shape of the same formats: the nearest tuned layer, with a note.
  TuningTable two = t;
  TunedLayer wide = sample_layer();
  wide.n = 28672;
  wide.buckets.front().tile.frags_m = 2;
  two.put(wide);
  ASSERT_TRUE(write_tuning_table(two, dir.file("h200.json")).ok());
  auto near = plan_jit_kernels(20480, 8192, w, DType::bf16(), DType::bf16(),
                               h200_named("NVIDIA H200"), true, dir.file("h200.json"));
  EXPECT_EQ(near->source, "tuning table " + dir.file("h200.json"));
  EXPECT_EQ(near->buckets.front().config.frags_m, 2);  // N=28672 is nearer than N=8192
  ASSERT_EQ(near->notes.size(), 1u);
  EXPECT_NE(near->notes[0].find("tuned at N=28672 K=8192"), std::string::npos) << near->notes[0];
  auto narrow = plan_jit_kernels(4096, 8192, w, DType::bf16(), DType::bf16(),
                                 h200_named("NVIDIA H200"), true, dir.file("h200.json"));
  EXPECT_EQ(narrow->buckets.front().config.frags_m, 1);
  // Other formats: heuristics, with a note for an explicit path.
  auto absent =
      plan_jit_kernels(8192, 8192, *WeightFormat::parse("int4/g64/bf16"), DType::bf16(),
                       DType::bf16(), h200_named("NVIDIA H200"), true, dir.file("h200.json"));
  EXPECT_EQ(absent->source, "heuristics");
  EXPECT_NE(absent->notes.at(0).find("no entry"), std::string::npos);

  // A missing file is a note, not an error; "none" never reads a table.
  auto missing = plan_jit_kernels(8192, 8192, w, DType::bf16(), DType::bf16(),
                                  h200_named("NVIDIA H200"), true, dir.file("missing.json"));
  ASSERT_TRUE(missing.ok());
  EXPECT_NE(missing->notes.at(0).find("not found"), std::string::npos);
  auto none = plan_jit_kernels(8192, 8192, w, DType::bf16(), DType::bf16(),
                               h200_named("NVIDIA H200"), true, kNoTuningTable);
  EXPECT_TRUE(none->notes.empty());
  EXPECT_EQ(none->source, "heuristics");

  // The default search path ($QGEMM_TUNING_DIR) finds it too.
  setenv("QGEMM_TUNING_DIR", dir.path.c_str(), 1);
  auto searched = plan_jit_kernels(8192, 8192, w, DType::bf16(), DType::bf16(),
                                   h200_named("NVIDIA H200"), true, "");
  unsetenv("QGEMM_TUNING_DIR");
  EXPECT_EQ(searched->source, "tuning table " + dir.file("h200.json"));
}

TEST(TuningTable, HandOffBucketsBecomeMmaWhereCublasCannotRun) {
  const WeightFormat w = *WeightFormat::parse("int4/g128/bf16");
  const auto buckets = sample_layer().buckets;
  // bf16 -> fp16 has no cuBLASLt GEMM: the mma bucket below covers every M.
  auto mixed = plan_from_buckets(buckets, w, DType::bf16(), DType::fp16(), h200_named("x"), true);
  ASSERT_TRUE(mixed.ok());
  ASSERT_EQ(mixed->buckets.size(), 2u);
  EXPECT_EQ(mixed->buckets.back().max_m, INT64_MAX);
  EXPECT_FALSE(mixed->buckets.back().expand);
  EXPECT_EQ(mixed->notes.size(), 1u);
  // The first bucket must be an mma tile, the last must cover every M.
  std::vector<TunedBucket> bad = {{INT64_MAX, true, {}}};
  EXPECT_FALSE(plan_from_buckets(bad, w, DType::bf16(), DType::bf16(), h200_named("x"), true).ok());
  bad = {{8, false, {}}};
  EXPECT_FALSE(plan_from_buckets(bad, w, DType::bf16(), DType::bf16(), h200_named("x"), true).ok());
}

TimedCandidate candidate(const std::string& name, const std::string& kernel,
                         std::vector<double> us) {
  TimedCandidate c;
  c.name = name;
  c.kernel = kernel;
  c.bucket.tile.frags_m = static_cast<int>(name.size());  // distinct buckets per name
  c.us = std::move(us);
  return c;
}

TEST(KernelSelection, FewestKernelsWithinTolerance) {
  const double nan = NAN;
  // Four M; kernel A is best at M0, B at M1, C at M2-M3; "a2" shares kernel A (other splits).
  std::vector<TimedCandidate> c = {
      candidate("a", "A", {10, 30, 100, 1000}),  candidate("a2", "A", {11, 22, 90, 1000}),
      candidate("b", "B", {12, 20, 80, 900}),    candidate("c", "C", {20, 40, 60, 500}),
      candidate("x", "X", {nan, nan, 200, 480}),
  };
  // Within 5%: A (M0), a2/B (M1: 22 vs 20 = 10% -> B), C (M2), X or C (M3: 500 vs 480 = 4.2%).
  auto s = select_kernels(c, 4, 4, 0.05);
  ASSERT_TRUE(s.ok()) << s.status().to_string();
  EXPECT_EQ(s->kernels, 3u);
  EXPECT_EQ(s->choice, (std::vector<size_t>{0, 2, 3, 3}));
  EXPECT_NEAR(s->max_loss, 500.0 / 480 - 1, 1e-12);
  // At most two kernels: the pair with the smallest worst-case loss.
  auto two = select_kernels(c, 4, 2, 0.05);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->kernels, 2u);
  // A and C: a2 at M1 is 10% slower (B and C would lose 20% at M0).
  EXPECT_NEAR(two->max_loss, 22.0 / 20 - 1, 1e-12);
  EXPECT_EQ(two->choice, (std::vector<size_t>{0, 1, 3, 3}));
  // With no tolerance every M gets its best, which needs four kernels.
  auto exact = select_kernels(c, 4, 4, 0.0);
  EXPECT_EQ(exact->kernels, 4u);
  EXPECT_EQ(exact->max_loss, 0.0);
  // An M no candidate ran at is an error.
  c = {candidate("a", "A", {10, nan})};
  EXPECT_FALSE(select_kernels(c, 2, 4, 0.05).ok());
}

TEST(KernelSelection, BucketsSplitAtGeometricMeansAndMerge) {
  std::vector<TimedCandidate> c = {candidate("a", "A", {}), candidate("bb", "B", {}),
                                   candidate("ccc", "C", {})};
  c[2].bucket.expand = true;
  KernelSelection s;
  s.choice = {0, 1, 1, 2, 2};
  const auto b = buckets_for({1, 16, 64, 1024, 4096}, c, s);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].max_m, 4);    // sqrt(1 * 16)
  EXPECT_EQ(b[1].max_m, 256);  // sqrt(64 * 1024)
  EXPECT_FALSE(b[1].expand);
  EXPECT_EQ(b[2].max_m, INT64_MAX);
  EXPECT_TRUE(b[2].expand);
}

// Without --tiles the tuner also times the tiles of the layer's heuristic plan, so a table can
// always keep the kernels the layer runs without one; with --tiles it times exactly those.
TEST(Autotune, DefaultCandidatesIncludeTheHeuristicPlansTiles) {
  const DeviceInfo h200 = *device_preset("h200");
  for (const char* spec : {"int4/g128/bf16", "uint4/g128/fp16/zp", "int8/channel/bf16", "nvfp4"}) {
    bench::TuneOptions t;
    t.n = 8192;
    t.k = 8192;
    t.weight = *WeightFormat::parse(spec);
    t.act = *ActFormat::parse("bf16");
    auto tiles = bench::tune_candidate_tiles(t, h200);
    ASSERT_TRUE(tiles.ok()) << tiles.status().to_string();
    std::set<std::string> names;
    for (const MmaTile& tile : *tiles) EXPECT_TRUE(names.insert(tile.to_string()).second) << spec;
    EXPECT_GE(tiles->size(), bench::default_tune_tiles(h200).size());
    auto plan = plan_mma_gemm(t.n, t.k, t.weight, t.act.type, t.out, h200);
    ASSERT_TRUE(plan.ok());
    for (const MmaPlanEntry& e : *plan)
      EXPECT_EQ(names.count(mma_tile_of(e.config).to_string()), 1u)
          << spec << ": " << e.config.to_string() << " is not a candidate";
  }
  bench::TuneOptions given;
  given.n = given.k = 8192;
  given.weight = *WeightFormat::parse("int4/g128/bf16");
  given.act = *ActFormat::parse("bf16");
  given.tiles = {*MmaTile::parse("w4x1 t1 f1 s4 k256 waves4")};
  auto tiles = bench::tune_candidate_tiles(given, h200);
  ASSERT_TRUE(tiles.ok());
  ASSERT_EQ(tiles->size(), 1u);
  EXPECT_EQ((*tiles)[0], given.tiles[0]);
}

}  // namespace
}  // namespace qgemm

namespace qgemm {
namespace {

// Bad tuning requests fail with a message naming the value, before any GPU is looked for.
TEST(Autotune, BadRequestsAreClearErrorsWithoutAGpu) {
  auto base = [] {
    bench::TuneOptions t;
    t.n = 1024;
    t.k = 1024;
    t.weight = *WeightFormat::parse("int4/g128/bf16");
    t.act = *ActFormat::parse("bf16");
    return t;
  };
  const std::pair<std::function<void(bench::TuneOptions&)>, const char*> cases[] = {
      {[](bench::TuneOptions& t) { t.m = {}; }, "--m"},
      {[](bench::TuneOptions& t) {
         t.m = {0, 16};
       },
       "--m"},
      {[](bench::TuneOptions& t) { t.act = *ActFormat::parse("e4m3/token"); }, "e4m3/token"},
      {[](bench::TuneOptions& t) { t.out = DType::e4m3(); }, "output type e4m3"},
      {[](bench::TuneOptions& t) { t.k = 1000; }, "K=1000"},
      {[](bench::TuneOptions& t) { t.max_kernels = 0; }, "max_kernels"},
  };
  for (const auto& [change, expected] : cases) {
    bench::TuneOptions t = base();
    change(t);
    auto r = bench::autotune(t);
    ASSERT_FALSE(r.ok()) << expected;
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument) << r.status().message();
    EXPECT_NE(r.status().message().find(expected), std::string::npos) << r.status().message();
  }
}

}  // namespace
}  // namespace qgemm
