#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "qgemm/status.h"

namespace qgemm {

/// The checkpoint tensor `name`, checked to have one of `dtypes` and `rank` dimensions; errors
/// name the producer's layer format and the tensor. nullptr when it is absent and not
/// `required`.
Expected<const SafetensorsTensor*> checkpoint_tensor(const SafetensorsCheckpoint& c,
                                                     const char* producer, const std::string& name,
                                                     std::initializer_list<const char*> dtypes,
                                                     size_t rank, bool required = true);

/// Little-endian 32-bit word i of an I32 / U32 tensor.
uint32_t word_at(const SafetensorsTensor& t, int64_t i);

/// Element i of an F16, BF16 or F32 tensor, as float.
float value_at(const SafetensorsTensor& t, int64_t i);

/// Appends the bias `prefix.bias` ([n] F16, BF16 or F32) to `out`, if the checkpoint has one.
Status read_bias(const SafetensorsCheckpoint& c, const char* producer, const std::string& prefix,
                 int64_t n, std::vector<float>& out);

}  // namespace qgemm
