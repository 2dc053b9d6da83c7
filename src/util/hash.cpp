#include "util/hash.h"

#include <cstdio>

namespace qgemm {
namespace {
constexpr uint64_t kPrime = 0x100000001b3ull;
}

Hasher& Hasher::add(std::string_view bytes) {
  for (unsigned char c : bytes) {
    a_ = (a_ ^ c) * kPrime;
    b_ = (b_ ^ static_cast<unsigned char>(c + 0x5b)) * kPrime;
  }
  // Length separator so that add("ab").add("c") differs from add("a").add("bc").
  return add(static_cast<int64_t>(bytes.size()));
}

Hasher& Hasher::add(int64_t value) {
  for (int i = 0; i < 8; ++i) {
    const unsigned char c = static_cast<unsigned char>(value >> (8 * i));
    a_ = (a_ ^ c) * kPrime;
    b_ = (b_ ^ static_cast<unsigned char>(c + 0x5b)) * kPrime;
  }
  return *this;
}

std::string Hasher::hex() const {
  char buf[33];
  std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(a_),
                static_cast<unsigned long long>(b_));
  return buf;
}

uint64_t fnv1a64(std::string_view bytes) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : bytes) h = (h ^ c) * kPrime;
  return h;
}

}  // namespace qgemm
