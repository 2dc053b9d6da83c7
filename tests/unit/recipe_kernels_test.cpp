// The kernels `qgemm bench` compiles up front for a recipe (bench/lib/recipe_kernels): every
// kernel its dense and MoE problems' layers prepare, each once, and why a problem has none.
#include "bench/lib/recipe_kernels.h"

#include <gtest/gtest.h>

#include <string>

#include "backend/device_presets.h"
#include "bench/lib/recipe.h"

namespace qgemm::bench {
namespace {

constexpr const char* kRecipe = R"(name: kernels
backends: [jit]
problems:
  - {name: dense, m: [1, 4096], n: 4096, k: 4096, weight: int4/g128/bf16}
  - {name: dense again, m: [1, 4096], n: 4096, k: 4096, weight: int4/g128/bf16}
  - {name: moe, m: [1, 64], n: 1024, k: 2048, experts: 16, top_k: 4, weight: int4/g128/bf16}
  - {name: moe fp8, m: [1, 64], n: 1024, k: 2048, experts: 16, top_k: 4,
     weight: e4m3/channel/fp32, act: e4m3/token}
  - {name: moe fp8 tensor, m: [1], n: 1024, k: 2048, experts: 16, top_k: 4,
     weight: e4m3/channel/fp32, act: e4m3/tensor}
  - {name: dense fp8, m: [1], n: 1024, k: 2048, weight: e4m3/channel/fp32, act: e4m3/token}
)";

int count(const RecipeKernels& k, const std::string& family, const std::string& part) {
  int n = 0;
  for (const KernelSpec& s : k.specs)
    n += s.family == family && s.config.find(part) != std::string::npos;
  return n;
}

TEST(RecipeKernels, EveryKernelOnceAndWhyNone) {
  auto recipe = parse_recipe(kRecipe, "test");
  ASSERT_TRUE(recipe.ok()) << recipe.status().to_string();
  const RecipeKernels k = recipe_kernels(*recipe, *device_preset("h200"));
  // The repeated dense problem adds nothing; the tile list is one kernel for both MoE problems.
  for (size_t i = 0; i < k.specs.size(); ++i)
    for (size_t j = i + 1; j < k.specs.size(); ++j)
      EXPECT_FALSE(k.specs[i].source == k.specs[j].source && k.specs[i].arch == k.specs[j].arch)
          << k.specs[i].config;
  EXPECT_EQ(count(k, "moe_grouped", "tiles"), 1);
  EXPECT_GE(count(k, "moe_grouped", " moe"), 2);  // 16-bit gathered tiles and 8-bit ones
  // 64 tokens x top 4 = 256 rows at most per expert: the 8-bit tiles of 8 .. 128 rows.
  EXPECT_EQ(count(k, "moe_grouped", "e4m3 w:channel a:token"), 5);
  EXPECT_GE(count(k, "dense_wgmma", "") + count(k, "dense_mma", ""), 1);
  ASSERT_EQ(k.skipped.size(), 2u);
  EXPECT_NE(k.skipped[0].find("moe fp8 tensor"), std::string::npos) << k.skipped[0];
  EXPECT_NE(k.skipped[0].find("tensor scale"), std::string::npos) << k.skipped[0];
  EXPECT_NE(k.skipped[1].find("dense fp8"), std::string::npos) << k.skipped[1];
}

}  // namespace
}  // namespace qgemm::bench
