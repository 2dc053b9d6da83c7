#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "qgemm/status.h"

namespace qgemm {

/// One tensor of a safetensors file: its name, element type ("F16", "BF16", "I32", "U8",
/// "F8_E4M3", ...), shape and bytes (a view into the mapped file).
struct SafetensorsTensor {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;
  int64_t bytes = 0;

  int64_t elements() const;
};

/// A safetensors file (huggingface/safetensors format: an 8-byte little-endian header length,
/// a JSON header, then the tensors' bytes), memory-mapped and validated as untrusted input:
/// the header is bounded, every dtype known, every shape's size consistent with its offsets,
/// every tensor inside the data and no two overlapping. Errors name the file and the tensor.
class SafetensorsFile {
 public:
  /// Maps and validates the file at `path`.
  static Expected<SafetensorsFile> open(const std::string& path);
  /// Validates a file held in memory (tests, fuzzing); `name` names it in errors.
  static Expected<SafetensorsFile> parse(std::vector<uint8_t> bytes, const std::string& name);

  const std::string& name() const { return name_; }
  /// Tensors in the order of their data offsets.
  const std::vector<SafetensorsTensor>& tensors() const { return tensors_; }
  /// The tensor of this name, or nullptr.
  const SafetensorsTensor* find(std::string_view tensor) const;
  /// The header's "__metadata__" (string to string), empty when it has none.
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  static Expected<SafetensorsFile> validate(std::shared_ptr<const void> storage,
                                            const uint8_t* bytes, int64_t size,
                                            const std::string& name);

  std::string name_;
  std::shared_ptr<const void> storage_;  ///< the mapping or the buffer the views point into
  std::vector<SafetensorsTensor> tensors_;
  std::map<std::string, std::string> metadata_;
};

/// Bytes per element of a safetensors dtype, or 0 when the dtype is unknown.
int safetensors_dtype_bytes(std::string_view dtype);

/// A checkpoint: one .safetensors file, or a directory holding one (model.safetensors) or the
/// shards its model.safetensors.index.json names. Tensors are looked up by name across shards.
class SafetensorsCheckpoint {
 public:
  static Expected<SafetensorsCheckpoint> open(const std::string& path);

  /// The tensor of this name in whichever shard holds it, or nullptr.
  const SafetensorsTensor* find(std::string_view tensor) const;
  /// Every tensor name, sorted.
  std::vector<std::string> names() const;
  const std::vector<SafetensorsFile>& files() const { return files_; }

 private:
  std::vector<SafetensorsFile> files_;
  std::map<std::string, const SafetensorsTensor*, std::less<>> index_;
};

}  // namespace qgemm
