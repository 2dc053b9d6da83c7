// qgemm inspect CHECKPOINT: the quantized linear layers of a checkpoint, their formats as read,
// and the kernels that would run them.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "backend/device_presets.h"
#include "commands.h"
#include "io/checkpoint.h"
#include "plan/jit_kernel_plan.h"
#include "qgemm/device.h"
#include "util/error.h"

namespace qgemm::cli {
namespace {

struct InspectOptions {
  std::string path;
  std::vector<int64_t> m = {1, 16, 256, 4096};
  std::string arch;
};

int run_inspect(const InspectOptions& o) {
  auto fail = [](const Status& s) {
    std::fprintf(stderr, "qgemm inspect: %s\n", s.message().c_str());
    return 2;
  };
  auto checkpoint = QuantizedCheckpoint::open(o.path);
  if (!checkpoint) return fail(checkpoint.status());
  // The GPU to plan for: --arch, else this machine's; none: formats only.
  DeviceInfo device;
  if (!o.arch.empty()) {
    auto preset = device_preset(o.arch);
    if (!preset) return fail(preset.status());
    device = *preset;
  } else if (const auto devices = list_devices(); !devices.empty()) {
    device = devices[0];
  }
  std::printf("checkpoint %s: %s, %zu quantized linear layers in %zu file(s)\n", o.path.c_str(),
              checkpoint_kind_name(checkpoint->kind), checkpoint->layers.size(),
              checkpoint->files.files().size());
  if (device.sm() == 0) std::printf("(no GPU here and no --arch: the plans are left out)\n");
  double import_seconds = 0;
  int64_t largest_bf16_bytes = 0;
  for (const std::string& layer : checkpoint->layers) {
    const auto start = std::chrono::steady_clock::now();
    auto imported = checkpoint->import(layer);
    import_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!imported) return fail(imported.status());
    largest_bf16_bytes = std::max(
        largest_bf16_bytes, imported->weight.experts * imported->weight.n * imported->weight.k * 2);
    const QuantizedWeight& w = imported->weight;
    const std::string experts = w.experts > 1 ? str(w.experts, " experts, ") : "";
    std::printf("%-48s %sN=%-6lld K=%-6lld %s%s%s%s\n", layer.c_str(), experts.c_str(),
                (long long)w.n, (long long)w.k, w.format.to_string().c_str(),
                imported->k_order.empty() ? "" : ", act-order",
                imported->bias.empty() ? "" : ", bias",
                imported->interleaved_gate_up ? ", gate/up rows interleaved" : "");
    if (device.sm() == 0) continue;
    auto plan = plan_jit_kernels(w.n, w.k, w.format, DType::bf16(), DType::bf16(), device, true,
                                 kNoTuningTable);
    if (!plan) {
      std::printf("    no jit plan: %s\n", plan.status().message().c_str());
      continue;
    }
    for (int64_t m : o.m) {
      const JitBucket& b = plan->bucket_for(m);
      std::printf("    M=%-6lld %s %s\n", (long long)m, std::string(b.family->name()).c_str(),
                  b.expand ? "then cuBLASLt" : b.config.tiling().c_str());
    }
  }
  // One layer at a time: the host holds the file mapping and one imported layer.
  std::printf("read     %zu layers into the canonical layout in %.2f s (largest %.1f MB as bf16)\n",
              checkpoint->layers.size(), import_seconds, largest_bf16_bytes / 1e6);
  return 0;
}

}  // namespace

void add_inspect_command(CLI::App& app) {
  auto o = std::make_shared<InspectOptions>();
  auto* cmd = app.add_subcommand(
      "inspect", "The quantized linear layers of a checkpoint, as read, and their kernels");
  cmd->add_option("checkpoint", o->path, "Checkpoint directory (config.json, *.safetensors)")
      ->required();
  cmd->add_option("--m", o->m, "Token counts to show the kernels of")->delimiter(',');
  cmd->add_option("--arch", o->arch, "Plan for a described GPU (sm_80, sm_90a, h200, ...)");
  cmd->callback([o] {
    const int rc = run_inspect(*o);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace qgemm::cli
