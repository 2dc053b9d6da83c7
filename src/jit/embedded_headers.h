#pragma once

#include <string_view>
#include <vector>

namespace qgemm::jit {

/// A device header from kernels/, embedded at build time.
struct EmbeddedHeader {
  std::string_view name;  ///< include name relative to kernels/, e.g. "dense/gemm.cuh"
  std::string_view source;
};

/// Every header under kernels/, sorted by name.
const std::vector<EmbeddedHeader>& embedded_headers();

}  // namespace qgemm::jit
