// Checkpoint detection from config.json and the tensors: which importer reads it and which
// layers it holds.
#include "io/checkpoint.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "checkpoint_writer.h"

namespace qgemm {
namespace {

namespace fs = std::filesystem;
using testing::Tensor;

class CheckpointDetection : public testing::CheckpointTest {
 protected:
  void write(const std::string& quantization, const std::vector<Tensor>& tensors) {
    std::ofstream(dir_ / "config.json")
        << R"({"model_type": "llama", "quantization_config": )" << quantization << "}";
    testing::write_safetensors(dir_ / "model.safetensors", tensors);
  }
};

// A symmetric 4-bit GPTQ layer of N=16, K=64, group 32 (v1 zero points: 8 stored as 7).
std::vector<Tensor> gptq_layer(const std::string& prefix) {
  std::vector<uint32_t> qweight(64 / 8 * 16, 0x76543210u), qzeros(2 * 16 / 8, 0x77777777u);
  return {testing::int32_tensor(prefix + ".qweight", {8, 16}, qweight),
          testing::int32_tensor(prefix + ".qzeros", {2, 2}, qzeros),
          testing::fp16_tensor(prefix + ".scales", {2, 16}, std::vector<float>(32, 0.5f))};
}

TEST_F(CheckpointDetection, GptqLayersAreFoundAndRead) {
  std::vector<Tensor> tensors = gptq_layer("model.layers.0.self_attn.q_proj");
  for (Tensor& t : gptq_layer("model.layers.0.mlp.down_proj")) tensors.push_back(t);
  tensors.push_back(testing::fp16_tensor("model.norm.weight", {16}, std::vector<float>(16, 1)));
  write(R"({"quant_method": "gptq", "bits": 4, "group_size": 32, "desc_act": false})", tensors);
  auto c = QuantizedCheckpoint::open(dir_.string());
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->kind, CheckpointKind::kGptq);
  EXPECT_EQ(c->layers, (std::vector<std::string>{"model.layers.0.mlp.down_proj",
                                                 "model.layers.0.self_attn.q_proj"}));
  auto layer = c->import(c->layers[0]);
  ASSERT_TRUE(layer.ok()) << layer.status().to_string();
  EXPECT_EQ(layer->weight.format.to_string(), "int4/g32/fp16");
  // Row 0, column 3 holds code 3 of word 0x76543210: (3 - 8) * 0.5.
  EXPECT_EQ(layer->weight.dequantize(0, 0, 3), -2.5);
}

TEST_F(CheckpointDetection, Mxfp4ExpertStacksAreFoundAndRead) {
  const std::string prefix = "model.layers.0.mlp.experts.down_proj";
  write(
      R"({"quant_method": "mxfp4", "modules_to_not_convert": ["lm_head"]})",
      {Tensor{prefix + "_blocks", "U8", {2, 8, 2, 16}, std::vector<uint8_t>(2 * 8 * 2 * 16, 0x21)},
       Tensor{prefix + "_scales", "U8", {2, 8, 2}, std::vector<uint8_t>(32, 126)},
       testing::fp16_tensor("model.norm.weight", {8}, std::vector<float>(8, 1))});
  auto c = QuantizedCheckpoint::open(dir_.string());
  ASSERT_TRUE(c.ok()) << c.status().to_string();
  EXPECT_EQ(c->kind, CheckpointKind::kMxfp4Experts);
  EXPECT_EQ(c->layers, std::vector<std::string>{prefix});
  auto layer = c->import(prefix);
  ASSERT_TRUE(layer.ok()) << layer.status().to_string();
  EXPECT_EQ(layer->weight.experts, 2);
  EXPECT_FALSE(layer->interleaved_gate_up);  // a down projection
  // Byte 0x21: code 1 (0.5) then code 2 (1.0), times 2^(126 - 127).
  EXPECT_EQ(layer->weight.dequantize(1, 7, 0), 0.25);
  EXPECT_EQ(layer->weight.dequantize(1, 7, 1), 0.5);
}

TEST_F(CheckpointDetection, UnreadableCheckpointsAreClearErrors) {
  auto none = QuantizedCheckpoint::open(dir_.string());
  EXPECT_EQ(none.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(none.status().message().find("no config.json"), std::string::npos);

  write(R"({"quant_method": "bitsandbytes", "load_in_4bit": true})", {});
  auto bnb = QuantizedCheckpoint::open(dir_.string());
  EXPECT_EQ(bnb.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(bnb.status().message().find("has no importer"), std::string::npos);

  write(R"({"quant_method": "gptq", "bits": "four"})", {});
  auto typed = QuantizedCheckpoint::open(dir_.string());
  EXPECT_NE(typed.status().message().find("wrong type"), std::string::npos)
      << typed.status().message();

  write(R"({"quant_method": "fp8"})", gptq_layer("x"));
  auto empty = QuantizedCheckpoint::open(dir_.string());
  EXPECT_NE(empty.status().message().find("no tensor is a FP8 layer"), std::string::npos)
      << empty.status().message();
}

}  // namespace
}  // namespace qgemm
