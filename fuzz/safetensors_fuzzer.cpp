// SafetensorsFile::parse on arbitrary bytes: an error, or a file whose every tensor lies inside
// the input, with a size its dtype and shape account for, and no two tensors overlapping.
#include <vector>

#include "fuzz/fuzz_check.h"
#include "io/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using qgemm::fuzz::check;
  auto file = qgemm::SafetensorsFile::parse(std::vector<uint8_t>(data, data + size), "fuzz");
  if (!file) return 0;
  const uint8_t* end = nullptr;
  for (const qgemm::SafetensorsTensor& t : file->tensors()) {
    check(t.bytes == t.elements() * qgemm::safetensors_dtype_bytes(t.dtype));
    check(end == nullptr || t.data >= end);  // sorted by offset, not overlapping
    end = t.data + t.bytes;
    check(file->find(t.name) != nullptr);
    // Every byte is readable (ASan reports a read outside the input).
    volatile uint8_t sum = 0;
    for (int64_t i = 0; i < t.bytes; ++i) sum = sum + t.data[i];
  }
  return 0;
}
