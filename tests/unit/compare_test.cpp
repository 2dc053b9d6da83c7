#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "qgemm/reference.h"

namespace qgemm {
namespace {

TEST(Compare, MeasuresRelativeAndAbsoluteError) {
  const Comparison same = compare({1.0, -2.0, 3.0}, {1.0, -2.0, 3.0});
  EXPECT_EQ(0.0, same.rel_frobenius);
  EXPECT_EQ(0.0, same.max_abs_error);
  EXPECT_EQ(3, same.count);
  EXPECT_TRUE(same.within(0.0));

  const Comparison off = compare({3.0, 4.0}, {3.0, 5.0});
  EXPECT_DOUBLE_EQ(0.2, off.rel_frobenius) << "||(0, 1)|| / ||(3, 4)||";
  EXPECT_EQ(1.0, off.max_abs_error);
  EXPECT_EQ(0, off.nan_count);
  EXPECT_TRUE(off.within(0.2));
  EXPECT_FALSE(off.within(0.19));

  const Comparison nan =
      compare({1.0, 2.0, 3.0}, {1.0, std::nan(""), std::numeric_limits<double>::infinity()});
  EXPECT_EQ(2, nan.nan_count);
  EXPECT_FALSE(nan.within(1e9));

  const Comparison sizes = compare({1.0, 2.0}, {1.0});
  EXPECT_FALSE(sizes.within(1e9)) << "a size mismatch never passes";

  const Comparison zero_ref = compare({0.0, 0.0}, {0.0, 1e-3});
  EXPECT_DOUBLE_EQ(1e-3, zero_ref.rel_frobenius) << "absolute norm when the reference is 0";
}

TEST(Compare, ToleranceForOutputTypes) {
  EXPECT_EQ(5e-3, tolerance_for(DType::bf16(), DType::bf16()));
  EXPECT_EQ(2e-3, tolerance_for(DType::fp16(), DType::bf16()));
  EXPECT_EQ(5e-4, tolerance_for(DType::fp32(), DType::fp16()));
  EXPECT_EQ(3e-3, tolerance_for(DType::fp32(), DType::bf16()));
}

}  // namespace
}  // namespace qgemm
