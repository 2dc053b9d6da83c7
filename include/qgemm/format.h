#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "qgemm/dtype.h"
#include "qgemm/status.h"

namespace qgemm {

/// Which weights share one scale.
enum class ScaleKind : uint8_t {
  kNone,     ///< no scale: w = code
  kTensor,   ///< one scale per tensor (per expert)
  kChannel,  ///< one per output channel n
  kGroup,    ///< one per (n, group of `group_k` consecutive k)
  kBlock,    ///< one per (group_n x group_k) block
};

/// How zero points are stored (uint weights only): w = (code - z) * scale.
enum class ZeroPointKind : uint8_t {
  kNone,
  kInteger,  ///< z is an integer code of the weight type (GPTQ / AWQ)
  kFloat,    ///< z is a real number stored as `zero_type` (fp16, bf16 or fp32)
};

/// A weight format, written as
/// `<type>[/g<G>|/channel|/b<GN>x<GK>|/tensor][/<scale>][/zp][/global]`.
///
///   w[n, k] = global * scale[row(n), col(k)] * (code[n, k] - zero[row(n), col(k)])
///
/// Examples: `int4/g128/fp16`, `uint4/g128/fp16/zp`, `e2m1/g32/ue8m0` (alias `mxfp4`),
/// `e2m1/g16/e4m3/global` (alias `nvfp4`), `e4m3/b128x128/fp32`, `int8/channel/bf16`.
struct WeightFormat {
  DType type = DType::int_bits(4);
  ScaleKind scale_kind = ScaleKind::kNone;
  int group_k = 0;  ///< kGroup: the group size along K; kBlock: the block's K extent
  int group_n = 0;  ///< kBlock: the block's N extent
  DType scale_type = DType::fp32();
  ZeroPointKind zero_point = ZeroPointKind::kNone;
  DType zero_type = DType::fp32();  ///< kFloat zero points only
  bool global_scale = false;        ///< an extra fp32 scale per tensor (per expert)

  /// Parses a spec or an alias; errors name the bad part and what is accepted. A scale
  /// granularity without a scale type takes default_scale_type().
  static Expected<WeightFormat> parse(std::string_view spec);
  /// The scale type a spec that names none gets: fp16 for integer codes (GPTQ, AWQ), ue8m0 for
  /// float codes in groups of 32 (OCP MX), fp32 for other float codes.
  static DType default_scale_type(const WeightFormat& format);
  /// The canonical spec: parse(to_string()) == *this, and canonical input prints unchanged.
  std::string to_string() const;
  /// The alias this format is known by ("mxfp4", ...), or "".
  std::string alias() const;
  /// Checks the combination of parts (types allowed, zero points only on uint, ...).
  Status validate() const;

  bool has_scales() const { return scale_kind != ScaleKind::kNone; }
  bool has_zero_points() const { return zero_point != ZeroPointKind::kNone; }
  /// Group or block scales: a scale per group_k columns of K.
  bool has_group_scales() const {
    return scale_kind == ScaleKind::kGroup || scale_kind == ScaleKind::kBlock;
  }
  /// Shape of the per-expert scale (and zero-point) matrix for an [n, k] weight.
  int64_t scale_rows(int64_t n) const;
  int64_t scale_cols(int64_t k) const;
  int64_t scale_row(int64_t n) const;
  int64_t scale_col(int64_t k) const;
  /// Rejects shapes the format cannot describe (K not a multiple of the group size, ...).
  Status check_shape(int64_t n, int64_t k) const;

  friend bool operator==(const WeightFormat&, const WeightFormat&) = default;
};

/// How activations are scaled along a row.
enum class ActScaleKind : uint8_t {
  kNone,    ///< fp16 / bf16 activations
  kToken,   ///< one fp32 scale per row (token)
  kGroup,   ///< one per (row, group of `group_k` consecutive k)
  kTensor,  ///< one fp32 scale for the whole matrix
};

/// An activation format: `bf16`, `fp16`, `e4m3/token`, `e4m3/g32/ue8m0` (alias `mxfp8`),
/// `e4m3/g128/fp32`, `int8/token`, `e4m3/tensor`, `e2m1/g16/e4m3/global` (alias `nvfp4`).
/// a[m, k] = global * scale[m, col(k)] * code[m, k]. Token and tensor scales are fp32; group
/// scales without a type are ue8m0 in groups of 32 (`e4m3/g32` = `mxfp8`), fp32 otherwise. A
/// `/global` fp32 scale per tensor sits above group scales of a narrow type (e4m3, e5m2, fp16).
struct ActFormat {
  DType type = DType::bf16();
  ActScaleKind scale_kind = ActScaleKind::kNone;
  int group_k = 0;
  DType scale_type = DType::fp32();
  bool global_scale = false;

  static Expected<ActFormat> parse(std::string_view spec);
  std::string to_string() const;
  std::string alias() const;
  Status validate() const;

  bool is_quantized() const { return scale_kind != ActScaleKind::kNone; }
  int64_t scale_cols(int64_t k) const;
  int64_t scale_col(int64_t k) const;
  Status check_shape(int64_t k) const;

  friend bool operator==(const ActFormat&, const ActFormat&) = default;
};

/// A named weight x activation pairing users ask for ("w4a16", "fp8-block", ...).
struct Recipe {
  std::string name;
  std::string weight;
  std::string act;
  std::string description;
};

/// Every named recipe, in listing order.
const std::vector<Recipe>& recipes();

/// A spec alias and what it stands for.
struct FormatAlias {
  std::string name;
  std::string spec;
};
const std::vector<FormatAlias>& weight_aliases();
const std::vector<FormatAlias>& act_aliases();

}  // namespace qgemm
