#include "io/checkpoint.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "io/awq.h"
#include "io/float_weights.h"
#include "util/error.h"

namespace qgemm {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The quantization section of config.json, or an error naming the file.
Expected<json> quantization_section(const std::string& dir) {
  const fs::path config = fs::path(dir) / "config.json";
  std::ifstream in(config);
  if (!in)
    return Status(ErrorCode::kNotFound, str("checkpoint '", dir,
                                            "': no config.json to tell how "
                                            "its layers are quantized"));
  json j;
  try {
    j = json::parse(in);
  } catch (const json::exception& e) {
    return invalid_argument(str("checkpoint '", dir, "': config.json is not JSON: ", e.what()));
  }
  const auto q = j.is_object() ? j.find("quantization_config") : j.end();
  if (!j.is_object() || q == j.end() || !q->is_object())
    return unsupported(str("checkpoint '", dir,
                           "': config.json has no quantization_config; "
                           "an unquantized checkpoint is quantized with quantize_weights"));
  return *q;
}

template <typename T>
T value_or(const json& j, const char* key, T fallback) {
  const auto it = j.find(key);
  return it != j.end() && !it->is_null() ? it->get<T>() : fallback;
}

// compressed-tensors names its storage format at the top of the section or in each config
// group; "" when neither does.
std::string compressed_format(const json& section) {
  std::string format = value_or<std::string>(section, "format", "");
  const auto groups = section.find("config_groups");
  if (format.empty() && groups != section.end() && groups->is_object())
    for (const auto& [name, group] : groups->items())
      if (group.is_object() && format.empty()) format = value_or<std::string>(group, "format", "");
  return format;
}

// The weight arguments of a pack-quantized checkpoint: every config group must agree (one
// importer configuration per checkpoint).
Expected<PackQuantizedConfig> pack_quantized_config(const json& section, const std::string& dir) {
  const auto groups = section.find("config_groups");
  if (groups == section.end() || !groups->is_object() || groups->empty())
    return invalid_argument(str("checkpoint '", dir,
                                "': pack-quantized quantization_config has no "
                                "config_groups"));
  std::optional<PackQuantizedConfig> config;
  for (const auto& [name, group] : groups->items()) {
    const auto weights = group.is_object() ? group.find("weights") : group.end();
    if (!group.is_object() || weights == group.end() || !weights->is_object())
      return invalid_argument(
          str("checkpoint '", dir, "': config group '", name, "' has no weights arguments"));
    if (value_or<std::string>(*weights, "type", "int") != "int")
      return unsupported(str("checkpoint '", dir, "': config group '", name, "' packs ",
                             weights->dump(), "; pack-quantized is read for integer weights"));
    PackQuantizedConfig g;
    g.bits = value_or<int>(*weights, "num_bits", 4);
    g.symmetric = value_or<bool>(*weights, "symmetric", true);
    const std::string strategy = value_or<std::string>(*weights, "strategy", "group");
    if (strategy == "group") {
      g.group_size = value_or<int>(*weights, "group_size", 128);
      if (g.group_size <= 0)
        return invalid_argument(
            str("checkpoint '", dir, "': config group '", name, "' has group_size ", g.group_size));
    } else if (strategy != "channel") {
      return unsupported(str("checkpoint '", dir, "': config group '", name, "' has strategy '",
                             strategy, "'; pack-quantized is read for group and channel"));
    }
    if (config && (config->bits != g.bits || config->group_size != g.group_size ||
                   config->symmetric != g.symmetric))
      return unsupported(str("checkpoint '", dir, "': config groups quantize differently (",
                             groups->dump(), "); one scheme per checkpoint is read"));
    config = g;
  }
  return *config;
}

}  // namespace

const char* checkpoint_kind_name(CheckpointKind kind) {
  switch (kind) {
    case CheckpointKind::kGptq:
      return "GPTQ";
    case CheckpointKind::kAwq:
      return "AWQ";
    case CheckpointKind::kFp8:
      return "FP8";
    case CheckpointKind::kModelOptNvfp4:
      return "ModelOpt NVFP4";
    case CheckpointKind::kPackQuantized:
      return "compressed-tensors pack-quantized";
    case CheckpointKind::kCtNvfp4:
      return "compressed-tensors NVFP4";
    case CheckpointKind::kMxfp4Experts:
      return "MXFP4 experts";
  }
  return "?";
}

Expected<QuantizedCheckpoint> QuantizedCheckpoint::open(const std::string& path) {
  auto section = quantization_section(path);
  if (!section) return section.status();
  QuantizedCheckpoint c;
  try {
    const std::string method = value_or<std::string>(*section, "quant_method", "");
    if (method == "gptq") {
      c.kind = CheckpointKind::kGptq;
      c.gptq.bits = value_or<int>(*section, "bits", 4);
      c.gptq.group_size = value_or<int>(*section, "group_size", 128);
      c.gptq.desc_act = value_or<bool>(*section, "desc_act", false);
      c.gptq.v2 = value_or<std::string>(*section, "checkpoint_format", "gptq") == "gptq_v2";
    } else if (method == "awq") {
      c.kind = CheckpointKind::kAwq;
      if (value_or<int>(*section, "bits", 4) != 4 ||
          value_or<std::string>(*section, "version", "gemm") != "gemm")
        return unsupported(str("checkpoint '", path,
                               "': AWQ is read in its 4-bit GEMM layout, not ", section->dump()));
      c.awq_group_size = value_or<int>(*section, "group_size", 128);
    } else if (method == "fp8") {
      c.kind = CheckpointKind::kFp8;
      c.fp8_scale = "weight_scale_inv";
    } else if (method == "compressed-tensors" && compressed_format(*section) == "float-quantized") {
      c.kind = CheckpointKind::kFp8;
      c.fp8_scale = "weight_scale";
    } else if (method == "compressed-tensors" && compressed_format(*section) == "pack-quantized") {
      c.kind = CheckpointKind::kPackQuantized;
      auto config = pack_quantized_config(*section, path);
      if (!config) return config.status();
      c.pack = *config;
    } else if (method == "compressed-tensors" &&
               compressed_format(*section) == "nvfp4-pack-quantized") {
      c.kind = CheckpointKind::kCtNvfp4;
    } else if (method == "mxfp4") {
      c.kind = CheckpointKind::kMxfp4Experts;
    } else if (method == "modelopt" &&
               value_or<std::string>(*section, "quant_algo", "").find("NVFP4") !=
                   std::string::npos) {
      c.kind = CheckpointKind::kModelOptNvfp4;
    } else {
      return unsupported(str("checkpoint '", path, "': quantization ", section->dump(),
                             " has no importer; read are gptq, awq, fp8 (DeepSeek), "
                             "compressed-tensors float-quantized, pack-quantized and "
                             "nvfp4-pack-quantized, "
                             "mxfp4 (gpt-oss experts) and modelopt NVFP4"));
    }
  } catch (const json::exception& e) {
    return invalid_argument(str(
        "checkpoint '", path, "': quantization_config has a value of the wrong type: ", e.what()));
  }
  auto files = SafetensorsCheckpoint::open(path);
  if (!files) return files.status();
  c.files = std::move(*files);
  for (const std::string& name : c.files.names()) {
    const SafetensorsTensor* t = c.files.find(name);
    std::string prefix;
    switch (c.kind) {
      case CheckpointKind::kGptq:
      case CheckpointKind::kAwq:
        if (ends_with(name, ".qweight")) prefix = name.substr(0, name.size() - 8);
        break;
      case CheckpointKind::kFp8:
        if (ends_with(name, ".weight") && t->dtype == "F8_E4M3")
          prefix = name.substr(0, name.size() - 7);
        break;
      case CheckpointKind::kModelOptNvfp4:
        if (ends_with(name, ".weight") && t->dtype == "U8")
          prefix = name.substr(0, name.size() - 7);
        break;
      case CheckpointKind::kPackQuantized:
      case CheckpointKind::kCtNvfp4:
        if (ends_with(name, ".weight_packed")) prefix = name.substr(0, name.size() - 14);
        break;
      case CheckpointKind::kMxfp4Experts:
        if (ends_with(name, "_blocks") && t->dtype == "U8")
          prefix = name.substr(0, name.size() - 7);
        break;
    }
    if (!prefix.empty()) c.layers.push_back(prefix);
  }
  if (c.layers.empty())
    return invalid_argument(str("checkpoint '", path, "': config.json says ",
                                checkpoint_kind_name(c.kind), " but no tensor is a ",
                                checkpoint_kind_name(c.kind), " layer"));
  return c;
}

Expected<ImportedLinear> QuantizedCheckpoint::import(const std::string& prefix) const {
  switch (kind) {
    case CheckpointKind::kGptq:
      return import_gptq_linear(files, prefix, gptq);
    case CheckpointKind::kAwq:
      return import_awq_linear(files, prefix, awq_group_size);
    case CheckpointKind::kFp8:
      return import_fp8_linear(files, prefix, fp8_scale);
    case CheckpointKind::kModelOptNvfp4:
      return import_modelopt_nvfp4_linear(files, prefix);
    case CheckpointKind::kPackQuantized:
      return import_pack_quantized_linear(files, prefix, pack);
    case CheckpointKind::kCtNvfp4:
      return import_ct_nvfp4_linear(files, prefix);
    case CheckpointKind::kMxfp4Experts:
      return import_gpt_oss_experts(files, prefix);
  }
  return invalid_argument("unknown checkpoint kind");
}

}  // namespace qgemm
