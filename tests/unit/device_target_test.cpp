// How a GPU is described to the planner and the compiler (no GPU needed): QGEMM_TARGET_ARCH
// runs an older target's kernels on a newer GPU, and GPUs newer than every target run the sm_80
// kernels; both as PTX that the driver finishes.
#include "backend/device_target.h"
#include "backend/device_presets.h"

#include <gtest/gtest.h>

namespace qgemm {
namespace {

DeviceInfo hand_made(const char* name, int major, int minor, int64_t smem) {
  DeviceInfo d = *device_preset("h200");
  d.name = name;
  d.sm_major = major;
  d.sm_minor = minor;
  d.smem_per_block = smem;
  return d;
}

TEST(DeviceTarget, AnOlderTargetDescribesTheGpuAsThatTarget) {
  DeviceInfo d = *device_preset("h200");
  ASSERT_TRUE(describe_as_kernel_target(d, "sm_75"));
  EXPECT_EQ("sm_75", d.arch());
  EXPECT_EQ(64 << 10, d.smem_per_block) << "at most the target's shared memory";
  EXPECT_EQ("NVIDIA H200 (as sm_75)", d.name);
  EXPECT_EQ(132, d.multiprocessors) << "the rest stays the GPU's";
}

TEST(DeviceTarget, NoTargetOrOneNotOlderLeavesTheGpuAlone) {
  for (const char* target : {static_cast<const char*>(nullptr), "", "sm_90a", "h200", "sm_7"}) {
    DeviceInfo d = *device_preset("h200");
    EXPECT_FALSE(describe_as_kernel_target(d, target)) << (target ? target : "null");
    EXPECT_EQ("sm_90a", d.arch());
    EXPECT_EQ("NVIDIA H200", d.name);
  }
  DeviceInfo a100 = *device_preset("sm_80");
  EXPECT_FALSE(describe_as_kernel_target(a100, "sm_89")) << "newer than the GPU";
  EXPECT_EQ("sm_80", a100.arch());
}

TEST(DeviceTarget, GpusNewerThanEveryTargetRunTheSm80Kernels) {
  DeviceInfo b200 = hand_made("hand-made sm_100", 10, 0, 227 << 10);
  ASSERT_TRUE(describe_as_kernel_target(b200, nullptr));
  EXPECT_EQ("sm_80", b200.arch());
  EXPECT_EQ(227 << 10, b200.smem_per_block) << "its own shared memory";
  EXPECT_EQ("hand-made sm_100 (as sm_80)", b200.name);

  DeviceInfo rtx = hand_made("hand-made sm_120", 12, 0, 99 << 10);
  ASSERT_TRUE(describe_as_kernel_target(rtx, "sm_75"));
  EXPECT_EQ("sm_75", rtx.arch());
  EXPECT_EQ(64 << 10, rtx.smem_per_block);
}

}  // namespace
}  // namespace qgemm
