#include "jit/kernel_cache.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <thread>

#include "jit/compiler.h"
#include "jit/kernel_dump.h"
#include "util/hash.h"
#include "util/parallel.h"
#include "util/progress.h"
#include "util/error.h"
#include "util/settings.h"

namespace qgemm {
namespace fs = std::filesystem;
namespace {

constexpr char kMagic[8] = {'Q', 'G', 'E', 'M', 'M', 'K', 'C', '1'};
constexpr uint32_t kEntryVersion = 1;
constexpr const char* kSuffix = ".qkc";

void put_u64(std::string& out, uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); }
void put_bytes(std::string& out, const std::string& s) {
  put_u64(out, s.size());
  out += s;
}

// A bounds-checked reader over an entry's payload.
struct Reader {
  std::string_view data;
  size_t pos = 0;
  bool ok = true;
  uint64_t u64() {
    if (pos + 8 > data.size()) {
      ok = false;
      return 0;
    }
    uint64_t v;
    std::memcpy(&v, data.data() + pos, 8);
    pos += 8;
    return v;
  }
  std::string bytes() {
    const uint64_t n = u64();
    if (!ok || n > data.size() - pos) {
      ok = false;
      return {};
    }
    std::string s(data.substr(pos, n));
    pos += n;
    return s;
  }
};

}  // namespace

std::string KernelCache::serialize_entry(const CompiledKernel& k) {
  std::string payload;
  put_bytes(payload, k.key);
  put_bytes(payload, k.lowered_name);
  put_bytes(payload, k.cubin);
  put_bytes(payload, k.log);
  const ResourceUsage& r = k.resources;
  for (int v : {r.registers, r.spill_stores, r.spill_loads, r.stack_frame, r.static_smem})
    put_u64(payload, static_cast<uint64_t>(static_cast<int64_t>(v)));
  std::string out(kMagic, 8);
  out.append(reinterpret_cast<const char*>(&kEntryVersion), 4);
  put_u64(out, payload.size());
  put_u64(out, fnv1a64(payload));
  return out + payload;
}

struct KernelCache::State {
  std::mutex mutex;
  std::map<std::string, std::shared_future<Expected<std::shared_ptr<const CompiledKernel>>>>
      entries;
  bool warned = false;
  bool dump_warned = false;
  std::atomic<bool> disk_failed{false};  ///< the directory proved unwritable: memory only
  std::atomic<uint64_t> temp_counter{0};
};

KernelCache& KernelCache::instance() {
  static KernelCache cache(cache_dir(), !settings().disable_disk_cache);
  return cache;
}

KernelCache::KernelCache(std::string directory, bool use_disk)
    : directory_(std::move(directory)),
      use_disk_(use_disk),
      dump_dir_(qgemm::dump_dir()),
      state_(std::make_shared<State>()) {}

bool KernelCache::disk_enabled() const { return use_disk_ && !state_->disk_failed; }

std::string KernelCache::entry_path(const std::string& key) const {
  return directory_ + "/" + key + kSuffix;
}

void KernelCache::warn_once(const std::string& message) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  if (state_->warned) return;
  state_->warned = true;
  std::fprintf(stderr, "qgemm: warning: %s; kernels are cached in memory only\n", message.c_str());
}

Expected<CompiledKernel> KernelCache::read_entry(const std::string& path, const std::string& key) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(ErrorCode::kNotFound, str("no cache entry ", path));
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return parse_entry(data, key, path);
}

Expected<CompiledKernel> KernelCache::parse_entry(std::string_view data, const std::string& key,
                                                  const std::string& source) {
  auto corrupt = [&](const char* why) {
    return Status(ErrorCode::kIoError, str("cache entry ", source, " is corrupt (", why, ")"));
  };
  if (data.size() < 28 || std::memcmp(data.data(), kMagic, 8) != 0) return corrupt("bad header");
  uint32_t version;
  std::memcpy(&version, data.data() + 8, 4);
  if (version != kEntryVersion) return corrupt("unknown version");
  uint64_t size, checksum;
  std::memcpy(&size, data.data() + 12, 8);
  std::memcpy(&checksum, data.data() + 20, 8);
  const std::string_view payload = data.substr(28);
  if (payload.size() != size) return corrupt("truncated");
  if (fnv1a64(payload) != checksum) return corrupt("checksum mismatch");
  Reader r{payload};
  CompiledKernel k;
  k.key = r.bytes();
  k.lowered_name = r.bytes();
  k.cubin = r.bytes();
  k.log = r.bytes();
  int* fields[] = {&k.resources.registers, &k.resources.spill_stores, &k.resources.spill_loads,
                   &k.resources.stack_frame, &k.resources.static_smem};
  for (int* f : fields) *f = static_cast<int>(static_cast<int64_t>(r.u64()));
  if (!r.ok) return corrupt("short payload");
  if (k.key != key) return corrupt("key mismatch");
  k.from_disk = true;
  return k;
}

Status KernelCache::write_entry(const CompiledKernel& kernel) {
  std::error_code ec;
  fs::create_directories(directory_, ec);
  if (ec) return Status(ErrorCode::kIoError, str("cannot create ", directory_, ": ", ec.message()));
  const std::string final_path = entry_path(kernel.key);
  // NOTE: a unique temporary name per process and write, then an atomic rename: readers never
  // see a partial file, and concurrent writers of one key each install a complete entry.
  const std::string temp =
      str(final_path, ".tmp.", ::getpid(), ".",
          std::hash<std::thread::id>{}(std::this_thread::get_id()), ".", state_->temp_counter++);
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) return Status(ErrorCode::kIoError, str("cannot write ", temp));
    const std::string bytes = serialize_entry(kernel);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      out.close();
      fs::remove(temp, ec);
      return Status(ErrorCode::kIoError, str("short write to ", temp));
    }
  }
  fs::rename(temp, final_path, ec);
  if (ec) {
    fs::remove(temp, ec);
    return Status(ErrorCode::kIoError, str("cannot rename into ", final_path));
  }
  return Status();
}

void KernelCache::dump(const KernelSpec& spec, const std::string& key,
                       const CompiledKernel* compiled, const std::string& log) {
  const Status s = dump_kernel(dump_dir_, spec, key, compiled, log);
  if (s.ok()) return;
  std::lock_guard<std::mutex> lock(state_->mutex);
  if (state_->dump_warned) return;
  state_->dump_warned = true;
  std::fprintf(stderr, "qgemm: warning: kernel dump failed: %s\n", s.message().c_str());
}

// The disk entry if there is a valid one, else a fresh compile (stored on disk when possible).
Expected<std::shared_ptr<const CompiledKernel>> KernelCache::build(const KernelSpec& spec,
                                                                   const std::string& key) {
  if (disk_enabled()) {
    auto entry = read_entry(entry_path(key), key);
    if (entry) return std::make_shared<const CompiledKernel>(std::move(*entry));
  }
  auto compiled = compile_kernel(spec);
  if (!dump_dir_.empty())
    dump(spec, key, compiled ? &*compiled : nullptr,
         compiled ? compiled->log : compiled.status().message());
  if (!compiled) return compiled.status();
  if (disk_enabled()) {
    const Status s = write_entry(*compiled);
    if (!s.ok()) {
      state_->disk_failed = true;
      warn_once(s.message());
    }
  }
  return std::make_shared<const CompiledKernel>(std::move(*compiled));
}

Expected<std::shared_ptr<const CompiledKernel>> KernelCache::get(const KernelSpec& spec) {
  auto key = kernel_key(spec);
  if (!key) return key.status();
  std::promise<Expected<std::shared_ptr<const CompiledKernel>>> promise;
  {
    std::unique_lock<std::mutex> lock(state_->mutex);
    auto it = state_->entries.find(*key);
    if (it != state_->entries.end()) {
      auto future = it->second;
      lock.unlock();  // another thread may be building it: wait outside the lock
      return future.get();
    }
    state_->entries.emplace(*key, promise.get_future().share());
  }
  Expected<std::shared_ptr<const CompiledKernel>> result = build(spec, *key);
  promise.set_value(result);
  if (!result) {  // let a later call retry a failed build
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->entries.erase(*key);
  }
  return result;
}

std::vector<Expected<std::shared_ptr<const CompiledKernel>>> KernelCache::get_all(
    const std::vector<KernelSpec>& specs, size_t progress_threshold) {
  std::vector<Expected<std::shared_ptr<const CompiledKernel>>> results(
      specs.size(), Status(ErrorCode::kInternal, "not compiled"));
  Progress progress("compiling kernels", specs.size(), specs.size() >= progress_threshold);
  std::atomic<size_t> next{0};
  auto worker = [&] {
    for (size_t i = next++; i < specs.size(); i = next++) {
      results[i] = get(specs[i]);
      progress.advance();
    }
  };
  const size_t workers = std::min<size_t>(specs.size(), static_cast<size_t>(cpu_threads()));
  std::vector<std::thread> threads;
  for (size_t w = 1; w < workers; ++w) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  progress.finish();
  return results;
}

std::vector<KernelCache::DiskEntry> KernelCache::list() const {
  std::vector<DiskEntry> entries;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(directory_, ec)) {
    if (e.path().extension() == kSuffix)
      entries.push_back({e.path().string(), static_cast<int64_t>(e.file_size(ec))});
  }
  return entries;
}

int KernelCache::clear() {
  int removed = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(directory_, ec)) {
    const std::string name = e.path().filename().string();
    if (e.path().extension() == kSuffix ||
        name.find(std::string(kSuffix) + ".tmp.") != std::string::npos) {
      if (fs::remove(e.path(), ec)) ++removed;
    }
  }
  forget_memory();
  return removed;
}

void KernelCache::forget_memory() {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->entries.clear();
}

}  // namespace qgemm
