// Launch rules of the dense tile kernels: K splits, clusters, tail splits.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "backend/device_presets.h"
#include "dense/mma_layout.cuh"
#include "families/dense_expand.h"
#include "plan/jit_kernel_plan.h"
#include "plan/mma_launch.h"
#include "qgemm/device.h"
#include "util/error.h"
#include "planned_layers.h"

namespace qgemm {
namespace {

// The compiled kernel's registers can hold fewer CTAs per SM than shared memory allows (the
// int3 decode tile: 7 by shared memory, 4 at its 128 registers); split-K then stays within the
// CTAs that really fit.
TEST(MmaLaunch, SplitsStayWithinTheCtasTheRegistersLeaveRoomFor) {
  const DeviceInfo d = *device_preset("h200");
  auto plan = plan_mma_gemm(8192, 8192, *WeightFormat::parse("int3/g128/bf16"), DType::bf16(),
                            DType::bf16(), d);
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  const MmaGemmConfig& c = entry_for(*plan, 1).config;
  ASSERT_EQ(128, c.threads());
  EXPECT_GT(mma_resident_estimate(c, d), 4) << "shared memory alone allows more";
  EXPECT_EQ(4, mma_resident_estimate(c, d, 128));  // 128 x 128 x 4 = 64 K registers
  EXPECT_EQ(3, mma_resident_estimate(c, d, 129));  // allocated 8 at a time: 136
  EXPECT_EQ(mma_resident_estimate(c, d), mma_resident_estimate(c, d, 0));  // 0: unknown
  const int64_t ctas = 8192 / 64;
  for (int registers : {0, 96, 128, 136, 168, 255}) {
    const int splits = mma_splits(c, 1, 8192, 8192, d, registers);
    EXPECT_LE(ctas * splits, mma_resident_estimate(c, d, registers) * d.multiprocessors)
        << registers << " registers, " << splits << " splits";
    EXPECT_LE(splits, mma_splits(c, 1, 8192, 8192, d)) << "registers never add splits";
  }
}

// Each resident CTA takes its ring, the kernel's static bytes and the driver's 1 KB: the nvfp4
// decode tile asks for exactly a quarter of a Hopper SM's shared memory with its 1 KB, which the
// static bytes turn into three CTAs; K splits are sized for those three, one wave.
TEST(MmaLaunch, ResidencyCountsTheKernelsStaticSharedMemory) {
  for (const char* arch : {"sm_90a", "sm_89", "sm_80"}) {
    const DeviceInfo d = *device_preset(arch);
    const int64_t sm_smem = d.smem_per_block + 1024;
    for (const char* w : {"nvfp4", "int4/g128/bf16", "uint4/g128/bf16/zp", "int8/channel/bf16",
                          "mxfp4", "int3/g128/bf16"}) {
      auto plan =
          plan_mma_gemm(8192, 8192, *WeightFormat::parse(w), DType::bf16(), DType::bf16(), d);
      ASSERT_TRUE(plan.ok()) << plan.status().to_string();
      for (const MmaPlanEntry& e : *plan) {
        const int64_t per_cta = e.config.smem_bytes() + kMmaStaticSmemBytes + 1024;
        const int resident = mma_resident_estimate(e.config, d);
        EXPECT_LE(resident * per_cta, sm_smem) << arch << " " << e.config.to_string();
        if (resident < 2048 / e.config.threads()) {
          EXPECT_GT((resident + 1) * per_cta, sm_smem) << arch << " " << e.config.to_string();
        }
      }
    }
  }
  const DeviceInfo h100 = *device_preset("sm_90a");
  auto nvfp4 =
      plan_mma_gemm(8192, 8192, *WeightFormat::parse("nvfp4"), DType::bf16(), DType::bf16(), h100);
  ASSERT_TRUE(nvfp4.ok()) << nvfp4.status().to_string();
  const MmaGemmConfig& decode = entry_for(*nvfp4, 1).config;
  ASSERT_EQ(4 * (decode.smem_bytes() + 1024), h100.smem_per_block + 1024)
      << "the case this test is about: " << decode.to_string();
  EXPECT_EQ(3, mma_resident_estimate(decode, h100)) << decode.to_string();
  EXPECT_LE(8192 / decode.block_n() * mma_splits(decode, 1, 8192, 8192, h100),
            3 * h100.multiprocessors);
}

// K splits of the warp-specialized Hopper tiles are summed in a thread-block cluster (2..8 of
// them), and so are those of the 8-token decode tile split in two; other decode tiles, other
// split counts and other architectures keep the global fix-up.
TEST(MmaLaunch, SplitClustersForWarpSpecializedAndPairedDecodeHopperTiles) {
  auto hopper = int4_plan(8192, 8192, "h200");
  ASSERT_TRUE(hopper.ok());
  const MmaGemmConfig& ws = entry_for(*hopper, 64).config;
  ASSERT_TRUE(ws.warp_specialized);
  EXPECT_EQ(1, mma_split_cluster(ws, 1));
  EXPECT_EQ(2, mma_split_cluster(ws, 2));
  EXPECT_EQ(8, mma_split_cluster(ws, 8));
  EXPECT_EQ(1, mma_split_cluster(ws, 9)) << "past the portable cluster size";
  const MmaGemmConfig& decode8 = entry_for(*hopper, 1).config;
  ASSERT_EQ(decode8.block_m(), 8);
  EXPECT_EQ(2, mma_split_cluster(decode8, 2, 0.5)) << "8-token tile in pairs, half a wave";
  EXPECT_EQ(2, mma_split_cluster(decode8, 2, kDecodePairMaxWaveFill));
  EXPECT_EQ(2, mma_split_cluster(decode8, 2, 0.97)) << "a nearly full wave";
  EXPECT_EQ(1, mma_split_cluster(decode8, 2, 1.2)) << "past one wave";
  EXPECT_EQ(1, mma_split_cluster(decode8, 2)) << "wave fill not known";
  EXPECT_EQ(1, mma_split_cluster(decode8, 3, 0.5)) << "8-token tile in threes";
  EXPECT_EQ(1, mma_split_cluster(decode8, 4, 0.5)) << "8-token tile in fours";
  const MmaGemmConfig& decode16 = entry_for(*hopper, 16).config;
  ASSERT_EQ(decode16.block_m(), 16);
  EXPECT_EQ(1, mma_split_cluster(decode16, 2, 0.5)) << "16-token tile";
  auto ampere = int4_plan(8192, 8192, "sm_80");
  ASSERT_TRUE(ampere.ok());
  for (const MmaPlanEntry& e : *ampere) EXPECT_EQ(1, mma_split_cluster(e.config, 4));
}

// Cluster-summed K splits are lowered until every tile's cluster runs at once (a cluster that
// does not fit waits for a whole cluster's worth of SMs); unknown slot counts and splits summed
// through global memory are left alone.
TEST(MmaLaunch, ClusterSplitsLoweredUntilTheirClustersFit) {
  auto hopper = int4_plan(4096, 4096, "h200");
  ASSERT_TRUE(hopper.ok());
  const MmaGemmConfig& ws = entry_for(*hopper, 64).config;
  ASSERT_TRUE(ws.warp_specialized);
  ClusterSlots slots{};
  slots[2] = 66, slots[3] = 44, slots[4] = 31;
  EXPECT_EQ(3, mma_splits_fitting_clusters(ws, 4, 32, slots)) << "32 clusters of 4, 31 fit";
  EXPECT_EQ(4, mma_splits_fitting_clusters(ws, 4, 31, slots));
  EXPECT_EQ(2, mma_splits_fitting_clusters(ws, 4, 60, slots));
  EXPECT_EQ(1, mma_splits_fitting_clusters(ws, 2, 70, slots)) << "not even pairs fit";
  EXPECT_EQ(5, mma_splits_fitting_clusters(ws, 5, 200, slots)) << "slots of 5 unknown";
  EXPECT_EQ(4, mma_splits_fitting_clusters(ws, 4, 32, ClusterSlots{})) << "nothing known";
  EXPECT_EQ(4, mma_splits_fitting_clusters(entry_for(*hopper, 1).config, 4, 1000, slots))
      << "decode tiles sum splits in global memory";
}

// Splits shrink as tokens fill the GPU, and stay 1 on a short K.
TEST(MmaLaunch, SplitsFollowTokensAndK) {
  const DeviceInfo d = *device_preset("h200");
  auto plan = int4_plan(4096, 4096, "h200");
  ASSERT_TRUE(plan.ok()) << plan.status().to_string();
  const MmaGemmConfig& prefill = plan->back().config;
  EXPECT_EQ(1, mma_splits(prefill, 16384, 4096, 4096, d));
  const MmaGemmConfig& decode = plan->front().config;
  EXPECT_EQ(1, mma_splits(decode, 1, 4096, 3 * decode.stage_k(), d));
  EXPECT_EQ(1, mma_splits(decode, 1, 4096, 1, d));
  EXPECT_LE(mma_splits(decode, 1, 4096, 8 * decode.stage_k(), d), 2);
}

// A tile's fixed split count replaces the waves rule, at most one split per K stage.
TEST(MmaLaunch, FixedSplitsOverrideTheWavesRule) {
  const DeviceInfo d = *device_preset("h200");
  const WeightFormat f = *WeightFormat::parse("int4/g128/bf16");
  auto c = mma_config_for(*MmaTile::parse("w4x1 t1 f1 s4 k256 waves4 splits7"), f, DType::bf16(),
                          DType::bf16(), d);
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(7, mma_splits(*c, 1, 28672, 8192, d));
  EXPECT_EQ(7, mma_splits(*c, 4096, 28672, 8192, d)) << "whatever the tokens";
  EXPECT_EQ(3, mma_splits(*c, 1, 28672, 3 * c->stage_k(), d)) << "one split per stage at most";
  EXPECT_EQ(1, mma_splits(*c, 1, 28672, 1, d));
  c->split_count = 0;
  EXPECT_EQ(1, mma_splits(*c, 1, 28672, 8192, d)) << "the waves rule: 448 CTAs fill one wave";
}

TEST(MmaLaunch, TailSplitFillsTheLastWaveOfWarpSpecializedTiles) {
  const DeviceInfo d = *device_preset("h200");  // 132 SMs, one ws CTA per SM
  const WeightFormat f = *WeightFormat::parse("int4/g128/bf16");
  auto plan = plan_mma_gemm(10240, 8192, f, DType::bf16(), DType::bf16(), d);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const MmaGemmConfig& ws = entry_for(*plan, 300).config;  // the 128-token tile
  ASSERT_TRUE(ws.warp_specialized);
  ASSERT_EQ(ws.frags_m, 16);
  // N = 10240 at 128 rows per CTA: 80 columns. Two rows of them (160 CTAs): 66 columns fill
  // one wave; the last 14 (28 CTAs) split K 4 ways over the 104 SMs left (112 CTAs <= 132).
  MmaTailSplit t = mma_tail_split(ws, 80, 2, 1, 64, d);
  EXPECT_EQ(66, t.main_x);
  EXPECT_EQ(4, t.splits);
  t = mma_tail_split(ws, 80, 4, 1, 64, d);  // 320 CTAs: two waves, 56 left, 2 splits
  EXPECT_EQ(66, t.main_x);
  EXPECT_EQ(2, t.splits);
  EXPECT_EQ(1, mma_tail_split(ws, 64, 2, 1, 64, d).splits) << "128 CTAs: no partial wave";
  EXPECT_EQ(1, mma_tail_split(ws, 66, 2, 1, 64, d).splits) << "exactly one wave";
  EXPECT_EQ(1, mma_tail_split(ws, 64, 4, 1, 64, d).splits) << "256 CTAs: 124 left, no room";
  EXPECT_EQ(1, mma_tail_split(ws, 80, 2, 2, 64, d).splits) << "K already split";
  EXPECT_EQ(1, mma_tail_split(ws, 2, 200, 1, 64, d).splits) << "more token tiles than SMs";
  EXPECT_EQ(4, mma_tail_split(ws, 80, 2, 1, 24, d).splits) << "3072 K saved per CTA";
  EXPECT_EQ(1, mma_tail_split(ws, 80, 2, 1, 16, d).splits)
      << "1536 K saved: less than the second launch costs";
  EXPECT_EQ(1, mma_tail_split(entry_for(*plan, 1).config, 500, 1, 1, 64, d).splits)
      << "decode tiles run several CTAs per SM and stay one launch";
}

}  // namespace
}  // namespace qgemm
