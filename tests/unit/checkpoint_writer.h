// Writes small safetensors checkpoints for the importer tests, from a producer's published layout.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "qgemm/dtype.h"

namespace qgemm::testing {

/// One tensor to write: its name, safetensors dtype, shape and little-endian bytes.
struct Tensor {
  std::string name, dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

inline void write_safetensors(const std::filesystem::path& path,
                              const std::vector<Tensor>& tensors) {
  std::string header = "{";
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    std::string shape;
    for (int64_t d : t.shape) shape += (shape.empty() ? "" : ",") + std::to_string(d);
    header += (header.size() > 1 ? "," : "") + std::string("\"") + t.name + "\":{\"dtype\":\"" +
              t.dtype + "\",\"shape\":[" + shape + "],\"data_offsets\":[" + std::to_string(offset) +
              "," + std::to_string(offset + int64_t(t.bytes.size())) + "]}";
    offset += int64_t(t.bytes.size());
  }
  header += "}";
  std::ofstream out(path, std::ios::binary);
  const uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out.put(char(n >> (8 * i)));
  out << header;
  for (const Tensor& t : tensors)
    out.write(reinterpret_cast<const char*>(t.bytes.data()), std::streamsize(t.bytes.size()));
}

/// A test fixture with a fresh directory to write a checkpoint into, removed afterwards.
class CheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("qgemm-checkpoint-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  /// Writes `tensors` as the directory's model.safetensors and opens the directory.
  Expected<SafetensorsCheckpoint> write_checkpoint(const std::vector<Tensor>& tensors);
  std::filesystem::path dir_;
};

inline Tensor int32_tensor(const std::string& name, std::vector<int64_t> shape,
                           const std::vector<uint32_t>& words) {
  Tensor t{name, "I32", std::move(shape), std::vector<uint8_t>(words.size() * 4)};
  std::memcpy(t.bytes.data(), words.data(), t.bytes.size());
  return t;
}

/// fp16 or bf16 values (dtype "F16" or "BF16"), rounded to nearest even.
inline Tensor half_tensor(const std::string& name, const std::string& dtype,
                          std::vector<int64_t> shape, const std::vector<float>& values) {
  const DType type = dtype == "BF16" ? DType::bf16() : DType::fp16();
  Tensor t{name, dtype, std::move(shape), std::vector<uint8_t>(values.size() * 2)};
  for (size_t i = 0; i < values.size(); ++i) {
    const uint16_t h = uint16_t(encode(type, values[i]));
    std::memcpy(&t.bytes[2 * i], &h, 2);
  }
  return t;
}

inline Tensor fp16_tensor(const std::string& name, std::vector<int64_t> shape,
                          const std::vector<float>& values) {
  return half_tensor(name, "F16", std::move(shape), values);
}

inline Expected<SafetensorsCheckpoint> CheckpointTest::write_checkpoint(
    const std::vector<Tensor>& tensors) {
  write_safetensors(dir_ / "model.safetensors", tensors);
  return SafetensorsCheckpoint::open(dir_.string());
}

}  // namespace qgemm::testing
