#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace qgemm {

/// A stable 128-bit content hash (two FNV-1a-64 lanes with different seeds), for cache keys.
/// Not cryptographic; stable across runs, machines and builds.
class Hasher {
 public:
  Hasher& add(std::string_view bytes);
  Hasher& add(int64_t value);
  /// 32 lowercase hex digits.
  std::string hex() const;
  uint64_t low() const { return a_; }

 private:
  uint64_t a_ = 0xcbf29ce484222325ull;
  uint64_t b_ = 0x84222325cbf29ce4ull;
};

/// FNV-1a-64 of `bytes` (entry checksums).
uint64_t fnv1a64(std::string_view bytes);

}  // namespace qgemm
