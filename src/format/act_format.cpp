#include <cctype>

#include "format/spec_parts.h"
#include "qgemm/format.h"
#include "util/error.h"

namespace qgemm {
namespace {

constexpr const char* kActSpecHelp =
    "activation specs are bf16, fp16, or <8-bit type>/token, <8-bit type>/tensor, "
    "<8-bit type>/g<G>[/<scale type>][/global], e.g. e4m3/token, e4m3/g32/ue8m0 (alias mxfp8), "
    "e4m3/g128/fp32, int8/token, e2m1/g16/e4m3/global (alias nvfp4)";

Status bad_act_part(std::string_view spec, std::string_view part, std::string_view why) {
  return spec::bad_part("activation", spec, part, why, kActSpecHelp);
}

}  // namespace

const std::vector<FormatAlias>& act_aliases() {
  static const std::vector<FormatAlias> aliases = {
      {"mxfp8", "e4m3/g32/ue8m0"},       {"fp8_token", "e4m3/token"},
      {"fp8_g128", "e4m3/g128/fp32"},    {"int8_token", "int8/token"},
      {"nvfp4", "e2m1/g16/e4m3/global"},
  };
  return aliases;
}

Expected<ActFormat> ActFormat::parse(std::string_view text) {
  auto split = spec::split_spec(text, act_aliases(), "activation", kActSpecHelp);
  if (!split) return split.status();
  const std::string_view spec = split->text;
  const std::vector<std::string_view>& parts = split->parts;
  ActFormat f;
  f.type = split->type;
  bool have_scale_type = false;
  for (size_t i = 1; i < parts.size(); ++i) {
    std::string_view p = parts[i];
    if (p == "token" || p == "tensor" ||
        (p.size() > 1 && p[0] == 'g' && std::isdigit(static_cast<unsigned char>(p[1])))) {
      if (f.scale_kind != ActScaleKind::kNone) return bad_act_part(spec, p, "second granularity");
      if (p == "token") {
        f.scale_kind = ActScaleKind::kToken;
      } else if (p == "tensor") {
        f.scale_kind = ActScaleKind::kTensor;
      } else {
        auto g = spec::positive_int(p.substr(1));
        if (!g) return bad_act_part(spec, p, "group size must be a positive integer, got");
        f.scale_kind = ActScaleKind::kGroup;
        f.group_k = *g;
      }
    } else if (p == "global") {
      if (f.global_scale) return bad_act_part(spec, p, "second global scale");
      f.global_scale = true;
    } else if (auto st = parse_dtype(p)) {
      if (have_scale_type) return bad_act_part(spec, p, "second scale type");
      if (f.scale_kind == ActScaleKind::kNone)
        return bad_act_part(spec, p, "a scale type needs a granularity before it, got");
      f.scale_type = *st;
      have_scale_type = true;
    } else {
      return bad_act_part(spec, p, "unknown part");
    }
  }
  // Groups without a scale type: ue8m0 in groups of 32 (OCP MX), fp32 otherwise.
  if (f.scale_kind == ActScaleKind::kGroup && !have_scale_type)
    f.scale_type = f.group_k == 32 ? DType::ue8m0() : DType::fp32();
  if (Status s = f.validate(); !s.ok()) return spec::invalid_format("activation", spec, s);
  return f;
}

Status ActFormat::validate() const {
  const bool wide = type == DType::fp16() || type == DType::bf16();
  if (wide && is_quantized())
    return invalid_argument(str(type.name(), " activations take no scale"));
  if (!wide && (type.bits > 8 || type.type_class == TypeClass::kExponent))
    return invalid_argument(str("activation type ", type.name(),
                                " is not supported; accepted: bf16, fp16, e4m3, e5m2, int8 and "
                                "other 1..8-bit int or eXmY types with a scale"));
  if (!wide && !is_quantized())
    return invalid_argument(
        str(type.name(), " activations need a scale: add /token, /tensor or /g<G>/<type>"));
  if (scale_kind == ActScaleKind::kGroup && group_k <= 0)
    return invalid_argument(str("group size ", group_k, " must be positive"));
  if (is_quantized() &&
      !(scale_type == DType::fp32() || scale_type == DType::fp16() || scale_type == DType::bf16() ||
        scale_type == DType::ue8m0() || scale_type == DType::e4m3()))
    return invalid_argument(str("activation scale type ", scale_type.name(),
                                " is not supported; accepted: fp32, fp16, bf16, ue8m0, e4m3"));
  if ((scale_kind == ActScaleKind::kToken || scale_kind == ActScaleKind::kTensor) &&
      scale_type != DType::fp32())
    return invalid_argument("per-token and per-tensor activation scales are fp32");
  if (global_scale && !(scale_kind == ActScaleKind::kGroup &&
                        (scale_type == DType::e4m3() || scale_type == DType::e5m2() ||
                         scale_type == DType::fp16())))
    return invalid_argument(
        "a /global activation scale sits above group scales of type e4m3, e5m2 or fp16");
  if (global_scale && !type.is_float())
    return invalid_argument(str("a /global activation scale needs float codes, not ", type.name()));
  return Status();
}

std::string ActFormat::to_string() const {
  switch (scale_kind) {
    case ActScaleKind::kNone:
      return type.name();
    case ActScaleKind::kToken:
      return type.name() + "/token";
    case ActScaleKind::kTensor:
      return type.name() + "/tensor";
    case ActScaleKind::kGroup:
      return str(type.name(), "/g", group_k, "/", scale_type.name(), global_scale ? "/global" : "");
  }
  return type.name();
}

std::string ActFormat::alias() const { return spec::alias_name(act_aliases(), to_string()); }

int64_t ActFormat::scale_cols(int64_t k) const {
  switch (scale_kind) {
    case ActScaleKind::kNone:
      return 0;
    case ActScaleKind::kGroup:
      return (k + group_k - 1) / group_k;
    default:
      return 1;
  }
}

int64_t ActFormat::scale_col(int64_t k) const {
  return scale_kind == ActScaleKind::kGroup ? k / group_k : 0;
}

Status ActFormat::check_shape(int64_t k) const {
  if (k <= 0) return invalid_argument(str("K=", k, " must be positive"));
  if (scale_kind == ActScaleKind::kGroup && k % group_k != 0)
    return invalid_argument(str("K=", k, " is not a multiple of the group size ", group_k,
                                " of activation format ", to_string()));
  return Status();
}

const std::vector<Recipe>& recipes() {
  static const std::vector<Recipe> list = {
      {"w4a16", "int4/g128/fp16", "fp16", "GPTQ-style symmetric int4, group 128"},
      {"w4a16_zp", "uint4/g128/fp16/zp", "fp16", "AWQ-style uint4 with zero points, group 128"},
      {"mxfp4", "e2m1/g32/ue8m0", "bf16", "OCP MXFP4 weights, bf16 activations"},
      {"mxfp4_mxfp8", "e2m1/g32/ue8m0", "e4m3/g32/ue8m0", "MXFP4 weights x MXFP8 activations"},
      {"nvfp4", "e2m1/g16/e4m3/global", "bf16", "NVFP4 weights, bf16 activations"},
      {"mxfp8", "e4m3/g32/ue8m0", "e4m3/g32/ue8m0", "MXFP8 weights and activations"},
      {"fp8_block", "e4m3/b128x128/fp32", "e4m3/g128/fp32",
       "DeepSeek-style FP8: 128x128 weight blocks, 1x128 activation groups"},
      {"fp8_channel", "e4m3/channel/fp32", "e4m3/token", "FP8 per-channel x per-token"},
      {"nvfp4_nvfp4", "e2m1/g16/e4m3/global", "e2m1/g16/e4m3/global",
       "NVFP4 weights and activations"},
      {"w4a8", "int4/g128/bf16", "e4m3/token", "int4 weights x FP8 activations"},
      {"w4a8_fp4", "e2m1/g32/ue8m0", "e4m3/token", "e2m1 weights x FP8 activations"},
      {"w8a8_int8", "int8/channel/fp32", "int8/token", "SmoothQuant-style int8 x int8"},
  };
  return list;
}

}  // namespace qgemm
