// Raw element codes of the producers' expected tensors (16- or 32-bit floats), and a value as
// the code of such a tensor, for the fixture tests that compare imports bit for bit.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

#include "io/safetensors.h"
#include "qgemm/dtype.h"

namespace qgemm::testing {

/// Element i of a 16- or 32-bit float tensor, as its raw code.
inline uint32_t code_at(const SafetensorsTensor& t, int64_t i) {
  const int width = t.dtype == "F32" ? 4 : 2;
  uint32_t code = 0;
  std::memcpy(&code, t.data + i * width, width);
  return code;
}

/// `v` rounded to the tensor dtype `dtype` (F32, BF16 or F16), as its code.
inline uint32_t encoded(const std::string& dtype, double v) {
  if (dtype == "F32") {
    const float f = static_cast<float>(v);
    uint32_t code = 0;
    std::memcpy(&code, &f, 4);
    return code;
  }
  return static_cast<uint32_t>(encode(dtype == "BF16" ? DType::bf16() : DType::fp16(), v));
}

}  // namespace qgemm::testing
