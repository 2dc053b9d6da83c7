#include "verify_runner.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
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
  GroupedLayout layout = GroupedLayout::kRouted;
  if (o.layout == "contiguous") {
    layout = GroupedLayout::kContiguous;
  } else if (o.layout == "masked") {
    layout = GroupedLayout::kMasked;
  } else if (o.layout != "routed") {
    return fail(invalid_argument(
        str("--layout ", o.layout, " is not supported; accepted: routed, contiguous, masked")));
  }
  const bool routed = layout == GroupedLayout::kRouted;
  if (!moe && (o.top_k > 0 || !routed))
    return fail(
        invalid_argument(o.top_k > 0 ? "--topk needs --experts" : "--layout needs --experts"));
  if (moe && routed && o.top_k <= 0)
    return fail(invalid_argument(str("--experts ", o.experts, " needs --topk >= 1")));
  if (moe && !routed && (o.top_k > 0 || o.reduce))
    return fail(invalid_argument(
        str(o.top_k > 0 ? "--topk" : "--reduce", " applies to the routed layout, not ", o.layout)));

  const int64_t experts = moe ? o.experts : 1;
  // Masked MoE calls take a block of m rows per expert.
  const bool masked = layout == GroupedLayout::kMasked;
  if (masked && o.m > std::numeric_limits<int64_t>::max() / experts)
    return fail(invalid_argument(
        str("--m ", o.m, " x --experts ", experts, " rows (masked) do not fit in 64 bits")));
  const int64_t a_rows = masked ? o.m * experts : o.m;
  if (Status fits = check_layer_fits(a_rows, o.n, o.k, experts, experts); !fits.ok())
    return fail(fits);
  Expected<QuantizedWeight> w = Status(ErrorCode::kInternal, "no weight");
  if (imported) {
    w = std::move(imported->weight);
  } else {
    const auto w_values = random_normal(experts * o.n * o.k, o.seed, 0.05f);
    w = quantize_weights(HostValues::of(w_values), experts, o.n, o.k, wf);
  }
  if (!w) return fail(w.status());
  // Act-order layers store K in k_order's order. The reference reads the activations in that
  // order; the layer receives them in the model's order and gathers them back itself (16-bit
  // activations; quantized ones are passed in the stored order).
  const auto a_values = random_normal(a_rows * o.k, o.seed + 1, 1.0f);
  auto a = quantize_activations(HostValues::of(a_values), a_rows, o.k, af);
  if (!a) return fail(a.status());

  std::vector<double> got, ref;
  std::string chosen = "cpu";
  double first_call_ms = 0;
  std::string rows_note;
  int64_t unwritten = 0, touched = 0;
  if (moe) {
    // The grouped layer takes 16-bit input and quantizes it itself; the reference multiplies
    // the activations quantized from those same 16-bit values.
    auto a16 =
        quantize_activations(HostValues::of(a_values), a_rows, o.k, *ActFormat::parse("bf16"));
    if (!a16) return fail(a16.status());
    if (af.is_quantized()) {
      auto again = quantize_activations(HostValues{a16->data.data(), DType::bf16(), a_rows * o.k},
                                        a_rows, o.k, af);
      if (!again) return fail(again.status());
      a = std::move(again);
    }
    const Routing routing = random_routing(o.m, routed ? o.top_k : 1, o.experts, o.seed + 2, 2);
    HostGroupedCall call;
    call.layout = layout;
    call.rows = o.m;
    call.top_k = routed ? o.top_k : 1;
    std::mt19937_64 rng(o.seed + 4);
    if (routed) {
      call.expert_ids = routing.expert_ids;
    } else if (layout == GroupedLayout::kContiguous) {
      // The rows cut at random points: some experts get none.
      std::vector<int32_t> cuts;
      for (int64_t e = 0; e + 1 < o.experts; ++e)
        cuts.push_back(static_cast<int32_t>(rng() % (o.m + 1)));
      std::sort(cuts.begin(), cuts.end());
      call.offsets.push_back(0);
      call.offsets.insert(call.offsets.end(), cuts.begin(), cuts.end());
      call.offsets.push_back(static_cast<int32_t>(o.m));
    } else {
      // Random counts, the first block full.
      for (int64_t e = 0; e < o.experts; ++e)
        call.counts.push_back(e == 0 ? static_cast<int32_t>(o.m)
                                     : static_cast<int32_t>(rng() % (o.m + 1)));
    }
    LinearOptions lo;
    lo.act = af;
    lo.out = out;
    lo.backend = *backend;
    lo.device = !list_devices().empty() && *backend != BackendKind::kCpu ? 0 : -1;
    auto run = run_grouped_on_host_data(*w, lo, a16->data, call, {});
    // A pair no grouped GPU kernel takes runs on the host reference under --backend auto.
    if (!run && run.status().code() == ErrorCode::kUnsupported && lo.device == 0 &&
        *backend == BackendKind::kAuto) {
      std::fprintf(stderr, "qgemm verify: no GPU grouped kernel (%s); running on the host\n",
                   run.status().message().c_str());
      lo.device = -1;
      run = run_grouped_on_host_data(*w, lo, a16->data, call, {});
    }
    if (!run) return fail(run.status());
    chosen = run->backend;
    first_call_ms = run->prepare_ms;
    unwritten = run->unwritten;
    auto r = reference_grouped(*a, *w, call, {});
    if (!r) return fail(r.status());
    // Rows the call does not write (the reference's NaN) must still hold the poison.
    GroupedOutputs outputs = split_grouped_outputs(*r, run->c);
    ref = std::move(outputs.want);
    got = std::move(outputs.got);
    touched = outputs.touched;
    if (o.reduce) {
      // Each token's top-k rows, weighted, summed in slot order (the outputs as rounded).
      const auto reduce = [&](const std::vector<double>& rows) {
        std::vector<double> sum(o.m * o.n, 0.0);
        for (int64_t s = 0; s < o.m * o.top_k; ++s)
          for (int64_t j = 0; j < o.n; ++j)
            sum[(s / o.top_k) * o.n + j] += routing.weights[s] * rows[s * o.n + j];
        return sum;
      };
      got = reduce(got);
      ref = reduce(ref);
    }
    rows_note = routed ? "all rows" : "the rows the call writes";
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
    const bool act_order = imported && !imported->k_order.empty() && !af.is_quantized();
    auto run = run_linear_on_host_data(*w, *a, bias_bytes, out, *backend, device,
                                       act_order ? imported->k_order : std::vector<int32_t>{});
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
  const bool pass = cmp.within(tol) && unwritten == 0 && touched == 0;
  if (o.quiet) {
    std::printf("%-4s %-26s %-16s %-4s m=%-5lld n=%-5lld k=%-5lld %s rel_err=%.3e tol=%.0e %s\n",
                pass ? "PASS" : "FAIL", wf.to_string().c_str(), af.to_string().c_str(),
                out.name().c_str(), (long long)o.m, (long long)o.n, (long long)o.k, chosen.c_str(),
                cmp.rel_frobenius, tol, moe ? "(moe)" : "");
  } else {
    if (imported)
      std::printf("layer      %s of %s%s\n", o.layer.c_str(), o.checkpoint.c_str(),
                  imported->k_order.empty() ? ""
                  : af.is_quantized()
                      ? " (act-order: quantized activations passed in K's stored order)"
                      : " (act-order: the layer gathers K from the model's order)");
    std::printf(
        "problem    %s%s  M=%lld N=%lld K=%lld\n", moe ? "MoE " : "dense ",
        moe ? str("E=", o.experts, " ", o.layout,
                  routed ? str(" top-k=", o.top_k, o.reduce ? " reduced" : "") : std::string())
                  .c_str()
            : "",
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
    if (touched > 0)
      std::printf("touched    %lld outputs written outside the call's rows\n", (long long)touched);
    if (first_call_ms > 0)
      std::printf("prepare    %.1f ms (layer build + kernel compile or cache load)\n",
                  first_call_ms);
    std::printf("result     %s\n", pass ? "PASS" : "FAIL");
  }
  return pass ? 0 : 1;
}

}  // namespace qgemm::cli
