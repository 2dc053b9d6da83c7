#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "jit/kernel_cache.h"
#include "jit/kernel_spec.h"
#include "jit/nvrtc_library.h"
#include "qgemm/status.h"
#include "util/error.h"

namespace qgemm::testing {

/// Starts `threads` threads that wait for one another, then call fn(thread index) at once.
template <typename Fn>
void run_together(int threads, Fn&& fn) {
  std::atomic<int> ready{0};
  std::vector<std::thread> running;
  for (int t = 0; t < threads; ++t)
    running.emplace_back([&, t] {
      ++ready;
      while (ready < threads) std::this_thread::yield();
      fn(t);
    });
  for (auto& t : running) t.join();
}

/// Skips the current test, visibly, when NVRTC cannot be loaded.
#define QGEMM_REQUIRE_NVRTC()                                                    \
  do {                                                                           \
    if (auto nvrtc_ = ::qgemm::nvrtc_library(); !nvrtc_)                         \
      GTEST_SKIP() << "no NVRTC on this machine: " << nvrtc_.status().message(); \
  } while (0)

/// A fresh directory under $TMPDIR (or /tmp), removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/qgemm-jit-test-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed for " << pattern;
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

/// Compiles `specs` at once (on every core, into a cache of its own in memory) and hands each
/// compiled kernel to `check` with its spec, in order. A spec that does not compile fails the
/// test there: call it inside ASSERT_NO_FATAL_FAILURE.
inline void for_each_compiled(
    const std::vector<KernelSpec>& specs,
    const std::function<void(const KernelSpec&, const CompiledKernel&)>& check) {
  KernelCache cache("", /*use_disk=*/false);
  const auto results = cache.get_all(specs);
  for (size_t i = 0; i < specs.size(); ++i) {
    ASSERT_TRUE(results[i].ok()) << specs[i].config << ": " << results[i].status().to_string();
    check(specs[i], **results[i]);
  }
}

/// Expects `k` to use registers (ptxas reported them) and no spills or stack frame; `where`
/// names it in failures, followed by the compile log.
inline void expect_no_spills(const CompiledKernel& k, const std::string& where) {
  const ResourceUsage& r = k.resources;
  EXPECT_GT(r.registers, 0) << where << "\n" << k.log;
  EXPECT_EQ(0, r.spill_stores) << where << "\n" << k.log;
  EXPECT_EQ(0, r.spill_loads) << where << "\n" << k.log;
  EXPECT_EQ(0, r.stack_frame) << where << "\n" << k.log;
}

/// A kernel that compiles in tens of milliseconds; `variant` changes its source (and key).
inline KernelSpec tiny_spec(int variant, const std::string& arch = "sm_80") {
  KernelSpec s;
  s.family = "tiny";
  s.config = str("variant ", variant);
  s.arch = arch;
  s.threads = 32;
  s.source = str("__global__ void tiny_kernel(int* out) { out[threadIdx.x] = threadIdx.x * ",
                 variant, "; }\n");
  s.name_expression = "&tiny_kernel";
  return s;
}

/// A kernel with a compile error: an undeclared identifier NVRTC names in its log.
inline KernelSpec broken_spec() {
  KernelSpec s = tiny_spec(0);
  s.family = "broken";
  s.config = "undeclared identifier";
  s.source = "__global__ void tiny_kernel(int* out) { out[0] = qgemm_test_undeclared; }\n";
  return s;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// File names in `dir` (not recursive), sorted.
inline std::vector<std::string> file_names(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

/// How many times `needle` occurs in `text`.
inline int count_of(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

}  // namespace qgemm::testing
