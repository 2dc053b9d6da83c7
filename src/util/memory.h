#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "qgemm/status.h"

namespace qgemm {

/// count x element_bytes for count = the product of `dims`: kInvalidArgument naming `what` when a
/// dimension is negative or the product does not fit in 64 bits.
Expected<int64_t> byte_count(const std::string& what, std::initializer_list<int64_t> dims,
                             int64_t element_bytes);

/// The physical memory of this machine in bytes; 0 when it cannot be read.
int64_t host_memory_bytes();

/// kOutOfMemory, naming `what`, its size and the machine's memory, when `bytes` exceed the
/// machine's physical memory: the check every entry point makes before it allocates, so that a
/// size no machine holds fails at once instead of after minutes of work or with a crash.
Status check_host_memory(const std::string& what, int64_t bytes);

/// Bytes rounded up to 256: where the parts of a device workspace start.
constexpr size_t align256(size_t bytes) { return (bytes + 255) / 256 * 256; }

/// Rounded up to 16: the pitch of rows TMA reads.
constexpr int64_t align16(int64_t v) { return (v + 15) / 16 * 16; }

/// "3.4 GB", "512 MB", "12 KB", "100 bytes".
std::string human_bytes(int64_t bytes);

}  // namespace qgemm
