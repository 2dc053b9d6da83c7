// qgemm inspect CHECKPOINT: the quantized linear layers of a checkpoint, their formats as read,
// and the kernels that would run them; with --load, every layer built on the GPU as a server
// loads a model (read, pack, upload), timed, with the host memory it took.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "backend/device_presets.h"
#include "commands.h"
#include "io/checkpoint.h"
#include "plan/jit_kernel_plan.h"
#include "qgemm/device.h"
#include "qgemm/grouped.h"
#include "qgemm/linear.h"
#include "util/error.h"

namespace qgemm::cli {
namespace {

struct InspectOptions {
  std::string path;
  std::vector<int64_t> m = {1, 16, 256, 4096};
  std::string arch;
  bool load = false;
};

// This process's resident anonymous memory (heap, not the checkpoint's file mapping), bytes.
int64_t anonymous_rss_bytes() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("RssAnon:", 0) == 0) return std::stoll(line.substr(8)) * 1024;  // kB
  return -1;
}

// The largest anonymous RSS seen while it lives, sampled every 5 ms on a thread.
class AnonymousPeak {
 public:
  AnonymousPeak() : base_(anonymous_rss_bytes()), peak_(base_) {
    thread_ = std::thread([this] {
      while (!stop_) {
        peak_ = std::max<int64_t>(peak_, anonymous_rss_bytes());
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    });
  }
  ~AnonymousPeak() { stop(); }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  /// Peak above what the process held when sampling started.
  int64_t above_start() const { return peak_ - base_; }

 private:
  int64_t base_;
  std::atomic<int64_t> peak_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// --load: every layer imported and built on GPU 0 (packed and uploaded, kernels not compiled),
// kept until the end as a server keeps them.
int load_on_gpu(const QuantizedCheckpoint& checkpoint) {
  if (list_devices().empty()) {
    std::fprintf(stderr, "qgemm inspect --load: %s\n", no_gpu_reason().c_str());
    return 2;
  }
  std::vector<Linear> dense;
  std::vector<GroupedLinear> stacks;
  double import_seconds = 0, build_seconds = 0;
  int64_t largest_bf16_bytes = 0, weight_bytes = 0;
  const auto start = std::chrono::steady_clock::now();
  AnonymousPeak peak;
  for (size_t i = 0; i < checkpoint.layers.size(); ++i) {
    const std::string& name = checkpoint.layers[i];
    auto t = std::chrono::steady_clock::now();
    auto imported = checkpoint.import(name);
    import_seconds += seconds_since(t);
    if (!imported) {
      std::fprintf(stderr, "qgemm inspect --load: %s: %s\n", name.c_str(),
                   imported.status().message().c_str());
      return 2;
    }
    const QuantizedWeight& w = imported->weight;
    largest_bf16_bytes = std::max(largest_bf16_bytes, w.experts * w.n * w.k * 2);
    weight_bytes += w.storage_bytes();
    LinearOptions lo;
    lo.device = 0;
    lo.k_order = imported->k_order;
    t = std::chrono::steady_clock::now();
    Status built;
    if (w.experts > 1) {
      auto layer = GroupedLinear::create(w, lo);
      if (layer) stacks.push_back(std::move(*layer));
      built = layer.status();
    } else {
      auto layer = Linear::create(w, lo);
      if (layer) dense.push_back(std::move(*layer));
      built = layer.status();
    }
    build_seconds += seconds_since(t);
    if (!built.ok()) {
      std::fprintf(stderr, "qgemm inspect --load: %s: %s\n", name.c_str(),
                   built.message().c_str());
      return 2;
    }
    std::fprintf(stderr, "\rqgemm inspect --load: %zu/%zu layers, %.1f s", i + 1,
                 checkpoint.layers.size(), seconds_since(start));
  }
  const double total = seconds_since(start);
  peak.stop();
  std::fprintf(stderr, "\n");
  std::printf(
      "loaded   %zu layers (%.2f GB of quantized weights) onto GPU 0 in %.2f s: read %.2f s, pack "
      "and upload %.2f s (kernels not compiled: `qgemm jit warm` or prepare())\n",
      checkpoint.layers.size(), weight_bytes / 1e9, total, import_seconds, build_seconds);
  std::printf(
      "memory   peak host memory above the file mapping %.2f GB (sampled RssAnon), %.2fx the "
      "largest layer as bf16 (%.1f MB)\n",
      peak.above_start() / 1e9, double(peak.above_start()) / std::max<int64_t>(largest_bf16_bytes, 1),
      largest_bf16_bytes / 1e6);
  return 0;
}

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
    // As Linear runs act-order (launched programmatically).
    if (!imported->k_order.empty()) plan->use_act_order(w.k, device, true);
    for (int64_t m : o.m) {
      const JitBucket& b = plan->bucket_for(m);
      std::printf("    M=%-6lld %s %s\n", (long long)m, std::string(b.family->name()).c_str(),
                  b.expand ? "then cuBLASLt" : b.config.tiling().c_str());
    }
  }
  // One layer at a time: the host holds the file mapping and one imported layer.
  std::printf("read     %zu layers into the canonical layout in %.2f s (largest %.1f MB as bf16)\n",
              checkpoint->layers.size(), import_seconds, largest_bf16_bytes / 1e6);
  return o.load ? load_on_gpu(*checkpoint) : 0;
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
  cmd->add_flag("--load", o->load,
                "Then build every layer on GPU 0 as a server loads a model (read, pack, upload; "
                "no kernel compile): the time and the peak host memory above the file mapping");
  cmd->callback([o] {
    const int rc = run_inspect(*o);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace qgemm::cli
