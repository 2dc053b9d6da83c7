// JIT timings: a cold NVRTC compile of the largest Hopper GEMM variant, a load of it from the disk
// cache, and an in-process cache hit. Run: ./build/qgemm_jit_benchmark.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "backend/device_presets.h"
#include "jit/compiler.h"
#include "jit/kernel_cache.h"
#include "plan/jit_kernel_plan.h"
#include "plan/mma_launch.h"
#include "families/dense_expand.h"
#include "qgemm/device.h"

namespace qgemm {
namespace {

// The M > 64 bucket of int4/g128/bf16 on an H200: the biggest tile, the longest compile.
MmaGemmConfig largest_hopper_config() {
  auto plan = plan_mma_gemm(8192, 8192, *WeightFormat::parse("int4/g128/bf16"), DType::bf16(),
                            DType::bf16(), *device_preset("h200"));
  if (!plan) {
    std::fprintf(stderr, "planning failed: %s\n", plan.status().message().c_str());
    std::abort();
  }
  return plan->back().config;
}

// A scratch cache directory, removed at exit.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = "/tmp/qgemm-jit-bench-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) std::abort();
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A kernel cache of its own, in a scratch directory (gone after the cache).
class ScratchCache {
 public:
  KernelCache& cache() { return cache_; }

 private:
  ScratchDir dir_;
  KernelCache cache_{dir_.path()};
};

void fail(benchmark::State& state, const Status& s) { state.SkipWithError(s.message().c_str()); }

// NOTE: a comment with the iteration number makes every key new, so each get() compiles.
void BM_ColdCompile(benchmark::State& state) {
  ScratchCache scratch;
  const KernelSpec base = largest_hopper_config().spec();
  int64_t i = 0;
  for (auto _ : state) {
    KernelSpec spec = base;
    spec.source += "// cold " + std::to_string(i++) + "\n";
    auto k = scratch.cache().get(spec);
    if (!k) return fail(state, k.status());
    benchmark::DoNotOptimize(k->get());
  }
  state.SetLabel(base.config.c_str());
}
BENCHMARK(BM_ColdCompile)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();

void BM_DiskLoad(benchmark::State& state) {
  ScratchCache scratch;
  KernelCache& cache = scratch.cache();
  const KernelSpec spec = largest_hopper_config().spec();
  if (auto k = cache.get(spec); !k) return fail(state, k.status());
  for (auto _ : state) {
    cache.forget_memory();
    auto k = cache.get(spec);
    if (!k) return fail(state, k.status());
    if (!(*k)->from_disk) return fail(state, Status(ErrorCode::kInternal, "not read from disk"));
    benchmark::DoNotOptimize(k->get());
  }
  const std::string label =
      std::to_string(std::filesystem::file_size(cache.entry_path(*kernel_key(spec)))) +
      " byte entry";
  state.SetLabel(label.c_str());
}
BENCHMARK(BM_DiskLoad)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_MemoryHit(benchmark::State& state) {
  ScratchCache scratch;
  const KernelSpec spec = largest_hopper_config().spec();
  if (auto k = scratch.cache().get(spec); !k) return fail(state, k.status());
  for (auto _ : state) {
    auto k = scratch.cache().get(spec);
    benchmark::DoNotOptimize(k);
  }
}
BENCHMARK(BM_MemoryHit)->Unit(benchmark::kMicrosecond);

// What a caller pays per hit when it rebuilds the spec from the config each time.
void BM_MemoryHitWithSpecGeneration(benchmark::State& state) {
  ScratchCache scratch;
  const MmaGemmConfig config = largest_hopper_config();
  if (auto k = scratch.cache().get(config.spec()); !k) return fail(state, k.status());
  for (auto _ : state) {
    auto k = scratch.cache().get(config.spec());
    benchmark::DoNotOptimize(k);
  }
}
BENCHMARK(BM_MemoryHitWithSpecGeneration)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace qgemm

BENCHMARK_MAIN();
