#include <algorithm>
#include <cctype>

#include "format/spec_parts.h"
#include "qgemm/format.h"
#include "util/error.h"

namespace qgemm {
namespace {

constexpr const char* kWeightSpecHelp =
    "weight specs look like <type>[/g<G>|/channel|/b<GN>x<GK>|/tensor][/<scale type>][/zp]"
    "[/global], e.g. int4/g128/fp16, uint4/g128/fp16/zp, e2m1/g16/e4m3/global, or an alias "
    "(mxfp4, nvfp4, mxfp6_e2m3, mxfp6_e3m2, mxfp8, fp8_block, fp8_channel)";

constexpr const char* kScaleTypes = "fp16, bf16, fp32, e4m3, e5m2, ue8m0";

bool is_scale_type(DType t) {
  return t == DType::fp16() || t == DType::bf16() || t == DType::fp32() || t == DType::e4m3() ||
         t == DType::e5m2() || t == DType::ue8m0();
}

// Weight rows (along N) that share one scale; 0 when one scale spans them all, or there is none.
int rows_per_scale(const WeightFormat& f) {
  if (f.scale_kind == ScaleKind::kBlock) return f.group_n;
  return f.scale_kind == ScaleKind::kChannel || f.scale_kind == ScaleKind::kGroup ? 1 : 0;
}

// Weight columns (along K) that share one scale; 0 when one scale spans them all, or there is
// none.
int cols_per_scale(const WeightFormat& f) { return f.has_group_scales() ? f.group_k : 0; }

// Scales along an axis of `extent` elements, `per_scale` of which share one (0: one for all).
int64_t scales_along(int64_t extent, int per_scale) {
  return per_scale == 0 ? 1 : (extent + per_scale - 1) / per_scale;
}

// The scale that element `index` of an axis reads, `per_scale` elements sharing one.
int64_t scale_index(int64_t index, int per_scale) { return per_scale == 0 ? 0 : index / per_scale; }

Status bad_part(std::string_view spec, std::string_view part, std::string_view why) {
  return spec::bad_part("weight", spec, part, why, kWeightSpecHelp);
}

}  // namespace

const std::vector<FormatAlias>& weight_aliases() {
  static const std::vector<FormatAlias> aliases = {
      {"mxfp4", "e2m1/g32/ue8m0"},          {"nvfp4", "e2m1/g16/e4m3/global"},
      {"mxfp6_e2m3", "e2m3/g32/ue8m0"},     {"mxfp6_e3m2", "e3m2/g32/ue8m0"},
      {"mxfp8", "e4m3/g32/ue8m0"},          {"fp8_block", "e4m3/b128x128/fp32"},
      {"fp8_channel", "e4m3/channel/fp32"},
  };
  return aliases;
}

DType WeightFormat::default_scale_type(const WeightFormat& f) {
  // Integer codes: fp16, as GPTQ and AWQ store them. Float codes: ue8m0 in groups of 32 (OCP
  // MX), fp32 otherwise.
  if (f.type.is_int()) return DType::fp16();
  if (f.scale_kind == ScaleKind::kGroup && f.group_k == 32) return DType::ue8m0();
  return DType::fp32();
}

Expected<WeightFormat> WeightFormat::parse(std::string_view text) {
  auto split = spec::split_spec(text, weight_aliases(), "weight", kWeightSpecHelp);
  if (!split) return split.status();
  const std::string_view spec = split->text;
  bool have_scale_type = false;
  WeightFormat f;
  f.type = split->type;
  const std::vector<std::string_view>& parts = split->parts;
  for (size_t i = 1; i < parts.size(); ++i) {
    std::string_view p = parts[i];
    const bool granularity_part = p == "channel" || p == "tensor" ||
                                  (p.size() > 1 && (p[0] == 'g' || p[0] == 'b') &&
                                   std::isdigit(static_cast<unsigned char>(p[1])));
    if (granularity_part) {
      if (f.scale_kind != ScaleKind::kNone) return bad_part(spec, p, "second scale granularity");
      if (have_scale_type || f.has_zero_points() || f.global_scale)
        return bad_part(spec, p, "scale granularity must come right after the type, not");
      if (p == "channel") {
        f.scale_kind = ScaleKind::kChannel;
      } else if (p == "tensor") {
        f.scale_kind = ScaleKind::kTensor;
      } else if (p[0] == 'g') {
        auto g = spec::positive_int(p.substr(1));
        if (!g) return bad_part(spec, p, "group size must be a positive integer, got");
        f.scale_kind = ScaleKind::kGroup;
        f.group_k = *g;
      } else {
        const auto dims = spec::split(p.substr(1), 'x');
        auto gn = dims.size() == 2 ? spec::positive_int(dims[0]) : std::nullopt;
        auto gk = dims.size() == 2 ? spec::positive_int(dims[1]) : std::nullopt;
        if (!gn || !gk) return bad_part(spec, p, "block scales are written b<GN>x<GK>, got");
        f.scale_kind = ScaleKind::kBlock;
        f.group_n = *gn;
        f.group_k = *gk;
      }
    } else if (p == "zp") {
      if (f.has_zero_points()) return bad_part(spec, p, "repeated");
      f.zero_point = ZeroPointKind::kInteger;
    } else if (p.substr(0, 3) == "zp_") {
      if (f.has_zero_points()) return bad_part(spec, p, "repeated");
      auto zt = parse_dtype(p.substr(3));
      if (!zt || !(*zt == DType::fp16() || *zt == DType::bf16() || *zt == DType::fp32()))
        return bad_part(spec, p, "float zero points are zp_fp16, zp_bf16 or zp_fp32, got");
      f.zero_point = ZeroPointKind::kFloat;
      f.zero_type = *zt;
    } else if (p == "global") {
      if (f.global_scale) return bad_part(spec, p, "repeated");
      f.global_scale = true;
    } else if (auto st = parse_dtype(p)) {
      if (have_scale_type) return bad_part(spec, p, "second scale type");
      if (f.has_zero_points() || f.global_scale)
        return bad_part(spec, p, "scale type must come before /zp and /global, not");
      f.scale_type = *st;
      have_scale_type = true;
    } else {
      return bad_part(spec, p, "unknown part");
    }
  }
  if (f.has_scales() && !have_scale_type) f.scale_type = default_scale_type(f);
  if (!f.has_scales() && have_scale_type)
    return invalid_argument(str("weight spec '", spec, "': a scale type needs a granularity ",
                                "(/g<G>, /channel, /b<GN>x<GK> or /tensor) before it"));
  if (Status s = f.validate(); !s.ok()) return spec::invalid_format("weight", spec, s);
  return f;
}

Status WeightFormat::validate() const {
  if (type.bits > 8 || type.type_class == TypeClass::kExponent)
    return invalid_argument(str("weight type ", type.name(), " is not supported; accepted: ",
                                "int1..int8, uint1..uint8, e2m1, e2m3, e3m2, e4m3, e5m2"));
  if (has_scales() && !is_scale_type(scale_type))
    return invalid_argument(
        str("scale type ", scale_type.name(), " is not supported; accepted: ", kScaleTypes));
  if (has_group_scales() && group_k <= 0)
    return invalid_argument(str("group size ", group_k, " must be positive"));
  if (scale_kind == ScaleKind::kBlock && group_n <= 0)
    return invalid_argument(str("block height ", group_n, " must be positive"));
  if (has_zero_points() && type.type_class != TypeClass::kUnsignedInt)
    return invalid_argument(str("zero points need an unsigned integer weight type (uint1..uint8)",
                                ", not ", type.name()));
  if (has_zero_points() && !has_scales())
    return invalid_argument("zero points need a scale granularity");
  if (zero_point == ZeroPointKind::kFloat &&
      !(zero_type == DType::fp16() || zero_type == DType::bf16() || zero_type == DType::fp32()))
    return invalid_argument(str("float zero point type ", zero_type.name(),
                                " is not supported; accepted: fp16, bf16, fp32"));
  if (global_scale && (scale_kind == ScaleKind::kNone || scale_kind == ScaleKind::kTensor))
    return invalid_argument(
        "a /global scale needs channel, group or block scales under it (a tensor scale alone is "
        "already global)");
  return Status();
}

std::string WeightFormat::to_string() const {
  std::string s = type.name();
  switch (scale_kind) {
    case ScaleKind::kNone:
      return s;
    case ScaleKind::kTensor:
      s += "/tensor";
      break;
    case ScaleKind::kChannel:
      s += "/channel";
      break;
    case ScaleKind::kGroup:
      s += str("/g", group_k);
      break;
    case ScaleKind::kBlock:
      s += str("/b", group_n, "x", group_k);
      break;
  }
  s += "/" + scale_type.name();
  if (zero_point == ZeroPointKind::kInteger) s += "/zp";
  if (zero_point == ZeroPointKind::kFloat) s += "/zp_" + zero_type.name();
  if (global_scale) s += "/global";
  return s;
}

std::string WeightFormat::alias() const { return spec::alias_name(weight_aliases(), to_string()); }

int64_t WeightFormat::scale_rows(int64_t n) const {
  return has_scales() ? scales_along(n, rows_per_scale(*this)) : 0;
}

int64_t WeightFormat::scale_cols(int64_t k) const {
  return has_scales() ? scales_along(k, cols_per_scale(*this)) : 0;
}

int64_t WeightFormat::scale_row(int64_t n) const { return scale_index(n, rows_per_scale(*this)); }

int64_t WeightFormat::scale_col(int64_t k) const { return scale_index(k, cols_per_scale(*this)); }

Status WeightFormat::check_shape(int64_t n, int64_t k) const {
  if (n <= 0 || k <= 0)
    return invalid_argument(str("weight shape N=", n, ", K=", k, " must be positive"));
  if (has_group_scales() && k % group_k != 0)
    return invalid_argument(str("K=", k, " is not a multiple of the group size ", group_k,
                                " of weight format ", to_string()));
  return Status();
}

}  // namespace qgemm
