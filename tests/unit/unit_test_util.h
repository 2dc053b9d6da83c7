#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include "qgemm/dtype.h"
#include "qgemm/status.h"

namespace qgemm::testing {

/// The repository root: the nearest directory at or above the working directory with
/// bench/recipes in it, or an empty path.
inline std::filesystem::path repo_root() {
  for (auto dir = std::filesystem::current_path();; dir = dir.parent_path()) {
    if (std::filesystem::is_directory(dir / "bench" / "recipes")) return dir;
    if (dir == dir.parent_path()) return {};
  }
}

/// Expects `r` to be an invalid-argument error whose message contains `part`.
template <typename T>
void expect_error(const Expected<T>& r, const std::string& part) {
  ASSERT_FALSE(r.ok()) << "expected an error containing '" << part << "'";
  EXPECT_EQ(ErrorCode::kInvalidArgument, r.status().code());
  EXPECT_NE(std::string::npos, r.status().message().find(part))
      << "message '" << r.status().message() << "' lacks '" << part << "'";
}

/// Half the distance to the neighbouring values of `type` around y (in code units): how far
/// rounding to the nearest code may move y.
inline double half_step(DType type, double y) {
  if (type.is_int()) return 0.5;
  const int min_exp = 1 - type.exponent_bias();
  const int exp = y == 0 ? min_exp : std::max(int(std::floor(std::log2(std::fabs(y)))), min_exp);
  return 0.5 * std::ldexp(1.0, exp - type.man_bits);
}

/// A test name for a parameter with a format spec ("int4/g128/fp16" -> "int4_g128_fp16").
template <typename ParamInfo>
std::string spec_test_name(const ParamInfo& info) {
  std::string name = info.param.spec;
  std::replace(name.begin(), name.end(), '/', '_');
  return name;
}

/// Expects a quantized tensor to pass its own validation and to carry `format`.
template <typename Quantized, typename Format>
void expect_valid_in_format(const Quantized& q, const Format& format) {
  EXPECT_TRUE(q.validate().ok()) << q.validate().to_string();
  EXPECT_EQ(format, q.format);
}

}  // namespace qgemm::testing
