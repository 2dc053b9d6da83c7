#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "backend/act_order.h"
#include "backend/device_presets.h"
#include "bench/lib/recipe.h"
#include "bench/lib/recipe_kernels.h"
#include "commands.h"
#include "families/dense_act8.h"
#include "families/dense_expand.h"
#include "families/moe_grouped.h"
#include "jit/compiler.h"
#include "jit/dequantize_kernel.h"
#include "jit/kernel_cache.h"
#include "plan/jit_kernel_plan.h"
#include "plan/mma_launch.h"
#include "qgemm/device.h"
#include "qgemm/format.h"
#include "quant/gpu_act_quantizer.h"
#include "util/error.h"

namespace qgemm::cli {
namespace {

constexpr const char* kArchs[] = {"sm_75", "sm_80", "sm_86", "sm_89", "sm_90a"};

// Weight x activation -> output formats whose plans `jit check` compiles: every code width and
// kind, group / channel / block scales, integer and float zero points, global scales and all
// three outputs.
struct CheckFormat {
  const char* weight;
  const char* act;
  const char* out;
};
constexpr CheckFormat kCheckFormats[] = {
    {"int4/g128/bf16", "bf16", "bf16"},
    {"int4/g128/fp16", "fp16", "fp16"},
    {"uint4/g128/fp16/zp", "fp16", "fp16"},
    {"int3/g128/bf16", "bf16", "bf16"},
    {"int2/g128/bf16", "bf16", "bf16"},
    {"int8/channel/bf16", "bf16", "bf16"},
    {"e2m1/g32/ue8m0", "bf16", "bf16"},
    {"e2m1/g16/e4m3/global", "bf16", "bf16"},
    {"e4m3/b128x128/fp32", "bf16", "fp32"},
    {"e5m2/g128/bf16", "bf16", "bf16"},
    {"e3m2/g32/ue8m0", "bf16", "bf16"},
    {"uint8/g128/bf16/zp", "bf16", "bf16"},
    {"int5/g64/bf16", "bf16", "bf16"},
    {"int7/g128/bf16", "bf16", "bf16"},
    {"uint4/g64/fp16/zp_fp16", "fp16", "fp16"},
    {"uint4/channel/fp16/zp", "bf16", "fp16"},
    {"uint7/tensor/fp32/zp_fp32", "fp16", "bf16"},
};
// Weight types of the dequantization kernels `jit check` compiles (signed, unsigned, float).
constexpr const char* kCheckDequant[] = {"int4/g128/bf16", "uint8/g128/bf16/zp", "int3/g128/bf16",
                                         "e2m1/g32/ue8m0", "e4m3/b128x128/fp32"};
// The layer shape plans are made for. Layers of few rows add a bucket on the kw2 tile, which the
// tune candidates below cover.
constexpr int64_t kCheckN = 8192, kCheckK = 8192;

const char* kDebugHelp =
    "Debug switches (environment):\n"
    "  QGEMM_CACHE_DIR=<dir>       disk cache directory (default $XDG_CACHE_HOME/qgemm,\n"
    "                              else ~/.cache/qgemm)\n"
    "  QGEMM_DISABLE_DISK_CACHE=1  keep compiled kernels in memory only\n"
    "  QGEMM_DUMP_DIR=<dir>        write every kernel the cache compiles to\n"
    "                              <dir>/<family>-<key>.cu, .ptx, .cubin and .log\n"
    "                              (`jit check --dump DIR` does the same for one run)\n"
    "  QGEMM_TARGET_ARCH=sm_75     plan and compile for that older target on a newer GPU\n"
    "                              (kernels go to the driver as PTX), to test its code paths";

// "sm_80,sm_90a" -> {"sm_80", "sm_90a"}; an error names the bad entry and what is accepted.
Expected<std::vector<std::string>> parse_archs(const std::string& list) {
  std::vector<std::string> archs;
  size_t begin = 0;
  while (begin <= list.size()) {
    size_t end = list.find(',', begin);
    if (end == std::string::npos) end = list.size();
    const std::string arch = list.substr(begin, end - begin);
    if (std::find(std::begin(kArchs), std::end(kArchs), arch) == std::end(kArchs))
      return invalid_argument(str("--arch: '", arch, "' is not a supported target; accepted: ",
                                  "sm_75, sm_80, sm_86, sm_89, sm_90a (comma-separated)"));
    if (std::find(archs.begin(), archs.end(), arch) == archs.end()) archs.push_back(arch);
    begin = end + 1;
  }
  return archs;
}

// Collects specs without duplicates (formats whose kernels coincide) and remembers what each is.
struct SpecSet {
  std::vector<KernelSpec> specs;
  std::vector<std::string> m_ranges;  ///< the M bucket of an mma_gemm spec, "-" otherwise
  std::set<std::tuple<std::string, std::string, std::string>> seen;

  void add(KernelSpec spec, std::string m_range = "-") {
    if (!seen.insert({spec.arch, spec.name_expression, spec.source}).second) return;
    specs.push_back(std::move(spec));
    m_ranges.push_back(std::move(m_range));
  }
};

std::string m_range(const std::vector<MmaPlanEntry>& plan, size_t i) {
  const int64_t lo = i == 0 ? 1 : plan[i - 1].max_m + 1;
  return plan[i].max_m == INT64_MAX ? str(lo, "+") : str(lo, "-", plan[i].max_m);
}

// A config string without its trailing arch (the table has an arch column).
std::string config_text(const KernelSpec& spec) {
  const std::string suffix = " " + spec.arch;
  const std::string& c = spec.config;
  if (c.size() > suffix.size() && c.compare(c.size() - suffix.size(), suffix.size(), suffix) == 0)
    return c.substr(0, c.size() - suffix.size());
  return c;
}

// The kernels `jit check` compiles for one arch; plan failures are reported into `errors`.
void add_check_specs(const std::string& arch, SpecSet& set, std::vector<std::string>& errors) {
  const DeviceInfo device = *device_preset(arch);
  for (CheckFormat f : kCheckFormats) {
    // sm_75 tensor cores take fp16 only: its kernels are checked with fp16 activations.
    if (device.sm() < 80) f.act = "fp16";
    const WeightFormat weight = *WeightFormat::parse(f.weight);
    auto plan =
        plan_mma_gemm(kCheckN, kCheckK, weight, *parse_dtype(f.act), *parse_dtype(f.out), device);
    if (!plan) {
      errors.push_back(str("plan mma_gemm ", f.weight, " x ", f.act, " -> ", f.out, " for ", arch,
                           ": ", plan.status().message()));
      continue;
    }
    for (size_t i = 0; i < plan->size(); ++i) set.add((*plan)[i].config.spec(), m_range(*plan, i));
    // GPTQ's formats also as act-order layers run them (JitKernelPlan::use_act_order): the
    // decode tile staging rows, the others as their early_weights_variant.
    if (f.weight == std::string_view("int4/g128/bf16") ||
        f.weight == std::string_view("uint4/g128/fp16/zp"))
      for (size_t i = 0; i < plan->size(); ++i) {
        const MmaGemmConfig c = (*plan)[i].config.early_weights_variant();
        if (c.early_weights) set.add(c.spec(), "act-order " + m_range(*plan, i));
        if (const int rows = i == 0 ? act_order_rows((*plan)[i].config, kCheckK, device) : 0)
          set.add(with_act_order_rows((*plan)[i].config, rows, kCheckK).spec(),
                  str("act-order rows 1-", rows));
      }
    // The grouped MoE tiles of the same layer in a stack of 8 (gathered rows by cp.async, or
    // sorted rows by TMA).
    if (auto grouped = plan_moe_grouped(kCheckN, kCheckK, weight, *parse_dtype(f.act),
                                        *parse_dtype(f.out), device, 8)) {
      for (size_t i = 0; i < grouped->size(); ++i)
        set.add((*grouped)[i].config.spec(), "moe " + m_range(*grouped, i));
    } else {
      errors.push_back(str("plan moe_grouped ", f.weight, " x ", f.act, " -> ", f.out, " for ",
                           arch, ": ", grouped.status().message()));
    }
    // The expansion kernel is compiled for every format, even where the hand-off is off.
    set.add(plan->back().config.dequant_spec(), "cuBLAS hand-off");
    // The wgmma variants `qgemm tune` may choose on Hopper: the smallest, a two-warpgroup and
    // the largest token tile, the warp-specialized 128-row tiles, the 64-row one with two
    // compute warpgroups along K (the planner's for layers of few rows), and the prescaled ws
    // tiles, which only some formats take (bf16 in and out, no float zero points, two batches
    // per stage): a format they refuse is no error.
    struct CheckTile {
      const char* text;
      bool every_format;
    };
    if (arch == "sm_90a")
      for (const CheckTile& t :
           {CheckTile{"w4x1 t1 f2 s6 k128 wg", true}, CheckTile{"w4x2 t1 f8 s4 k128 wg", true},
            CheckTile{"w4x1 t1 f16 s4 k128 wg", true}, CheckTile{"w8x1 t1 f8 s6 k128 ws", true},
            CheckTile{"w8x1 t1 f16 s5 k128 ws", true}, CheckTile{"w8x1 t1 f8 s4 k256 ws", true},
            CheckTile{"w4x1 t1 f8 s6 k128 ws kw2", true},
            CheckTile{"w8x1 t1 f8 s6 k128 ws ps", false},
            CheckTile{"w8x1 t1 f16 s5 k128 ws ps", false},
            CheckTile{"w8x1 t1 f32 s6 k64 ws ps", false}}) {
        auto c = mma_config_for(*MmaTile::parse(t.text), weight, *parse_dtype(f.act),
                                *parse_dtype(f.out), device);
        if (c)
          set.add(c->spec(), "tune candidate");
        else if (t.every_format)
          errors.push_back(
              str("wgmma tile ", t.text, " for ", f.weight, ": ", c.status().message()));
      }
  }
  set.add(moe_tiles_spec(arch));
  set.add(moe_sort_rows_spec(arch));
  set.add(moe_route_spec(arch));
  for (DType t : {DType::bf16(), DType::fp16()}) {
    set.add(moe_activation_spec(t, arch));
    set.add(moe_reduce_spec(t, arch));
  }
  set.add(act_gather_spec(arch, 64 * 1024));  // the shared memory limit is set at load
  for (const char* w : kCheckDequant)
    set.add(DequantizeConfig{*WeightFormat::parse(w), DType::bf16(), arch}.spec());
  // The GPU activation quantizers (every target) and the 8-bit-activation tiles (sm_90a) of
  // each M bucket, clusters included.
  for (const char* act :
       {"e4m3/token", "e4m3/tensor", "e4m3/g128/fp32", "mxfp8", "int8/token", "nvfp4"})
    for (auto kernel : {ActQuantConfig::Kernel::kQuantize, ActQuantConfig::Kernel::kAmax,
                        ActQuantConfig::Kernel::kDequantize})
      set.add(ActQuantConfig{*ActFormat::parse(act), DType::bf16(), arch, kernel}.spec());
  if (arch == "sm_90a")
    for (const auto& [w, a] : {std::pair{"e4m3/channel/fp32", "e4m3/token"},
                               std::pair{"e4m3/b128x128/fp32", "e4m3/g128/fp32"},
                               std::pair{"int8/channel/fp32", "int8/token"}})
      for (int64_t m : {1, 16, 32, 64, 4096}) {
        set.add(
            DenseAct8Config::for_layer(*WeightFormat::parse(w), *ActFormat::parse(a), DType::bf16(),
                                       arch, m, kCheckN, kCheckK, device.multiprocessors)
                .spec(),
            str("M ", m));
        // Their grouped MoE form, by rows per expert.
        set.add(moe_grouped_act8_config(*WeightFormat::parse(w), *ActFormat::parse(a),
                                        DType::bf16(), device, m, kCheckN, kCheckK)
                    .spec(),
                str("moe ", m));
      }
}

struct CheckOptions {
  std::string archs = "sm_75,sm_80,sm_89,sm_90a";
  bool use_cache = false;
  std::string dump_dir;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int run_check(const CheckOptions& opt) {
  auto archs = parse_archs(opt.archs);
  if (!archs) {
    std::fprintf(stderr, "qgemm jit check: %s\n", archs.status().message().c_str());
    return 2;
  }
  SpecSet set;
  std::vector<std::string> errors;
  for (const std::string& arch : *archs) add_check_specs(arch, set, errors);

  // NOTE: a cache without disk on purpose: `check` must really compile, not read old entries.
  KernelCache scratch("", /*use_disk=*/false);
  KernelCache& cache = opt.use_cache ? KernelCache::instance() : scratch;
  if (!opt.dump_dir.empty()) cache.set_dump_dir(opt.dump_dir);
  const auto t0 = std::chrono::steady_clock::now();
  const auto results = cache.get_all(set.specs, 1);
  const double wall = seconds_since(t0);

  std::printf("%-11s %-48s %-7s %-8s %5s %8s %9s %6s %9s\n", "family", "config", "arch", "M",
              "regs", "smem", "spill s/l", "stack", "compile");
  std::vector<std::string> spills;
  std::vector<std::string> serialized;  // ptxas C7513-C7515: each wgmma waits for the one before
  double compile_total = 0;
  struct ArchSummary {
    int kernels = 0, max_regs = 0, max_smem = 0, failed = 0;
    std::string max_regs_config;
  };
  std::vector<ArchSummary> summary(archs->size());
  for (size_t i = 0; i < set.specs.size(); ++i) {
    const KernelSpec& s = set.specs[i];
    const size_t a = std::find(archs->begin(), archs->end(), s.arch) - archs->begin();
    ArchSummary& sum = summary[a];
    ++sum.kernels;
    if (!results[i]) {
      ++sum.failed;
      std::printf("%-11s %-48s %-7s %-8s %5s\n", s.family.c_str(), config_text(s).c_str(),
                  s.arch.c_str(), set.m_ranges[i].c_str(), "ERROR");
      errors.push_back(results[i].status().message());
      continue;
    }
    const CompiledKernel& k = **results[i];
    const ResourceUsage& r = k.resources;
    const int smem = s.dynamic_smem + r.static_smem;
    const int64_t smem_limit = device_preset(s.arch)->smem_per_block;
    if (smem > smem_limit)
      errors.push_back(str(s.family, " [", config_text(s), "] for ", s.arch, " uses ", smem,
                           " bytes of shared memory, the target allows ", smem_limit));
    compile_total += k.compile_ms;
    std::printf("%-11s %-48s %-7s %-8s %5d %8d %4d/%-4d %6d %9s\n", s.family.c_str(),
                config_text(s).c_str(), s.arch.c_str(), set.m_ranges[i].c_str(), r.registers, smem,
                r.spill_stores, r.spill_loads, r.stack_frame,
                k.from_disk ? "cached" : str(static_cast<int>(k.compile_ms + 0.5), " ms").c_str());
    if (r.registers > sum.max_regs) {
      sum.max_regs = r.registers;
      sum.max_regs_config = str(s.family, " [", config_text(s), "]");
    }
    sum.max_smem = std::max(sum.max_smem, smem);
    if (r.spill_stores > 0 || r.spill_loads > 0 || r.stack_frame > 0) {
      ++sum.failed;
      spills.push_back(str(s.family, " [", config_text(s), "] for ", s.arch, ": ", r.spill_stores,
                           " bytes spill stores, ", r.spill_loads, " bytes spill loads, ",
                           r.stack_frame, " bytes stack frame"));
    }
    if (reports_serialized_wgmma(k.log)) {
      ++sum.failed;
      serialized.push_back(str(s.family, " [", config_text(s), "] for ", s.arch));
    }
  }
  for (const std::string& e : errors) std::printf("\nerror: %s\n", e.c_str());
  if (!spills.empty()) std::printf("\n");
  for (const std::string& s : spills) std::printf("spill: %s\n", s.c_str());
  for (const std::string& s : serialized)
    std::printf("serialized wgmma (ptxas C751x): %s\n", s.c_str());

  std::printf("\n");
  for (size_t a = 0; a < archs->size(); ++a) {
    const ArchSummary& sum = summary[a];
    std::printf("%-7s %3d kernels, max %d registers (%s), max smem %d bytes, %d failing\n",
                (*archs)[a].c_str(), sum.kernels, sum.max_regs, sum.max_regs_config.c_str(),
                sum.max_smem, sum.failed);
  }
  const bool ok = errors.empty() && spills.empty() && serialized.empty();
  std::printf(
      "jit check: %zu kernels in %.1f s (%.1f s of compiling), %zu errors, %zu spilling, %zu "
      "with serialized wgmma: %s\n",
      set.specs.size(), wall, compile_total / 1000, errors.size(), spills.size(), serialized.size(),
      ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}

std::string size_text(int64_t bytes) {
  char buf[32];
  if (bytes >= (1 << 20))
    std::snprintf(buf, sizeof buf, "%.1f MiB", bytes / double(1 << 20));
  else if (bytes >= (1 << 10))
    std::snprintf(buf, sizeof buf, "%.1f KiB", bytes / double(1 << 10));
  else
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  return buf;
}

int run_list() {
  KernelCache& cache = KernelCache::instance();
  std::printf("cache directory: %s%s\n", cache.directory().c_str(),
              cache.disk_enabled() ? "" : " (disk cache disabled by QGEMM_DISABLE_DISK_CACHE)");
  auto entries = cache.list();
  std::sort(entries.begin(), entries.end(),
            [](const auto& a, const auto& b) { return a.path < b.path; });
  int64_t total = 0;
  for (const auto& e : entries) {
    const std::filesystem::path path(e.path);
    auto entry = KernelCache::read_entry(e.path, path.stem().string());
    std::printf("  %s  %10s  %s\n", path.filename().c_str(), size_text(e.bytes).c_str(),
                entry ? "" : "corrupt (rebuilt on next use)");
    total += e.bytes;
  }
  std::printf("%zu entries, %s\n", entries.size(), size_text(total).c_str());
  return 0;
}

int run_clear() {
  KernelCache& cache = KernelCache::instance();
  const int removed = cache.clear();
  std::printf("removed %d cache files from %s\n", removed, cache.directory().c_str());
  return 0;
}

// The local GPU when `arch` is empty or matches it, else the preset for `arch`.
Expected<DeviceInfo> warm_device(const std::string& arch) {
  const std::vector<DeviceInfo> devices = list_devices();
  if (arch.empty()) {
    if (devices.empty())
      return invalid_argument(
          str("no GPU here (", no_gpu_reason(),
              "); pass --arch sm_75, sm_80, sm_86, sm_89 or sm_90a to warm the cache ",
              "for another machine"));
    return devices.front();
  }
  auto archs = parse_archs(arch);
  if (!archs) return archs.status();
  if (archs->size() != 1) return invalid_argument("--arch: warm takes one target");
  for (const DeviceInfo& d : devices)
    if (d.arch() == arch) return d;
  return device_preset(arch);
}

int run_warm(const std::string& recipe_path, const std::string& arch) {
  auto recipe = bench::load_recipe(recipe_path);
  if (!recipe) {
    std::fprintf(stderr, "qgemm jit warm: %s\n", recipe.status().message().c_str());
    return 2;
  }
  auto device = warm_device(arch);
  if (!device) {
    std::fprintf(stderr, "qgemm jit warm: %s\n", device.status().message().c_str());
    return 2;
  }
  KernelCache& cache = KernelCache::instance();
  if (!cache.disk_enabled()) {
    std::fprintf(stderr,
                 "qgemm jit warm: the disk cache is disabled (QGEMM_DISABLE_DISK_CACHE); "
                 "nothing would be kept\n");
    return 2;
  }
  const std::string target = device->arch();
  const bench::RecipeKernels set = bench::recipe_kernels(*recipe, *device);
  for (const std::string& why : set.skipped) std::printf("skipped %s\n", why.c_str());
  std::printf("warming %zu kernels for %s (%s) into %s\n", set.specs.size(), target.c_str(),
              device->name.c_str(), cache.directory().c_str());
  const auto t0 = std::chrono::steady_clock::now();
  const auto results = cache.get_all(set.specs, 1);
  const double wall = seconds_since(t0);
  int compiled = 0, cached = 0, failed = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i]) {
      ++failed;
      std::fprintf(stderr, "error: %s\n", results[i].status().message().c_str());
    } else {
      ++((*results[i])->from_disk ? cached : compiled);
    }
  }
  std::printf("warmed %zu kernels in %.1f s: %d compiled, %d already cached, %d failed\n",
              set.specs.size(), wall, compiled, cached, failed);
  if (!cache.disk_enabled()) {
    std::fprintf(stderr, "qgemm jit warm: could not write to %s\n", cache.directory().c_str());
    return 1;
  }
  return failed == 0 ? 0 : 1;
}

void fail_on(int rc) {
  if (rc != 0) throw CLI::RuntimeError(rc);
}

}  // namespace

void add_jit_command(CLI::App& app) {
  auto* jit = app.add_subcommand("jit", "Check, list, clear and warm the JIT kernel cache");
  jit->require_subcommand(1);
  jit->footer(kDebugHelp);

  auto check_opt = std::make_shared<CheckOptions>();
  auto* check = jit->add_subcommand(
      "check",
      "Compile every kernel family for representative configs (no GPU needed); fail on "
      "compile errors, spills, stack frames or serialized wgmma");
  check
      ->add_option("--arch", check_opt->archs,
                   "Targets, comma-separated: sm_75, sm_80, sm_86, sm_89, sm_90a")
      ->default_val(check_opt->archs);
  check->add_flag("--use-cache", check_opt->use_cache,
                  "Use the normal disk cache (default: compile everything afresh in memory)");
  check->add_option("--dump", check_opt->dump_dir,
                    "Write each compiled kernel's .cu, .ptx, .cubin and .log into this directory "
                    "(as QGEMM_DUMP_DIR)");
  check->footer(kDebugHelp);
  check->callback([check_opt] { fail_on(run_check(*check_opt)); });

  jit->add_subcommand("list", "The cache directory and its entries")->callback([] {
    fail_on(run_list());
  });
  jit->add_subcommand("clear", "Remove every cache entry")->callback([] { fail_on(run_clear()); });

  auto recipe = std::make_shared<std::string>();
  auto arch = std::make_shared<std::string>();
  auto* warm = jit->add_subcommand(
      "warm",
      "Compile the JIT kernels of a bench recipe (dense and MoE problems) into the disk cache");
  warm->add_option("recipe", *recipe, "Bench recipe (YAML)")->required();
  warm->add_option("--arch", *arch,
                   "Target: sm_80, sm_86, sm_89 or sm_90a (default: the local GPU; required "
                   "without one)");
  warm->footer(kDebugHelp);
  warm->callback([recipe, arch] { fail_on(run_warm(*recipe, *arch)); });
}

}  // namespace qgemm::cli
