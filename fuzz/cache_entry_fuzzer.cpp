// KernelCache::parse_entry on arbitrary bytes: it must return an error or a kernel whose entry
// reads back unchanged. Each input is tried twice: as a whole entry (header, checksum, payload),
// and as a payload under a valid header, so that mutations also reach the field decoder behind
// the checksum, which random bytes rarely match.
#include <string>

#include "fuzz/fuzz_check.h"
#include "jit/kernel_cache.h"
#include "util/hash.h"

namespace {

// The key every seed entry is stored under; entries of any other key are rejected last.
constexpr const char* kKey = "0f1e2d3c4b5a69788796a5b4c3d2e1f0";
constexpr const char* kSource = "fuzz.qkc";
// Entry layout (kernel_cache.cpp): magic (8), version (4), payload size (8), checksum (8).
constexpr size_t kPrefixBytes = 12;

void check_entry(std::string_view bytes) {
  using qgemm::fuzz::check;
  auto kernel = qgemm::KernelCache::parse_entry(bytes, kKey, kSource);
  if (!kernel) {
    check(kernel.status().code() == qgemm::ErrorCode::kIoError);
    return;
  }
  check(kernel->key == kKey && kernel->from_disk);
  auto again =
      qgemm::KernelCache::parse_entry(qgemm::KernelCache::serialize_entry(*kernel), kKey, kSource);
  check(again.ok() && again->lowered_name == kernel->lowered_name &&
        again->cubin == kernel->cubin && again->log == kernel->log);
  const qgemm::ResourceUsage& a = again->resources;
  const qgemm::ResourceUsage& b = kernel->resources;
  check(a.registers == b.registers && a.spill_stores == b.spill_stores &&
        a.spill_loads == b.spill_loads && a.stack_frame == b.stack_frame &&
        a.static_smem == b.static_smem);
}

// `payload` under the header a cache would write for it.
std::string with_header(std::string_view payload) {
  static const std::string prefix =
      qgemm::KernelCache::serialize_entry(qgemm::CompiledKernel{}).substr(0, kPrefixBytes);
  std::string entry = prefix;
  const uint64_t size = payload.size();
  const uint64_t checksum = qgemm::fnv1a64(payload);
  entry.append(reinterpret_cast<const char*>(&size), sizeof(size));
  entry.append(reinterpret_cast<const char*>(&checksum), sizeof(checksum));
  entry.append(payload);
  return entry;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes = qgemm::fuzz::as_text(data, size);
  check_entry(bytes);
  check_entry(with_header(bytes));
  return 0;
}
