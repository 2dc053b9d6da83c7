#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "api/router.h"
#include "backend/cublaslt_library.h"
#include "backend/device_presets.h"
#include "backend/grouped_layer.h"
#include "backend/widened_act_layer.h"
#include "commands.h"
#include "families/dense_act8.h"
#include "families/moe_grouped.h"
#include "jit/kernel_cache.h"
#include "jit/kernel_loader.h"
#include "layer_formats.h"
#include "plan/jit_kernel_plan.h"
#include "plan/mma_launch.h"
#include "qgemm/device.h"
#include "util/error.h"
#include "util/parallel.h"
#include "util/settings.h"

namespace qgemm::cli {
namespace {

struct PlanOptions {
  std::vector<int64_t> m = {1, 16, 64, 256, 1024, 4096};
  int64_t n = 0, k = 0;
  std::string weight, act = "bf16", out = "bf16", arch;
  int64_t experts = 0;
  int top_k = 0;
  bool explain = false;
  bool warm = false;
  std::string tuning_table;
};

int fail(const Status& s) {
  std::fprintf(stderr, "qgemm plan: %s\n", s.message().c_str());
  return 2;
}

// Compiles the plan's kernels into `cache` and returns the wall time in seconds.
double compile_all(KernelCache& cache, const std::vector<KernelSpec>& specs, int& failed) {
  const auto t0 = std::chrono::steady_clock::now();
  failed = 0;
  for (const auto& r : cache.get_all(specs, 1)) failed += r.ok() ? 0 : 1;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// An expert stack (GroupedLinear): the gathered tiles by rows per expert, one launch over every
// expert (routed layout: M tokens times top-k slots spread over the experts).
int plan_grouped(const PlanOptions& o, LayerProblem p) {
  if (o.top_k < 1 || o.top_k > o.experts)
    return fail(invalid_argument(str("--experts ", o.experts, " needs --topk in 1..", o.experts)));
  p.experts = o.experts;
  const Support jit = grouped_jit_support(p);
  std::printf("layer    expert stack E=%lld, top-k=%d (GroupedLinear, routed)\n",
              (long long)o.experts, o.top_k);
  if (!jit.ok) {
    std::printf("backend  cpu (the jit grouped kernels: %s)\n", jit.reason.c_str());
    return 0;
  }
  std::printf("backend  jit: one tile-list kernel, then one gathered GEMM launch per call\n");
  // Quantized activations run on the 8-bit tiles where they take the pair, else widened to the
  // 16-bit input type on the weight-only tiles (as build_grouped_jit).
  const bool act8 = p.act.is_quantized() && grouped_act8_support(p).ok;
  if (p.act.is_quantized() && !act8)
    std::printf("         activations widened to %s, then the weight-only tiles\n",
                p.input.name().c_str());
  std::vector<MmaPlanEntry> plan;
  if (!act8) {
    const LayerProblem q = p.act.is_quantized() ? widened_problem(p) : p;
    auto planned =
        plan_moe_grouped(q.n, q.k, q.weight, q.act.type, q.out, q.device_info, q.experts);
    if (!planned) return fail(planned.status());
    plan = std::move(*planned);
  }
  for (int64_t m : o.m) {
    const int64_t rows = moe_rows_per_expert(m * o.top_k, o.experts);
    std::string tile;
    if (act8) {
      tile = moe_grouped_act8_config(p.weight, p.act, p.out, p.device_info, rows, p.n, p.k)
                 .to_string();
    } else {
      size_t b = 0;
      while (b + 1 < plan.size() && rows > plan[b].max_m) ++b;
      tile = plan[b].config.to_string();
    }
    std::printf("  M=%-6lld %lld rows per expert hit: %s\n", (long long)m, (long long)rows,
                tile.c_str());
  }
  return 0;
}

int run_plan(const PlanOptions& o) {
  auto formats = parse_layer_formats(o.weight, o.act, o.out);
  if (!formats) return fail(formats.status());
  const auto& [wf, af, out] = *formats;
  if (Status nk = check_positive_nk(o.n, o.k); !nk.ok()) return fail(nk);
  if (o.m.empty() || *std::min_element(o.m.begin(), o.m.end()) <= 0)
    return fail(invalid_argument("--m takes positive token counts, e.g. --m 1,16,256"));
  Status shape = wf.check_shape(o.n, o.k);
  if (!shape.ok()) return fail(shape);

  // The device: the local GPU, or a described one (--arch) for planning without it.
  LayerProblem p;
  p.n = o.n;
  p.k = o.k;
  p.weight = wf;
  p.act = af;
  p.out = out;
  p.device = 0;
  const auto devices = list_devices();
  if (!o.arch.empty()) {
    auto preset = device_preset(o.arch);
    if (!preset) return fail(preset.status());
    p.device_info = *preset;
    p.runtime_checks = !devices.empty() && devices[0].arch() == preset->arch();
  } else if (!devices.empty()) {
    p.device_info = devices[0];
  } else {
    return fail(invalid_argument(str("no GPU here (", no_gpu_reason(),
                                     "); pass --arch sm_80, sm_86, sm_89, sm_90a or h200")));
  }
  std::printf("layer    N=%lld K=%lld weight=%s act=%s out=%s\n", (long long)o.n, (long long)o.k,
              wf.to_string().c_str(), af.to_string().c_str(), out.name().c_str());
  std::printf("device   %s (%s, %d SMs, %lld KB shared memory per block%s)\n",
              p.device_info.name.c_str(), p.device_info.arch().c_str(),
              p.device_info.multiprocessors, (long long)(p.device_info.smem_per_block >> 10),
              o.arch.empty() ? "" : "; described by --arch");
  if (o.experts > 0) return plan_grouped(o, p);

  auto r = route(p, BackendKind::kAuto);
  if (!r) return fail(r.status());
  std::printf("backends\n%s", r->explain().c_str());
  if (r->chosen->kind() != BackendKind::kJit) {
    std::printf("plan     every M: %s\n", backend_name(r->chosen->kind()));
    return 0;
  }

  // Quantized activations: the 8-bit tiles, or the weight-only tiles on them widened to 16 bits.
  DType act_type = af.type;
  if (af.is_quantized()) {
    if (dense_act8_supports(wf, af, out, p.device_info).ok) {
      std::printf("plan     dense_act8: 8-bit activations on wgmma (tokens per CTA by M)\n");
      for (int64_t m : o.m) {
        const DenseAct8Config c = DenseAct8Config::for_layer(
            wf, af, out, p.device_info.arch(), m, o.n, o.k, p.device_info.multiprocessors);
        std::printf("  M=%-6lld dense_act8 %s, %d K splits\n", (long long)m, c.to_string().c_str(),
                    dense_act8_splits(o.n, m, o.k, c.block_n, p.device_info.multiprocessors));
      }
      return 0;
    }
    act_type = p.input;
    std::printf(
        "plan     no 8-bit kernel takes %s x %s: each call widens the activations to %s "
        "on the GPU, then the weight-only tiles run\n",
        wf.to_string().c_str(), af.to_string().c_str(), act_type.name().c_str());
  }
  const int64_t max_m = *std::max_element(o.m.begin(), o.m.end());
  const bool cublas = !p.runtime_checks || cublaslt_library().ok();
  auto plan = plan_jit_kernels(o.n, o.k, wf, act_type, out, p.device_info, cublas, o.tuning_table);
  if (!plan) return fail(plan.status());
  std::printf("plan     from %s\n", plan->source.c_str());
  for (const std::string& note : plan->notes) std::printf("  note: %s\n", note.c_str());
  std::vector<std::string> ranges;
  const std::vector<KernelSpec> specs = plan->kernels(max_m, &ranges);
  const auto expansions = std::count_if(
      specs.begin(), specs.end(), [](const KernelSpec& s) { return s.family == "dense_expand"; });
  std::printf("kernels  %zu to compile for M up to %lld%s\n", specs.size(), (long long)max_m,
              expansions > 0 ? str(" (", specs.size() - expansions,
                                   " GEMM kernels and the expansion "
                                   "kernel every layer of the format shares)")
                                   .c_str()
                             : "");
  for (size_t i = 0; i < specs.size(); ++i) {
    std::printf("  M %-26s %s [%s]", ranges[i].c_str(), specs[i].family.c_str(),
                specs[i].config.c_str());
    if (o.explain && specs[i].threads > 0)
      std::printf("  %d threads, %d B shared", specs[i].threads, specs[i].dynamic_smem);
    std::printf("\n");
  }
  std::printf("per M\n");
  for (int64_t m : o.m) {
    if (plan->bucket_for(m).expand) {
      std::printf("  M=%-6lld dense_expand: the packed weight to %s, then cuBLASLt\n", (long long)m,
                  act_type.name().c_str());
      continue;
    }
    const MmaGemmConfig& c = plan->bucket_for(m).config;
    // --explain compiles the kernel (or reads it from the disk cache) for its registers, which
    // decide the CTAs per SM, and so the splits, as in a run.
    int registers = 0;
    if (o.explain)
      if (auto k = KernelCache::instance().get(c.spec()); k) registers = (*k)->resources.registers;
    const bool programmatic = c.programmatic_launch() && !settings().no_programmatic_launch;
    const int splits = mma_splits(c, m, o.n, o.k, p.device_info, registers, programmatic);
    const int64_t grid_x = ((o.n + 15) / 16 + c.tiles_n * c.warps_n - 1) / (c.tiles_n * c.warps_n);
    const int64_t grid_y = (m + c.block_m() - 1) / c.block_m();
    std::printf("  M=%-6lld %s %s, grid %lldx%lldx%d", (long long)m,
                std::string(plan->bucket_for(m).family->name()).c_str(), c.tiling().c_str(),
                (long long)grid_x, (long long)grid_y, splits);
    if (o.explain) {
      // Waves of the CTAs that fit at once (shared memory, threads, registers): a grid just
      // past a whole number of waves leaves SMs idle in its last one.
      const int64_t ctas = grid_x * grid_y * splits;
      const int per_sm = mma_resident_estimate(c, p.device_info, registers);
      const double waves = mma_waves(c, ctas, p.device_info, registers);
      // A kernel that did not compile has no register count: the CTAs per SM are then the
      // shared-memory and thread bound only, and the line says so.
      const std::string regs =
          registers > 0 ? str(registers, " registers") : std::string("registers unknown");
      // NOTE: how many clusters run at once only the driver says (cuOccupancyMaxActiveClusters,
      // which JitLayer::prepare asks); where fewer fit than the tiles, a run lowers the splits.
      std::printf(
          " (%lld CTAs on %d SMs, %d K splits%s, %d B shared, %s, up to %d CTAs/SM: %.2f waves%s)",
          (long long)ctas, p.device_info.multiprocessors, splits,
          mma_split_cluster(c, splits, waves) <= 1 ? ""
          : c.warp_specialized
              ? " summed in a cluster, fewer where the GPU runs fewer such clusters at once"
              : " summed in a cluster pair",
          c.smem_bytes(), regs.c_str(), per_sm, waves, programmatic ? ", programmatic launch" : "");
      const MmaTailSplit tail =
          mma_tail_split(c, grid_x, grid_y, splits, c.k_stages(o.k), p.device_info, registers);
      if (tail.splits > 1)
        std::printf(
            "\n           as two launches: %lldx%lld CTAs (whole waves), then the last %lld "
            "columns with K split %d ways%s (%lld CTAs)",
            (long long)tail.main_x, (long long)grid_y, (long long)(grid_x - tail.main_x),
            tail.splits, mma_split_cluster(c, tail.splits) > 1 ? " in a cluster" : "",
            (long long)((grid_x - tail.main_x) * grid_y * tail.splits));
    }
    std::printf("\n");
  }
  if (!o.explain)
    std::printf(
        "         (K splits as far as shared memory decides; a run also counts the compiled\n"
        "         kernel's registers, which can leave fewer: --explain compiles for them)\n");

  if (o.warm) {
    // Cold: a fresh cache directory; warm: the same directory again (what a restart sees).
    const std::string dir =
        str(std::filesystem::temp_directory_path().string(), "/qgemm-plan-warm-",
            std::chrono::steady_clock::now().time_since_epoch().count());
    KernelCache cache(dir, true);
    int failed = 0;
    const double cold = compile_all(cache, specs, failed);
    cache.forget_memory();
    int failed_warm = 0;
    const double warm = compile_all(cache, specs, failed_warm);
    std::printf(
        "warm-up  %zu kernels: cold %.2f s (compile on %d threads), warm disk cache %.3f s%s\n",
        specs.size(), cold, cpu_threads(), warm,
        failed + failed_warm ? " (some kernels FAILED to compile)" : "");
    std::printf(
        "         (NVRTC compile and disk read only; loading modules onto a GPU is not "
        "included)\n");
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    if (failed + failed_warm) return 1;
  }
  return 0;
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "plan", "Which backend and which kernels run a layer at each M, and why (no GPU needed)");
  auto o = std::make_shared<PlanOptions>();
  cmd->add_option("--m", o->m, "Token counts, e.g. 1,16,256")->delimiter(',');
  cmd->add_option("--n", o->n, "Output features")->required();
  cmd->add_option("--k", o->k, "Input features")->required();
  cmd->add_option("--weight", o->weight, "Weight spec or alias")->required();
  cmd->add_option("--act", o->act, "Activation spec")->default_val("bf16");
  cmd->add_option("--out", o->out, "Output type")->default_val("bf16");
  cmd->add_option("--experts", o->experts, "Experts (MoE)")->default_val(0);
  cmd->add_option("--topk", o->top_k, "Experts per token (MoE)")->default_val(0);
  cmd->add_option("--arch", o->arch,
                  "Plan for a described GPU: sm_80, sm_86, sm_89, sm_90a or h200 (default: this "
                  "machine's GPU)");
  cmd->add_option("--tuning-table", o->tuning_table,
                  "Tuning table from `qgemm tune` (default: the default search path; 'none': "
                  "heuristics only)");
  cmd->add_flag("--explain", o->explain, "Add launch shapes and kernel resources");
  cmd->add_flag("--warm", o->warm, "Compile the plan's kernels: cold, then from a warm disk cache");
  cmd->callback([o] {
    const int rc = run_plan(*o);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace qgemm::cli
