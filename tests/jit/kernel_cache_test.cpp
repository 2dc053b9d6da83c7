#include "jit/kernel_cache.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "jit/compiler.h"
#include "jit/kernel_dump.h"
#include "jit_test_util.h"
#include "util/error.h"
#include "util/settings.h"

namespace qgemm {
namespace {

using testing::count_of;
using testing::file_names;
using testing::read_file;
using testing::TempDir;
using testing::tiny_spec;
using testing::write_file;

std::string file_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

TEST(KernelCache, MissCompilesThenMemoryHitsThenDiskHits) {
  QGEMM_REQUIRE_NVRTC();
  TempDir dir;
  KernelCache cache(dir.path());
  const KernelSpec spec = tiny_spec(1);
  const std::string key = *kernel_key(spec);

  auto first = cache.get(spec);
  ASSERT_TRUE(first.ok()) << first.status().to_string();
  EXPECT_FALSE((*first)->from_disk);
  EXPECT_GT((*first)->compile_ms, 0.0);
  EXPECT_EQ(key, (*first)->key);
  EXPECT_FALSE((*first)->cubin.empty());
  EXPECT_EQ(std::vector<std::string>{key + ".qkc"}, file_names(dir.path()));

  auto again = cache.get(spec);
  ASSERT_TRUE(again.ok()) << again.status().to_string();
  EXPECT_EQ(first->get(), again->get()) << "an in-memory hit returns the same object";

  cache.forget_memory();
  auto loaded = cache.get(spec);
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  EXPECT_NE(first->get(), loaded->get());
  EXPECT_TRUE((*loaded)->from_disk);
  EXPECT_EQ(0.0, (*loaded)->compile_ms);
  EXPECT_EQ((*first)->cubin, (*loaded)->cubin);
  EXPECT_EQ((*first)->lowered_name, (*loaded)->lowered_name);
  EXPECT_EQ((*first)->log, (*loaded)->log);
  EXPECT_EQ((*first)->resources.registers, (*loaded)->resources.registers);

  // Another cache on the same directory (another process, later) reads the entry too.
  KernelCache other(dir.path());
  auto shared = other.get(spec);
  ASSERT_TRUE(shared.ok()) << shared.status().to_string();
  EXPECT_TRUE((*shared)->from_disk);
  EXPECT_EQ((*first)->cubin, (*shared)->cubin);
}

TEST(KernelCache, KeyAndFileNameDoNotDependOnTheDirectory) {
  QGEMM_REQUIRE_NVRTC();
  TempDir a, b;
  KernelCache cache_a(a.path()), cache_b(b.path());
  const KernelSpec spec = tiny_spec(2);
  auto in_a = cache_a.get(spec);
  auto in_b = cache_b.get(spec);
  ASSERT_TRUE(in_a.ok()) << in_a.status().to_string();
  ASSERT_TRUE(in_b.ok()) << in_b.status().to_string();
  EXPECT_EQ((*in_a)->key, (*in_b)->key);
  EXPECT_EQ((*in_a)->cubin, (*in_b)->cubin);
  EXPECT_NE(cache_a.entry_path((*in_a)->key), cache_b.entry_path((*in_b)->key));
  EXPECT_EQ(file_names(a.path()), file_names(b.path()));
  ASSERT_EQ(1u, file_names(a.path()).size());

  // The process-wide cache's directory follows QGEMM_CACHE_DIR, and the key does not.
  const char* saved = std::getenv("QGEMM_CACHE_DIR");
  const std::string restore = saved ? saved : "";
  ::setenv("QGEMM_CACHE_DIR", a.path().c_str(), 1);
  EXPECT_EQ(a.path(), cache_dir());
  const std::string key_a = *kernel_key(spec);
  ::setenv("QGEMM_CACHE_DIR", b.path().c_str(), 1);
  EXPECT_EQ(b.path(), cache_dir());
  EXPECT_EQ(key_a, *kernel_key(spec));
  if (saved)
    ::setenv("QGEMM_CACHE_DIR", restore.c_str(), 1);
  else
    ::unsetenv("QGEMM_CACHE_DIR");
}

TEST(KernelCache, ThreadsRacingOnOneKeyShareOneBuild) {
  QGEMM_REQUIRE_NVRTC();
  TempDir dir;
  KernelCache cache(dir.path());
  const KernelSpec spec = tiny_spec(3);
  constexpr int kThreads = 8;
  std::vector<const CompiledKernel*> got(kThreads, nullptr);
  testing::run_together(kThreads, [&](int t) {
    auto k = cache.get(spec);
    if (k) got[t] = k->get();
  });
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_NE(nullptr, got[t]) << "thread " << t;
    EXPECT_EQ(got[0], got[t]) << "thread " << t;
  }
  EXPECT_FALSE(got[0]->from_disk);
  EXPECT_EQ(std::vector<std::string>{got[0]->key + ".qkc"}, file_names(dir.path()));
}

TEST(KernelCache, ProcessesRacingOnOneKeyLeaveOneValidEntry) {
  QGEMM_REQUIRE_NVRTC();
  TempDir dir;
  const KernelSpec spec = tiny_spec(4);
  const std::string key = *kernel_key(spec);
  // NOTE: children wait on a pipe that the parent closes once all are forked, so they look up
  // the empty directory, compile and rename at about the same time.
  constexpr int kChildren = 4;
  int gate[2];
  ASSERT_EQ(0, ::pipe(gate));
  std::vector<pid_t> children;
  for (int c = 0; c < kChildren; ++c) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0) << "fork failed";
    if (pid == 0) {
      ::close(gate[1]);
      char byte;
      while (::read(gate[0], &byte, 1) > 0) {
      }
      KernelCache cache(dir.path());
      auto k = cache.get(spec);
      if (!k.ok()) ::_exit(2);
      // While the others store their copies, the entry must always read back whole.
      for (int i = 0; i < 300; ++i)
        if (!KernelCache::read_entry(cache.entry_path(key), key).ok()) ::_exit(3);
      // 0: compiled and stored, 1: read the entry another child stored.
      ::_exit((*k)->from_disk ? 1 : 0);
    }
    children.push_back(pid);
  }
  ::close(gate[0]);
  ::close(gate[1]);
  int compiled = 0;
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(pid, ::waitpid(pid, &status, 0));
    ASSERT_TRUE(WIFEXITED(status)) << "child " << pid << " did not exit normally";
    const int code = WEXITSTATUS(status);
    EXPECT_NE(2, code) << "child " << pid << " failed to build the kernel";
    EXPECT_NE(3, code) << "child " << pid << " read a partial or corrupt entry";
    EXPECT_TRUE(code == 0 || code == 1) << "child " << pid << " exited with " << code;
    compiled += code == 0;
  }
  EXPECT_GE(compiled, 1);
  RecordProperty("children_that_compiled", compiled);

  EXPECT_EQ(std::vector<std::string>{key + ".qkc"}, file_names(dir.path()))
      << "exactly one entry and no temporary files";
  auto entry = KernelCache::read_entry(KernelCache(dir.path()).entry_path(key), key);
  ASSERT_TRUE(entry.ok()) << entry.status().to_string();
  EXPECT_FALSE(entry->cubin.empty());
}

// Damages the entry at `path` in one of several ways.
void damage(const std::string& path, int how) {
  std::string bytes = read_file(path);
  switch (how) {
    case 0:  // truncated: a crash in the middle of a copy
      bytes.resize(bytes.size() / 2);
      break;
    case 1:  // one flipped bit deep in the payload (the CUBIN)
      bytes[bytes.size() * 2 / 3] ^= 0x10;
      break;
    case 2:  // not an entry at all
      bytes = "garbage, not a qgemm kernel cache entry";
      break;
    default:  // empty
      bytes.clear();
      break;
  }
  write_file(path, bytes);
}

TEST(KernelCache, CorruptEntriesAreRebuilt) {
  QGEMM_REQUIRE_NVRTC();
  TempDir dir;
  KernelCache cache(dir.path());
  const KernelSpec spec = tiny_spec(5);
  auto original = cache.get(spec);
  ASSERT_TRUE(original.ok()) << original.status().to_string();
  const std::string key = (*original)->key;
  const std::string path = cache.entry_path(key);
  const std::string good = read_file(path);
  for (int how = 0; how < 4; ++how) {
    SCOPED_TRACE(str("damage mode ", how));
    damage(path, how);
    ASSERT_NE(good, read_file(path));
    auto bad = KernelCache::read_entry(path, key);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(ErrorCode::kIoError, bad.status().code());
    EXPECT_NE(std::string::npos, bad.status().message().find("corrupt")) << bad.status().message();
    EXPECT_NE(std::string::npos, bad.status().message().find(path)) << bad.status().message();

    cache.forget_memory();
    auto rebuilt = cache.get(spec);
    ASSERT_TRUE(rebuilt.ok()) << rebuilt.status().to_string();
    EXPECT_FALSE((*rebuilt)->from_disk) << "a corrupt entry must be compiled again";
    EXPECT_EQ((*original)->cubin, (*rebuilt)->cubin);
    auto healed = KernelCache::read_entry(path, key);
    ASSERT_TRUE(healed.ok()) << healed.status().to_string();
    EXPECT_EQ((*original)->cubin, healed->cubin);
  }

  // A valid entry of another key under this key's name is not accepted either.
  auto other = cache.get(tiny_spec(6));
  ASSERT_TRUE(other.ok()) << other.status().to_string();
  std::filesystem::copy_file(cache.entry_path((*other)->key), path,
                             std::filesystem::copy_options::overwrite_existing);
  auto mismatch = KernelCache::read_entry(path, key);
  ASSERT_FALSE(mismatch.ok());
  EXPECT_NE(std::string::npos, mismatch.status().message().find("key mismatch"))
      << mismatch.status().message();
  cache.forget_memory();
  auto rebuilt = cache.get(spec);
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status().to_string();
  EXPECT_EQ((*original)->cubin, (*rebuilt)->cubin);
  EXPECT_TRUE(KernelCache::read_entry(path, key).ok());
}

TEST(KernelCache, UnwritableDirectoryDegradesToMemoryOnlyWithOneWarning) {
  QGEMM_REQUIRE_NVRTC();
  TempDir dir;
  // NOTE: a directory below a regular file cannot be created, even by root.
  write_file(dir / "file", "a regular file");
  const std::string cache_dir = dir / "file/cache";
  KernelCache cache(cache_dir);
  EXPECT_TRUE(cache.disk_enabled());
  ::testing::internal::CaptureStderr();
  auto a = cache.get(tiny_spec(7));
  auto b = cache.get(tiny_spec(8));
  cache.forget_memory();
  auto a_again = cache.get(tiny_spec(7));
  const std::string err = ::testing::internal::GetCapturedStderr();
  ASSERT_TRUE(a.ok()) << a.status().to_string();
  ASSERT_TRUE(b.ok()) << b.status().to_string();
  ASSERT_TRUE(a_again.ok()) << a_again.status().to_string();
  EXPECT_FALSE((*a_again)->from_disk);
  EXPECT_EQ((*a)->cubin, (*a_again)->cubin);
  EXPECT_EQ(1, count_of(err, "warning")) << err;
  EXPECT_NE(std::string::npos, err.find(cache_dir)) << err;
  EXPECT_NE(std::string::npos, err.find("memory only")) << err;
  EXPECT_FALSE(cache.disk_enabled());
  EXPECT_EQ(std::vector<std::string>{"file"}, file_names(dir.path()));
}

TEST(KernelCache, FailedCompileIsReportedAndNeitherStoredNorRemembered) {
  QGEMM_REQUIRE_NVRTC();
  TempDir dir;
  KernelCache cache(dir.path());
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto k = cache.get(testing::broken_spec());
    ASSERT_FALSE(k.ok());
    EXPECT_EQ(ErrorCode::kCompileError, k.status().code());
    EXPECT_NE(std::string::npos, k.status().message().find("qgemm_test_undeclared"))
        << k.status().message();
  }
  EXPECT_TRUE(file_names(dir.path()).empty());
}

TEST(KernelCache, GetAllKeepsOrderAndSharesDuplicates) {
  QGEMM_REQUIRE_NVRTC();
  TempDir dir;
  KernelCache cache(dir.path());
  const std::vector<KernelSpec> specs = {tiny_spec(9), tiny_spec(10), tiny_spec(9),
                                         testing::broken_spec()};
  auto results = cache.get_all(specs);
  ASSERT_EQ(4u, results.size());
  ASSERT_TRUE(results[0].ok()) << results[0].status().to_string();
  ASSERT_TRUE(results[1].ok()) << results[1].status().to_string();
  ASSERT_TRUE(results[2].ok()) << results[2].status().to_string();
  EXPECT_EQ(*kernel_key(specs[0]), (*results[0])->key);
  EXPECT_EQ(*kernel_key(specs[1]), (*results[1])->key);
  EXPECT_EQ(results[0]->get(), results[2]->get());
  ASSERT_FALSE(results[3].ok());
  EXPECT_EQ(ErrorCode::kCompileError, results[3].status().code());
}

TEST(KernelCache, ListAndClearCoverEntriesAndLeftoverTemporaries) {
  QGEMM_REQUIRE_NVRTC();
  TempDir dir;
  KernelCache cache(dir.path());
  ASSERT_TRUE(cache.get(tiny_spec(11)).ok());
  ASSERT_TRUE(cache.get(tiny_spec(12)).ok());
  const std::string key = *kernel_key(tiny_spec(11));
  write_file(cache.entry_path(key) + ".tmp.1234.5.6", "left by a killed process");
  write_file(dir / "unrelated.txt", "not ours");
  auto listed = cache.list();
  ASSERT_EQ(2u, listed.size());
  for (const auto& e : listed) {
    EXPECT_EQ(".qkc", std::filesystem::path(e.path).extension()) << e.path;
    EXPECT_EQ(static_cast<int64_t>(std::filesystem::file_size(e.path)), e.bytes) << e.path;
  }
  EXPECT_EQ(3, cache.clear());
  EXPECT_TRUE(cache.list().empty());
  EXPECT_EQ(std::vector<std::string>{"unrelated.txt"}, file_names(dir.path()));
  // clear() also forgets memory: the next get compiles again.
  auto k = cache.get(tiny_spec(11));
  ASSERT_TRUE(k.ok()) << k.status().to_string();
  EXPECT_FALSE((*k)->from_disk);
}

TEST(KernelCache, DumpDirectoryGetsSourcePtxCubinAndLog) {
  QGEMM_REQUIRE_NVRTC();
  TempDir dir, dumps;
  KernelCache cache(dir.path());
  cache.set_dump_dir(dumps.path());
  const KernelSpec spec = tiny_spec(13);
  auto k = cache.get(spec);
  ASSERT_TRUE(k.ok()) << k.status().to_string();
  const std::string stem = kernel_dump_stem(dumps.path(), "tiny", (*k)->key);
  EXPECT_EQ("tiny-" + (*k)->key.substr(0, 12), file_name(stem));
  EXPECT_NE(std::string::npos, read_file(stem + ".cu").find(spec.source));
  const std::string ptx = read_file(stem + ".ptx");
  ASSERT_FALSE(ptx.empty());
  EXPECT_NE(std::string::npos, ptx.find(".target sm_80")) << ptx.substr(0, 400);
  EXPECT_NE(std::string::npos, ptx.find((*k)->lowered_name)) << ptx.substr(0, 400);
  EXPECT_NE('\0', ptx.back());
  EXPECT_EQ((*k)->cubin, read_file(stem + ".cubin"));
  EXPECT_EQ((*k)->log, read_file(stem + ".log"));

  // A failed compile leaves its source and the error to look at.
  auto broken = cache.get(testing::broken_spec());
  ASSERT_FALSE(broken.ok());
  const std::string broken_stem =
      kernel_dump_stem(dumps.path(), "broken", *kernel_key(testing::broken_spec()));
  EXPECT_NE(std::string::npos, read_file(broken_stem + ".cu").find("qgemm_test_undeclared"));
  EXPECT_NE(std::string::npos, read_file(broken_stem + ".log").find("qgemm_test_undeclared"));
  EXPECT_FALSE(std::filesystem::exists(broken_stem + ".cubin"));

  // A kernel read from disk was not compiled by this cache: nothing new is dumped.
  TempDir dumps2;
  KernelCache reader(dir.path());
  reader.set_dump_dir(dumps2.path());
  auto loaded = reader.get(spec);
  ASSERT_TRUE(loaded.ok()) << loaded.status().to_string();
  EXPECT_TRUE((*loaded)->from_disk);
  EXPECT_TRUE(file_names(dumps2.path()).empty());
}

TEST(KernelCache, DumpDirectoryComesFromTheEnvironment) {
  const char* saved = std::getenv("QGEMM_DUMP_DIR");
  const std::string restore = saved ? saved : "";
  ::setenv("QGEMM_DUMP_DIR", "/some/dump/dir", 1);
  EXPECT_EQ("/some/dump/dir", KernelCache("/unused").dump_dir());
  ::unsetenv("QGEMM_DUMP_DIR");
  EXPECT_EQ("", KernelCache("/unused").dump_dir());
  if (saved) ::setenv("QGEMM_DUMP_DIR", restore.c_str(), 1);
}

}  // namespace
}  // namespace qgemm
