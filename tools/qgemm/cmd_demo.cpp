#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "api/host_run.h"
#include "commands.h"
#include "qgemm/device.h"
#include "qgemm/reference.h"
#include "util/random.h"

namespace qgemm::cli {
namespace {

// Quantizes one random layer per recipe, runs it on the best backend available here and checks
// it against the CPU reference built from the same quantized operands.
int run_demo(int64_t m, int64_t n, int64_t k) {
  const auto devices = list_devices();
  const bool gpu = !devices.empty();
  if (gpu)
    std::printf("GPU: %s (%s); layers run on the GPU backends\n", devices[0].name.c_str(),
                devices[0].arch().c_str());
  else
    std::printf("no GPU here (%s): layers run on the CPU reference backend\n",
                no_gpu_reason().c_str());
  std::printf("layer: M=%lld tokens, N=%lld, K=%lld, random Gaussian weights and activations\n\n",
              (long long)m, (long long)n, (long long)k);
  std::printf("%-12s %-22s %-8s %-8s %10s %12s  %s\n", "recipe", "weight", "act", "backend",
              "rel error", "prepare ms", "check");
  const char* names[] = {"w4a16", "w4a16_zp", "mxfp4", "nvfp4", "fp8_block", "w8a8_int8"};
  int failures = 0;
  uint64_t seed = 7;
  for (const char* name : names) {
    const Recipe* recipe = nullptr;
    for (const Recipe& r : recipes())
      if (r.name == name) recipe = &r;
    if (recipe == nullptr) continue;
    const WeightFormat wf = *WeightFormat::parse(recipe->weight);
    const ActFormat af = *ActFormat::parse(recipe->act);
    const DType out = DType::bf16();
    const auto wv = random_normal(n * k, seed++, 0.05f);
    const auto av = random_normal(m * k, seed++, 1.0f);
    auto w = quantize_weights(HostValues::of(wv), 1, n, k, wf);
    auto a = quantize_activations(HostValues::of(av), m, k, af);
    if (!w || !a) {
      std::printf("%-12s %s\n", name, (!w ? w.status() : a.status()).to_string().c_str());
      ++failures;
      continue;
    }
    auto run = run_linear_on_host_data(*w, *a, {}, out, BackendKind::kAuto, gpu ? 0 : -1);
    if (!run) {
      std::printf("%-12s %s\n", name, run.status().to_string().c_str());
      ++failures;
      continue;
    }
    auto ref = reference_gemm(*a, *w);
    const Comparison cmp = compare(*ref, run->c);
    const bool pass = cmp.within(tolerance_for(out, af.type)) && run->unwritten == 0;
    failures += pass ? 0 : 1;
    std::printf("%-12s %-22s %-8s %-8s %10.2e %12.1f  %s\n", name, wf.to_string().c_str(),
                af.to_string().c_str(), run->backend.c_str(), cmp.rel_frobenius, run->prepare_ms,
                pass ? "PASS" : "FAIL");
  }
  std::printf("\n%s\n", failures == 0
                            ? "all layers match the reference (bf16 output, tolerance 5e-3)"
                            : "some layers FAILED");
  return failures == 0 ? 0 : 1;
}

}  // namespace

void add_demo_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "demo", "Quantize random layers in the common recipes, run them here and check the results");
  auto m = std::make_shared<int64_t>(16), n = std::make_shared<int64_t>(1024),
       k = std::make_shared<int64_t>(2048);
  cmd->add_option("--m", *m, "Tokens")->default_val(16);
  cmd->add_option("--n", *n, "Output features")->default_val(1024);
  cmd->add_option("--k", *k, "Input features (a multiple of 128)")->default_val(2048);
  cmd->callback([m, n, k] {
    const int rc = run_demo(*m, *n, *k);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace qgemm::cli
