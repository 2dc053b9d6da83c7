// The host side of TMA stage copies: which configs get tensor maps, and the errors for
// activations TMA cannot read (checked before the driver is needed, so on any machine).
#include <gtest/gtest.h>

#include <cstring>

#include "jit/tma_maps.h"
#include "plan/jit_kernel_plan.h"
#include "plan/mma_launch.h"
#include "families/dense_expand.h"
#include "qgemm/device.h"
#include "backend/device_presets.h"

namespace qgemm {
namespace {

MmaGemmConfig config(const char* tile) {
  auto c = mma_config_for(*MmaTile::parse(tile), *WeightFormat::parse("int4/g128/bf16"),
                          DType::bf16(), DType::bf16(), *device_preset("h200"));
  EXPECT_TRUE(c.ok()) << c.status().to_string();
  return c.ok() ? *c : MmaGemmConfig{};
}

TEST(TmaMaps, ConfigsWithoutTmaGetZeroFilledMaps) {
  MmaGemmParams p{};
  MmaGemmMaps maps;
  std::memset(&maps, 0xab, sizeof(maps));
  ASSERT_TRUE(encode_tma_maps(config("w8x1 t1 f32 s6 k64 waves1 ws ps"), p, &maps).ok());
  const MmaGemmMaps zero{};
  EXPECT_EQ(0, std::memcmp(&maps, &zero, sizeof(maps)));
}

TEST(TmaMaps, ActivationsTmaCannotReadAreClearErrors) {
  const MmaGemmConfig c = config("w8x1 t1 f32 s6 k64 waves1 ws ps tma");
  alignas(16) static const u16 rows[64] = {};
  MmaGemmParams p{};
  p.a = rows + 1;  // 2-byte aligned rows
  p.m = 2, p.k = 16, p.lda = 16;
  MmaGemmMaps maps;
  Status s = encode_tma_maps(c, p, &maps);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("needs 16-byte aligned rows"), std::string::npos) << s.to_string();
  p.a = rows, p.lda = 12;  // rows 24 bytes apart
  s = encode_tma_maps(c, p, &maps);
  EXPECT_NE(s.message().find("lda=12"), std::string::npos) << s.to_string();
  p.lda = 16, p.m = 0;
  s = encode_tma_maps(c, p, &maps);
  EXPECT_NE(s.message().find("rows=0"), std::string::npos) << s.to_string();
  // Gathered tiles count A's rows apart from the token positions, and experts of a stack.
  MmaGemmConfig gathered = c;
  gathered.gathered = true;
  ASSERT_TRUE(gathered.validate().ok());
  p.m = 5;
  s = encode_tma_maps(gathered, p, &maps, /*a_rows=*/0, /*experts=*/4);
  EXPECT_NE(s.message().find("rows=0"), std::string::npos) << s.to_string();
  s = encode_tma_maps(gathered, p, &maps, /*a_rows=*/3, /*experts=*/0);
  EXPECT_NE(s.message().find("experts=0"), std::string::npos) << s.to_string();
}

}  // namespace
}  // namespace qgemm
