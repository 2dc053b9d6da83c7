// Correctness of the wgmma (sm_90a) variant of the mma GEMM family on the GPU. The planner does
// not pick wgmma configs yet, so each config is launched directly on packed weights and compared
// with the CPU reference: token tiles of 8 .. 128 per warpgroup, one and two warpgroups, split-K,
// and N, K that are not multiples of the 64-row / 64-K tiles; also the warp-specialized tiles
// (two warpgroups of 64 rows sharing the tokens, a third copying), shaped by the planner's rules.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/device_buffer.h"
#include "dense/mma_gemm_params.cuh"
#include "jit/tma_maps.h"
#include "gpu_test_util.h"
#include "jit/kernel_cache.h"
#include "jit/kernel_loader.h"
#include "jit/mma_gemm.h"
#include "pack/mma_pack.h"
#include "plan/jit_kernel_plan.h"
#include "plan/mma_launch.h"
#include "families/dense_expand.h"
#include "qgemm/device.h"
#include "util/error.h"
#include "util/random.h"
#include "backend/device_presets.h"

namespace qgemm {
namespace {

// 8-token groups per warpgroup, warpgroups along M, warps along N (4 per warpgroup), and
// whether a copy warpgroup feeds them (warp-specialized).
struct Tile {
  int frags_m, warps_m, warps_n = 4;
  bool ws = false;
  int stage_k = 128;
  int warps_k = 1;  // two compute warpgroups taking alternate stages of one 64-row tile
  bool prescaled = false;  // group scales on the weights (bf16 in and out only)
  bool tma = false;        // stages copied by TMA
};
// 256-K warp-specialized stages, where two scale groups per stage (g128) get a partial set
// each; a 64-row ws tile with two compute warpgroups along K; and prescaled ws tiles, the
// 256-token one with a batch of wgmmas per 64-K stage; ws tiles with TMA stage copies (boxes
// partly past M, N and K read zeros).
const Tile kTiles[] = {{1, 1},
                       {2, 2},
                       {8, 1},
                       {16, 1},
                       {8, 1, 8, true},
                       {16, 1, 8, true},
                       {8, 1, 8, true, 256},
                       {8, 1, 4, true, 128, 2},
                       {8, 1, 8, true, 128, 1, true},
                       {16, 1, 8, true, 128, 1, true},
                       {8, 1, 4, true, 128, 2, true},
                       {32, 1, 8, true, 64, 1, true},
                       {16, 1, 8, true, 128, 1, false, true},
                       {8, 1, 4, true, 128, 2, false, true},
                       {32, 1, 8, true, 64, 1, true, true},
                       {32, 1, 4, true, 64, 2, true, true}};
const int64_t kTokens[] = {1, 7, 64, 118, 1000};
const char* const kWeightSpecs[] = {
    "int4/g128/bf16", "uint4/g128/fp16/zp",     "int8/channel/bf16",    "e2m1/g32/ue8m0",
    "int3/g128/bf16", "uint4/g64/bf16/zp_bf16", "e2m1/g16/e4m3/global", "uint4/channel/fp16/zp",
};
constexpr int kH200SmemPerBlock = 227 * 1024;

bool has_sm90() {
  const auto devices = list_devices();
  return !devices.empty() && devices[0].sm() == 90;
}

#define QGEMM_REQUIRE_SM90()                                              \
  do {                                                                    \
    QGEMM_REQUIRE_GPU();                                                  \
    if (!has_sm90()) GTEST_SKIP() << "wgmma needs an sm_90 GPU (Hopper)"; \
  } while (0)

// Prescaled tiles take bf16 activations and output, without float zero points, in stages of
// two wgmma batches or more; TMA stage copies take at most 1 KB of codes per tile and stage
// (codes of up to 4 bits in 128-K stages, 8 bits in 64-K ones). The other layers of the table
// skip them.
bool tile_applies(const Tile& t, const WeightFormat& wf, DType act) {
  if (!t.prescaled && !t.tma) return true;
  MmaTile tile;
  tile.warps_n = t.warps_n, tile.warps_k = t.warps_k, tile.frags_m = t.frags_m;
  tile.stage_k = t.stage_k;
  tile.wgmma = tile.warp_specialized = true;
  tile.prescaled = t.prescaled;
  tile.tma = t.tma;
  return mma_config_for(tile, wf, act, act, *device_preset("h200")).ok();
}

MmaGemmConfig wgmma_config(const WeightFormat& wf, DType act, Tile t) {
  if (t.ws) {
    // The planner's adjustments (fewer tokens for wide codes, fewer stages to fit).
    MmaTile tile;
    tile.warps_n = t.warps_n;
    tile.warps_m = t.warps_m;
    tile.warps_k = t.warps_k;
    tile.frags_m = t.frags_m;
    tile.stages = t.stage_k > 128 ? 4 : 6;
    tile.stage_k = t.stage_k;
    tile.wgmma = tile.warp_specialized = true;
    tile.prescaled = t.prescaled;
    tile.tma = t.tma;
    auto c = mma_config_for(tile, wf, act, act, *device_preset("h200"));
    if (c) return *c;
    ADD_FAILURE() << c.status().to_string();
  }
  MmaGemmConfig c = MmaGemmConfig::from_format(wf, act, act);
  c.arch = "sm_90a";
  c.wgmma = true;
  c.frags_m = t.frags_m;
  c.warps_m = t.warps_m;
  c.units_per_stage = std::max(1, 128 / c.unit_k());
  while (c.smem_bytes() > kH200SmemPerBlock && c.stages > 2) --c.stages;
  return c;
}

// A packed weight on the device.
struct DeviceWeight {
  MmaPackedWeight packed;
  DeviceBuffer codes, scales, zeros, row_scale;
};

Expected<DeviceWeight> upload_weight(const QuantizedWeight& w, DType act) {
  auto packed = pack_mma(w, 0, act);
  if (!packed) return packed.status();
  DeviceWeight d;
  d.packed = std::move(*packed);
  const MmaPackedWeight& p = d.packed;
  auto codes = DeviceBuffer::upload(p.codes.data(), p.codes.size() * 4);
  auto scales = DeviceBuffer::upload(p.scales.data(), p.scales.size() * 4);
  auto zeros = DeviceBuffer::upload(p.zeros.data(), p.zeros.size() * 4);
  auto rows = DeviceBuffer::upload(p.row_scale.data(), p.row_scale.size() * 4);
  for (auto* b : {&codes, &scales, &zeros, &rows})
    if (!*b) return b->status();
  d.codes = std::move(*codes);
  d.scales = std::move(*scales);
  d.zeros = std::move(*zeros);
  d.row_scale = std::move(*rows);
  return d;
}

// Runs config `c` on `a` x `w` in `splits` K splits (C poisoned with NaN first) and compares
// sampled rows with the reference.
Expected<testing::CheckedRun> run_wgmma(const MmaGemmConfig& c, const QuantizedWeight& w,
                                        const DeviceWeight& dw, const QuantizedActivations& a,
                                        int splits, bool cluster, uint64_t seed) {
  auto kernel = get_kernel(c.spec());
  if (!kernel) return kernel.status();
  const MmaPackedWeight& pw = dw.packed;
  const int64_t m = a.m, n = w.n;
  const int k_stages = (pw.k_units + c.units_per_stage - 1) / c.units_per_stage;
  splits = std::min(splits, k_stages);
  const unsigned grid_x = static_cast<unsigned>((pw.n_tiles + c.warps_n - 1) / c.warps_n);
  const unsigned grid_y = static_cast<unsigned>((m + c.block_m() - 1) / c.block_m());
  const size_t out_bytes = size_t(m) * n * ((c.out.bits + 7) / 8);
  std::vector<uint8_t> out(out_bytes, 0xff);  // NaN poison
  auto d_a = DeviceBuffer::upload(a.data.data(), a.data.size());
  auto d_c = DeviceBuffer::upload(out.data(), out_bytes);
  auto d_partials = DeviceBuffer::allocate(size_t(splits) * m * pw.n_tiles * 16 * 4);
  auto d_counters = DeviceBuffer::allocate(size_t(grid_x) * grid_y * 4);
  for (auto* b : {&d_a, &d_c, &d_partials, &d_counters})
    if (!*b) return b->status();
  auto driver = cuda_driver();
  if (!driver) return driver.status();
  QGEMM_CU(*driver, cuMemsetD8, d_counters->ptr(), 0, d_counters->bytes());

  MmaGemmParams p{};
  p.weights = reinterpret_cast<const u8*>(dw.codes.ptr());
  p.scales = pw.groups > 0 ? reinterpret_cast<const u32*>(dw.scales.ptr()) : nullptr;
  p.zeros = dw.zeros.bytes() > 0 ? reinterpret_cast<const u32*>(dw.zeros.ptr()) : nullptr;
  p.row_scale =
      dw.row_scale.bytes() > 0 ? reinterpret_cast<const float*>(dw.row_scale.ptr()) : nullptr;
  p.a = reinterpret_cast<const u16*>(d_a->ptr());
  p.bias = nullptr;
  p.c = d_c->get();
  p.partials = reinterpret_cast<float*>(d_partials->ptr());
  p.counters = reinterpret_cast<i32*>(d_counters->ptr());
  p.m = static_cast<i32>(m);
  p.n = static_cast<i32>(n);
  p.k = static_cast<i32>(a.k);
  p.lda = static_cast<i32>(a.k);
  p.ldc = static_cast<i32>(n);
  p.n_tiles = pw.n_tiles;
  p.k_units = pw.k_units;
  p.groups = pw.groups;
  p.k_stages = k_stages;
  MmaGemmMaps maps;
  QGEMM_RETURN_IF_ERROR(encode_tma_maps(c, p, &maps));
  QGEMM_RETURN_IF_ERROR(launch_z_clusters(*kernel, grid_x, grid_y, static_cast<unsigned>(splits),
                                          cluster ? static_cast<unsigned>(splits) : 1u,
                                          /*programmatic=*/true, CUstream(nullptr), p, maps));
  QGEMM_CU(*driver, cuCtxSynchronize);
  QGEMM_RETURN_IF_ERROR(d_c->download(out.data(), out_bytes));

  const std::vector<double> c_values = decode_output(c.out, out);
  testing::CheckedRun r;
  r.backend = "wgmma";
  for (double v : c_values)
    if (std::isnan(v)) ++r.unwritten;
  const auto rows = testing::check_rows(m, 128, seed);
  auto ref = reference_gemm(a, w, {}, rows);
  if (!ref) return ref.status();
  std::vector<double> got;
  for (int64_t row : rows)
    got.insert(got.end(), c_values.begin() + row * n, c_values.begin() + (row + 1) * n);
  r.cmp = compare(*ref, got);
  return r;
}

struct Case {
  std::string weight;
  std::string act;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.weight << " x " << c.act; }

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const char* w : kWeightSpecs)
    for (const char* act : {"bf16", "fp16"}) cases.push_back({w, act});
  return cases;
}

class WgmmaGemmGpuTest : public ::testing::TestWithParam<Case> {
 public:
  // Compiles every kernel of the table at once, on all cores, before the first case runs.
  static void SetUpTestSuite() {
    if (!has_sm90()) return;
    std::vector<KernelSpec> specs;
    for (const Case& c : all_cases())
      for (const Tile& t : kTiles)
        if (tile_applies(t, *WeightFormat::parse(c.weight), *parse_dtype(c.act)))
          specs.push_back(
              wgmma_config(*WeightFormat::parse(c.weight), *parse_dtype(c.act), t).spec());
    KernelCache::instance().get_all(specs);
  }
};

// Every tile at every batch size; split-K (3 splits, global and in a cluster) for the small
// batches, and 2 for the prescaled tiles at the larger ones (a cluster pair trades bf16 halves).
TEST_P(WgmmaGemmGpuTest, MatchesReferenceAtEveryBatchSize) {
  QGEMM_REQUIRE_SM90();
  ASSERT_TRUE(use_device(0).ok());
  const Case& c = GetParam();
  const WeightFormat wf = *WeightFormat::parse(c.weight);
  const ActFormat af = *ActFormat::parse(c.act);
  const DType act = *parse_dtype(c.act);
  const int64_t n = 1000, k = 1536;  // N: 62.5 warpgroup tiles of 16 rows x 4
  const auto wv = random_normal(n * k, 17, 0.05f);
  auto w = quantize_weights(HostValues::of(wv), 1, n, k, wf);
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  auto dw = upload_weight(*w, act);
  ASSERT_TRUE(dw.ok()) << dw.status().to_string();
  uint64_t seed = 23;
  for (int64_t m : kTokens) {
    const auto av = random_normal(m * k, seed++, 1.0f);
    auto a = quantize_activations(HostValues::of(av), m, k, af);
    ASSERT_TRUE(a.ok()) << a.status().to_string();
    for (const Tile& t : kTiles) {
      if (!tile_applies(t, wf, act)) continue;
      const MmaGemmConfig cfg = wgmma_config(wf, act, t);
      const int splits = m <= 64 ? 3 : t.prescaled ? 2 : 1;
      // Split-K sums through global partials, and through shared memory in a cluster.
      for (bool cluster : {false, true}) {
        if (cluster && splits == 1) continue;
        SCOPED_TRACE(str(cfg.to_string(), " M=", m, " N=", n, " K=", k, " splits=", splits,
                         cluster ? " in a cluster" : ""));
        auto r = run_wgmma(cfg, *w, *dw, *a, splits, cluster, seed);
        ASSERT_NO_FATAL_FAILURE(testing::expect_matches_reference(r, tolerance_for(act, act)));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Formats, WgmmaGemmGpuTest, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           std::string name = info.param.weight + "_" + info.param.act;
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

// Channel scales accept any K that is a multiple of 8: the last stage's slabs are partly past K
// (zero-filled, or read as zeros by TMA boxes); N = 333 leaves three of the last CTA's four
// warps beyond the weight. Without group sums, codes of up to 12 words per unit (2-, 6- and
// 8-bit) take the 128-token ws tile.
TEST(WgmmaGemmGpu, OddShapesWithChannelScales) {
  QGEMM_REQUIRE_SM90();
  ASSERT_TRUE(use_device(0).ok());
  for (const char* spec : {"int8/channel/bf16", "e4m3/channel/fp32", "int4/channel/fp16",
                           "int6/channel/bf16", "int2/channel/fp16"})
    for (int64_t k : {1000, 4104, 72}) {
      const WeightFormat wf = *WeightFormat::parse(spec);
      const int64_t n = 333;
      auto w = quantize_weights(HostValues::of(random_normal(n * k, 5 + k, 0.05f)), 1, n, k, wf);
      ASSERT_TRUE(w.ok()) << w.status().to_string();
      auto dw = upload_weight(*w, DType::bf16());
      ASSERT_TRUE(dw.ok()) << dw.status().to_string();
      for (int64_t m : {1, 33, 300})
        for (const Tile& t :
             {Tile{1, 1}, Tile{4, 2}, Tile{16, 1, 8, true}, Tile{8, 1, 4, true, 128, 2},
              Tile{16, 1, 8, true, 128, 1, false, true}}) {
          if (!tile_applies(t, wf, DType::bf16())) continue;
          const MmaGemmConfig cfg = wgmma_config(wf, DType::bf16(), t);
          SCOPED_TRACE(str(cfg.to_string(), " M=", m, " N=", n, " K=", k));
          auto a = quantize_activations(HostValues::of(random_normal(m * k, 7 + m, 1.0f)), m, k,
                                        *ActFormat::parse("bf16"));
          ASSERT_TRUE(a.ok()) << a.status().to_string();
          auto r = run_wgmma(cfg, *w, *dw, *a, 2, /*cluster=*/true, 11 + m);
          ASSERT_NO_FATAL_FAILURE(testing::expect_matches_reference(r, 5e-3));
        }
    }
}

// Group scales with 2-, 6- and 8-bit codes on the 128-token ws tile (sums and partials of 128
// tokens, A fragments batched 64 K at a time): odd N, K a multiple of the group but not of the
// stage, zero points, fp16 and bf16 activations, splits summed in a cluster.
TEST(WgmmaGemmGpu, GroupedWideCodesOnThe128TokenWsTile) {
  QGEMM_REQUIRE_SM90();
  ASSERT_TRUE(use_device(0).ok());
  struct Spec {
    const char* weight;
    const char* act;
    int64_t k;
  };
  for (const Spec& c :
       {Spec{"int2/g128/bf16", "bf16", 4224}, Spec{"uint2/g128/fp16/zp", "fp16", 1152},
        Spec{"int6/g128/fp16", "bf16", 1152}, Spec{"int8/g64/bf16", "fp16", 4160},
        Spec{"uint8/g128/bf16/zp", "bf16", 1152}}) {
    const WeightFormat wf = *WeightFormat::parse(c.weight);
    const DType act = *parse_dtype(c.act);
    const MmaGemmConfig cfg = wgmma_config(wf, act, Tile{16, 1, 8, true});
    ASSERT_EQ(cfg.frags_m, 16) << cfg.to_string();
    const int64_t n = 333;
    auto w =
        quantize_weights(HostValues::of(random_normal(n * c.k, 3 + c.k, 0.05f)), 1, n, c.k, wf);
    ASSERT_TRUE(w.ok()) << w.status().to_string();
    auto dw = upload_weight(*w, act);
    ASSERT_TRUE(dw.ok()) << dw.status().to_string();
    for (int64_t m : {129, 300})
      for (int splits : {1, 2}) {
        SCOPED_TRACE(str(cfg.to_string(), " M=", m, " N=", n, " K=", c.k, " splits=", splits));
        auto a = quantize_activations(HostValues::of(random_normal(m * c.k, 9 + m, 1.0f)), m, c.k,
                                      *ActFormat::parse(c.act));
        ASSERT_TRUE(a.ok()) << a.status().to_string();
        auto r = run_wgmma(cfg, *w, *dw, *a, splits, /*cluster=*/true, 13 + m);
        ASSERT_NO_FATAL_FAILURE(testing::expect_matches_reference(r, tolerance_for(act, act)));
      }
  }
}

// 2- and 6-bit codes on the 256-token prescaled tile: each 128-K unit's stage runs as two
// 64-K wgmma batches, and its 1536 bytes of 6-bit codes per 16-row tile arrive as a 3-D TMA box
// of 512-byte chunks. Odd N (boxes past the last row), K an odd number of units, a partial
// second token tile, splits summed in a cluster.
TEST(WgmmaGemmGpu, WideCodesOnThe192And256TokenPrescaledTiles) {
  QGEMM_REQUIRE_SM90();
  ASSERT_TRUE(use_device(0).ok());
  // 256 tokens, and 192 (three stages of 6-bit codes where 256 tokens fit two).
  struct Case {
    const char* spec;
    int frags_m;
  };
  for (const Case& c :
       {Case{"e2m3/g32/ue8m0", 32}, Case{"int6/g128/bf16", 32}, Case{"int2/g64/bf16", 32},
        Case{"int6/g64/bf16", 32}, Case{"e2m3/g32/ue8m0", 24}, Case{"int6/g128/bf16", 24}}) {
    const WeightFormat wf = *WeightFormat::parse(c.spec);
    const MmaGemmConfig cfg =
        wgmma_config(wf, DType::bf16(), Tile{c.frags_m, 1, 8, true, 128, 1, true, true});
    ASSERT_TRUE(cfg.frags_m == c.frags_m && cfg.prescaled && cfg.tma) << cfg.to_string();
    const int64_t n = 333, k = 1152;
    auto w = quantize_weights(HostValues::of(random_normal(n * k, 31, 0.05f)), 1, n, k, wf);
    ASSERT_TRUE(w.ok()) << w.status().to_string();
    auto dw = upload_weight(*w, DType::bf16());
    ASSERT_TRUE(dw.ok()) << dw.status().to_string();
    for (int64_t m : {300, 513})
      for (int splits : {1, 2}) {
        SCOPED_TRACE(str(cfg.to_string(), " M=", m, " N=", n, " K=", k, " splits=", splits));
        auto a = quantize_activations(HostValues::of(random_normal(m * k, 19 + m, 1.0f)), m, k,
                                      *ActFormat::parse("bf16"));
        ASSERT_TRUE(a.ok()) << a.status().to_string();
        auto r = run_wgmma(cfg, *w, *dw, *a, splits, /*cluster=*/true, 17 + m);
        ASSERT_NO_FATAL_FAILURE(testing::expect_matches_reference(r, 5e-3));
      }
  }
}

}  // namespace
}  // namespace qgemm
