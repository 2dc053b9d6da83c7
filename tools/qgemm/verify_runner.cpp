#include "verify_runner.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>

#include "api/host_run.h"
#include "bench/lib/layer_memory.h"
#include "io/checkpoint.h"
#include "layer_formats.h"
#include "qgemm/device.h"
#include "qgemm/linear.h"
#include "qgemm/reference.h"
#include "util/error.h"
#include "util/random.h"

namespace qgemm::cli {
namespace {

// Rows of C to compare: all of them when the reference is cheap, else first, last and a
// random sample.
std::vector<int64_t> rows_to_check(int64_t m, int64_t n, int64_t k, int64_t requested,
                                   uint64_t seed) {
  std::vector<int64_t> rows;
  const bool cheap = double(m) * double(n) * double(k) <= 4e9;
  if (requested <= 0 && cheap) requested = m;
  if (requested <= 0) requested = 16;
  if (requested >= m) {
    for (int64_t i = 0; i < m; ++i) rows.push_back(i);
    return rows;
  }
  std::mt19937_64 rng(seed ^ 0x5eed);
  rows = {0, m - 1};
  while (int64_t(rows.size()) < requested) rows.push_back(int64_t(rng() % uint64_t(m)));
  std::sort(rows.begin(), rows.end());
  rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
  return rows;
}

// MoE on the CPU: tokens gathered per expert and run through the dense reference, scattered back
// (a different path from reference_moe, which it is then compared against).
Expected<std::vector<double>> run_moe_cpu(const QuantizedWeight& w, const QuantizedActivations& a,
                                          const Routing& routing, bool reduce, DType out) {
  const int64_t out_rows = reduce ? a.m : a.m * routing.top_k;
  std::vector<double> c(out_rows * w.n, 0.0);
  for (int64_t e = 0; e < w.experts; ++e) {
    std::vector<int64_t> slots;
    for (int64_t s = 0; s < int64_t(routing.expert_ids.size()); ++s)
      if (routing.expert_ids[s] == e) slots.push_back(s);
    if (slots.empty()) continue;
    QuantizedWeight we = w;
    we.experts = 1;
    const int64_t rows = w.format.scale_rows(w.n) * w.format.scale_cols(w.k);
    we.codes.assign(w.codes.begin() + e * w.n * w.row_bytes(),
                    w.codes.begin() + (e + 1) * w.n * w.row_bytes());
    we.scales.assign(w.scales.begin() + e * rows, w.scales.begin() + (e + 1) * rows);
    if (!w.zeros.empty())
      we.zeros.assign(w.zeros.begin() + e * rows, w.zeros.begin() + (e + 1) * rows);
    if (!w.global.empty()) we.global = {w.global[e]};
    std::vector<int64_t> tokens;
    for (int64_t s : slots) tokens.push_back(s / routing.top_k);
    auto part = reference_gemm(a, we, {}, tokens);
    if (!part) return part.status();
    for (size_t i = 0; i < slots.size(); ++i) {
      const int64_t s = slots[i];
      for (int64_t col = 0; col < w.n; ++col) {
        const double v = (*part)[i * w.n + col];
        if (reduce)
          c[(s / routing.top_k) * w.n + col] += routing.weights[s] * v;
        else
          c[s * w.n + col] = round_to(out, v);
      }
    }
  }
  if (reduce)
    for (double& v : c) v = round_to(out, v);
  return c;
}

// The layer `o.layer` of checkpoint `o.checkpoint`, or an error that says how to name one.
Expected<ImportedLinear> checkpoint_layer(const VerifyOptions& o) {
  if (o.layer.empty())
    return invalid_argument("--checkpoint needs --layer NAME (qgemm inspect lists the layers)");
  if (!o.weight.empty() || o.n != 0 || o.k != 0)
    return invalid_argument(
        "--checkpoint takes the weight, N and K from the checkpoint; leave "
        "out --weight, --n and --k");
  auto c = QuantizedCheckpoint::open(o.checkpoint);
  if (!c) return c.status();
  if (std::find(c->layers.begin(), c->layers.end(), o.layer) == c->layers.end())
    return invalid_argument(str("checkpoint '", o.checkpoint, "' has no quantized layer '", o.layer,
                                "'; qgemm inspect lists its ", c->layers.size()));
  return c->import(o.layer);
}

}  // namespace

int run_verify(const VerifyOptions& options) {
  auto fail = [](const Status& s) {
    std::fprintf(stderr, "qgemm verify: %s\n", s.message().c_str());
    return 2;
  };
  VerifyOptions o = options;
  std::optional<ImportedLinear> imported;
  if (!o.checkpoint.empty()) {
    auto layer = checkpoint_layer(o);
    if (!layer) return fail(layer.status());
    imported = std::move(*layer);
    o.weight = imported->weight.format.to_string();
    o.n = imported->weight.n, o.k = imported->weight.k;
    if (imported->weight.experts > 1) o.experts = imported->weight.experts;
  } else if (!o.layer.empty()) {
    return fail(invalid_argument("--layer needs --checkpoint"));
  } else if (o.weight.empty()) {
    return fail(invalid_argument("--weight is required (or --checkpoint and --layer)"));
  }
  auto formats = parse_layer_formats(o.weight, o.act, o.out);
  if (!formats) return fail(formats.status());
  const auto& [wf, af, out] = *formats;
  if (!(out == DType::bf16() || out == DType::fp16() || out == DType::fp32()))
    return fail(
        invalid_argument(str("--out ", o.out, " is not supported; accepted: bf16, fp16, fp32")));
  auto backend = parse_backend(o.backend);
  if (!backend) return fail(backend.status());
  if (o.m <= 0 || o.n <= 0 || o.k <= 0)
    return fail(invalid_argument(
        str("--m, --n and --k must be positive (got m=", o.m, ", n=", o.n, ", k=", o.k, ")")));
  const bool moe = o.experts > 0;
  if (moe && o.top_k <= 0)
    return fail(invalid_argument(str("--experts ", o.experts, " needs --topk >= 1")));
  if (!moe && o.top_k > 0) return fail(invalid_argument("--topk needs --experts"));

  const int64_t experts = moe ? o.experts : 1;
  if (Status fits = check_layer_fits(o.m, o.n, o.k, experts); !fits.ok()) return fail(fits);
  Expected<QuantizedWeight> w = Status(ErrorCode::kInternal, "no weight");
  if (imported) {
    w = std::move(imported->weight);
  } else {
    const auto w_values = random_normal(experts * o.n * o.k, o.seed, 0.05f);
    w = quantize_weights(HostValues::of(w_values), experts, o.n, o.k, wf);
  }
  if (!w) return fail(w.status());
  // Act-order layers store K in k_order's order: random activations are as random in either
  // order, and the layer and the reference both read them in the stored one.
  const auto a_values = random_normal(o.m * o.k, o.seed + 1, 1.0f);
  auto a = quantize_activations(HostValues::of(a_values), o.m, o.k, af);
  if (!a) return fail(a.status());

  std::vector<double> got, ref;
  std::string chosen = "cpu";
  double first_call_ms = 0;
  std::string rows_note;
  int64_t unwritten = 0;
  if (moe) {
    if (*backend != BackendKind::kAuto && *backend != BackendKind::kCpu)
      return fail(unsupported(str("MoE layers run on the cpu backend in this version; --backend ",
                                  o.backend, " is not available for --experts")));
    const Routing routing = random_routing(o.m, o.top_k, o.experts, o.seed + 2, 2);
    auto c = run_moe_cpu(*w, *a, routing, o.reduce, out);
    if (!c) return fail(c.status());
    auto r = reference_moe(*a, *w, routing, o.reduce);
    if (!r) return fail(r.status());
    got = std::move(*c);
    ref = std::move(*r);
    rows_note = "all rows";
  } else {
    std::vector<uint8_t> bias_bytes;
    std::vector<float> bias;
    if (o.bias || (imported && !imported->bias.empty())) {
      const auto b = imported && !imported->bias.empty() ? imported->bias
                                                         : random_normal(o.n, o.seed + 3, 0.5f);
      const size_t width = (out.bits + 7) / 8;
      bias_bytes.resize(o.n * width);
      for (int64_t i = 0; i < o.n; ++i) {
        const uint32_t code = encode(out, b[i]);
        std::memcpy(&bias_bytes[i * width], &code, width);
        bias.push_back(static_cast<float>(decode(out, code)));
      }
    }
    const int device = !list_devices().empty() && *backend != BackendKind::kCpu ? 0 : -1;
    auto run = run_linear_on_host_data(*w, *a, bias_bytes, out, *backend, device);
    if (!run) return fail(run.status());
    chosen = run->backend;
    first_call_ms = run->prepare_ms;
    unwritten = run->unwritten;
    const std::vector<double>* c = &run->c;
    const auto rows = rows_to_check(o.m, o.n, o.k, o.check_rows, o.seed);
    auto r = reference_gemm(*a, *w, bias, rows);
    if (!r) return fail(r.status());
    ref = std::move(*r);
    for (int64_t row : rows)
      got.insert(got.end(), c->begin() + row * o.n, c->begin() + (row + 1) * o.n);
    rows_note = int64_t(rows.size()) == o.m ? "all rows" : str(rows.size(), " sampled rows");
  }
  const Comparison cmp = compare(ref, got);
  const double tol = tolerance_for(out, af.type);
  const bool pass = cmp.within(tol) && unwritten == 0;
  if (o.quiet) {
    std::printf("%-4s %-26s %-16s %-4s m=%-5lld n=%-5lld k=%-5lld %s rel_err=%.3e tol=%.0e %s\n",
                pass ? "PASS" : "FAIL", wf.to_string().c_str(), af.to_string().c_str(),
                out.name().c_str(), (long long)o.m, (long long)o.n, (long long)o.k, chosen.c_str(),
                cmp.rel_frobenius, tol, moe ? "(moe)" : "");
  } else {
    if (imported)
      std::printf("layer      %s of %s%s\n", o.layer.c_str(), o.checkpoint.c_str(),
                  imported->k_order.empty() ? "" : " (act-order: K in the checkpoint's order)");
    std::printf(
        "problem    %s%s  M=%lld N=%lld K=%lld\n", moe ? "MoE " : "dense ",
        moe ? str("E=", o.experts, " top-k=", o.top_k, o.reduce ? " reduced" : "").c_str() : "",
        (long long)o.m, (long long)o.n, (long long)o.k);
    std::printf("weight     %s%s\n", wf.to_string().c_str(),
                wf.alias().empty() ? "" : (" (" + wf.alias() + ")").c_str());
    std::printf("act        %s    out %s\n", af.to_string().c_str(), out.name().c_str());
    std::printf("backend    %s%s\n", chosen.c_str(),
                chosen == "cpu" && list_devices().empty() ? " (no GPU on this machine)" : "");
    std::printf("checked    %s, %lld values\n", rows_note.c_str(), (long long)cmp.count);
    std::printf("rel error  %.3e  (tolerance %.0e)   max abs error %.3e   NaN/inf %lld\n",
                cmp.rel_frobenius, tol, cmp.max_abs_error, (long long)cmp.nan_count);
    if (unwritten > 0)
      std::printf("unwritten  %lld outputs still hold the poison\n", (long long)unwritten);
    if (first_call_ms > 0)
      std::printf("prepare    %.1f ms (layer build + kernel compile or cache load)\n",
                  first_call_ms);
    std::printf("result     %s\n", pass ? "PASS" : "FAIL");
  }
  return pass ? 0 : 1;
}

}  // namespace qgemm::cli
