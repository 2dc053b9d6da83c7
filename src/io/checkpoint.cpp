#include "io/checkpoint.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

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
    } else if (method == "compressed-tensors" &&
               value_or<std::string>(*section, "format", "") == "float-quantized") {
      c.kind = CheckpointKind::kFp8;
      c.fp8_scale = "weight_scale";
    } else if (method == "modelopt" &&
               value_or<std::string>(*section, "quant_algo", "").find("NVFP4") !=
                   std::string::npos) {
      c.kind = CheckpointKind::kModelOptNvfp4;
    } else {
      return unsupported(str("checkpoint '", path, "': quantization ", section->dump(),
                             " has no importer; read are gptq, awq, fp8 (DeepSeek), "
                             "compressed-tensors float-quantized and modelopt NVFP4"));
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
  }
  return invalid_argument("unknown checkpoint kind");
}

}  // namespace qgemm
