// The kernel cache's disk entries as bytes (no files, no NVRTC): what parse_entry accepts and
// rejects. tests/jit/kernel_cache_test.cpp covers entries written by real compiles.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "jit/kernel_cache.h"
#include "util/hash.h"

namespace qgemm {
namespace {

constexpr const char* kKey = "0123456789abcdef0123456789abcdef";

CompiledKernel sample_kernel() {
  CompiledKernel k;
  k.key = kKey;
  k.lowered_name = "_Z8mma_gemmv";
  k.cubin = std::string{'\x7f', 'E', 'L', 'F', '\0', '\0', '\x01', '\xff'} + std::string(300, 'c');
  k.log = "ptxas info    : Used 40 registers\n";
  k.resources = {40, 8, 12, 16, 256};
  k.compile_ms = 12.5;
  return k;
}

// `payload` under a header that matches it (magic and version copied from a real entry).
std::string with_header(const std::string& payload) {
  std::string entry = KernelCache::serialize_entry(sample_kernel()).substr(0, 12);
  const uint64_t size = payload.size(), checksum = fnv1a64(payload);
  entry.append(reinterpret_cast<const char*>(&size), 8);
  entry.append(reinterpret_cast<const char*>(&checksum), 8);
  return entry + payload;
}

void expect_corrupt(const std::string& bytes, const std::string& why) {
  auto k = KernelCache::parse_entry(bytes, kKey, "e.qkc");
  ASSERT_FALSE(k.ok()) << why;
  EXPECT_EQ(k.status().code(), ErrorCode::kIoError);
  EXPECT_NE(k.status().message().find("cache entry e.qkc is corrupt (" + why + ")"),
            std::string::npos)
      << k.status().message();
}

TEST(KernelCacheEntry, ReadsBackWhatItWrites) {
  const CompiledKernel written = sample_kernel();
  auto k = KernelCache::parse_entry(KernelCache::serialize_entry(written), kKey, "e.qkc");
  ASSERT_TRUE(k.ok()) << k.status().to_string();
  EXPECT_EQ(k->key, written.key);
  EXPECT_EQ(k->lowered_name, written.lowered_name);
  EXPECT_EQ(k->cubin, written.cubin);
  EXPECT_EQ(k->log, written.log);
  EXPECT_EQ(k->resources.registers, 40);
  EXPECT_EQ(k->resources.spill_stores, 8);
  EXPECT_EQ(k->resources.spill_loads, 12);
  EXPECT_EQ(k->resources.stack_frame, 16);
  EXPECT_EQ(k->resources.static_smem, 256);
  EXPECT_EQ(k->compile_ms, 0) << "compile time is not stored";
  EXPECT_TRUE(k->from_disk);
}

TEST(KernelCacheEntry, EveryTruncationAndFlippedByteIsRejected) {
  const std::string good = KernelCache::serialize_entry(sample_kernel());
  for (size_t size = 0; size < good.size(); ++size) {
    auto k = KernelCache::parse_entry(good.substr(0, size), kKey, "e.qkc");
    EXPECT_FALSE(k.ok()) << "truncated to " << size << " bytes";
  }
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] ^= 0x20;
    auto k = KernelCache::parse_entry(bad, kKey, "e.qkc");
    EXPECT_FALSE(k.ok()) << "byte " << i << " flipped";
  }
}

TEST(KernelCacheEntry, NamesWhatIsWrong) {
  const std::string good = KernelCache::serialize_entry(sample_kernel());
  expect_corrupt("", "bad header");
  expect_corrupt("QGEMMKC2" + good.substr(8), "bad header");
  std::string version = good;
  version[8] = 2;
  expect_corrupt(version, "unknown version");
  expect_corrupt(good + "x", "truncated");
  std::string flipped = good;
  flipped.back() ^= 1;
  expect_corrupt(flipped, "checksum mismatch");
  // A consistent header over a payload whose fields run past its end.
  expect_corrupt(with_header(good.substr(28, 60)), "short payload");
  expect_corrupt(with_header(std::string(8, '\xff')), "short payload");
  CompiledKernel other = sample_kernel();
  other.key = "ffffffffffffffffffffffffffffffff";
  expect_corrupt(KernelCache::serialize_entry(other), "key mismatch");
}

}  // namespace
}  // namespace qgemm
