// `qgemm moe`: the fused MoE layer of a model's shape on the GPU, timed against its two grouped
// GEMMs on the same routing, and checked against the CPU reference.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <deque>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/host_run.h"
#include "backend/device_buffer.h"
#include "bench/lib/device_data.h"
#include "bench/lib/gpu_timer.h"
#include "bench/lib/grouped_measure.h"
#include "bench/lib/report.h"
#include "bench/lib/stats.h"
#include "commands.h"
#include "qgemm/grouped.h"
#include "qgemm/moe.h"
#include "qgemm/reference.h"
#include "util/error.h"
#include "util/random.h"

namespace qgemm::cli {
namespace {

struct MoeModel {
  const char* name;
  int64_t experts, hidden, inter;
  const char* weight;  ///< the default weight format
  MoeOptions options;
};

std::vector<MoeModel> moe_models() {
  std::vector<MoeModel> models;
  MoeOptions deepseek;
  deepseek.top_k = 8;
  deepseek.sigmoid_scoring = true;
  deepseek.groups = 8;
  deepseek.top_groups = 4;
  deepseek.routed_scale = 2.5f;
  models.push_back({"deepseek-v3", 256, 7168, 2048, "int4/g128/bf16", deepseek});
  MoeOptions qwen;
  qwen.top_k = 8;
  models.push_back({"qwen3-30b-a3b", 128, 2048, 768, "int4/g128/bf16", qwen});
  MoeOptions gpt_oss;
  gpt_oss.top_k = 4;
  gpt_oss.activation = MoeActivation::kSwigluClamp;
  gpt_oss.interleaved_gate_up = true;
  models.push_back({"gpt-oss-120b", 128, 2880, 2880, "mxfp4", gpt_oss});
  MoeOptions mixtral;
  mixtral.top_k = 2;
  models.push_back({"mixtral-8x7b", 8, 4096, 14336, "int4/g128/bf16", mixtral});
  return models;
}

struct MoeCommandOptions {
  std::string model, weight, json;
  std::string command;  ///< the command line, recorded in the JSON
  std::vector<int64_t> tokens{1, 64, 4096};
  int routings = 8, warmup = 3, repetitions = 15, check_tokens = 8;
  uint64_t seed = 1;
};

struct MoeRow {
  int64_t tokens = 0;
  double fused_us = 0, gemms_us = 0, rel_err = 0, tolerance = 0;
};

template <class T>
Expected<DeviceBuffer> upload_vector(const std::vector<T>& v) {
  return DeviceBuffer::upload(v.data(), std::max<size_t>(v.size(), 1) * sizeof(T));
}

// One token count: `o.routings` router logits (one per launch of a graph, so the experts hit
// change from launch to launch), routed on the host as the layer routes them; the fused layer
// runs on the logits, the two grouped GEMMs on the host's ids of the same logits.
Expected<MoeRow> measure_tokens(const MoeModel& md, const MoeCommandOptions& o,
                                const QuantizedWeight& w13, const QuantizedWeight& w2,
                                const MoE& layer, const GroupedLinear& g13, const GroupedLinear& g2,
                                int64_t tokens, uint64_t seed) {
  const MoeOptions& opt = md.options;
  const int64_t slots = tokens * opt.top_k, H = md.hidden, I = md.inter, E = md.experts;
  std::vector<float> xv = random_normal(tokens * H, seed, 1.0f);
  std::vector<uint8_t> x16 = bench::encode_values(xv, DType::bf16());
  std::vector<float> bias = random_normal(E, seed + 1, 0.1f);
  std::deque<DeviceBuffer> logits, ids, weights;
  std::vector<std::vector<int32_t>> host_ids(o.routings);
  std::vector<std::vector<float>> host_weights(o.routings), host_logits(o.routings);
  for (int r = 0; r < o.routings; ++r) {
    host_logits[r] = random_normal(tokens * E, seed + 10 + r, 1.0f);
    host_ids[r].resize(slots);
    host_weights[r].resize(slots);
    route_on_host(opt, host_logits[r].data(), opt.sigmoid_scoring ? bias.data() : nullptr, tokens,
                  E, host_ids[r].data(), host_weights[r].data());
    auto l = upload_vector(host_logits[r]);
    auto i = upload_vector(host_ids[r]);
    auto w = upload_vector(host_weights[r]);
    if (!l || !i || !w) return !l ? l.status() : !i ? i.status() : w.status();
    logits.push_back(std::move(*l));
    ids.push_back(std::move(*i));
    weights.push_back(std::move(*w));
  }
  auto d_x = upload_vector(x16);
  auto d_bias = upload_vector(bias);
  auto d_out = DeviceBuffer::allocate(size_t(tokens) * H * 2);
  auto d_ws = DeviceBuffer::allocate(std::max<size_t>(layer.workspace_bytes(tokens), 256));
  auto d_h = DeviceBuffer::allocate(size_t(slots) * 2 * I * 2);
  auto d_act = bench::random_device_values(DType::bf16(), slots * I, seed + 2, 1.0f);
  auto d_y = DeviceBuffer::allocate(size_t(slots) * H * 2);
  for (auto* b : {&d_x, &d_bias, &d_out, &d_ws, &d_h, &d_act, &d_y})
    if (!*b) return b->status();

  const auto fused_args = [&](int r, CUstream stream) {
    MoeArgs a;
    a.tokens = tokens;
    a.x = d_x->get();
    a.router_logits = static_cast<const float*>(logits[r].get());
    a.correction_bias = opt.sigmoid_scoring ? static_cast<const float*>(d_bias->get()) : nullptr;
    a.out = d_out->get();
    a.workspace = d_ws->get();
    a.workspace_bytes = d_ws->bytes();
    a.stream = stream;
    return a;
  };
  MoeRow row;
  row.tokens = tokens;
  // Correctness first: the first routing's call against the reference on sampled tokens.
  QGEMM_RETURN_IF_ERROR(layer.run(fused_args(0, nullptr)));
  std::vector<uint8_t> out(size_t(tokens) * H * 2);
  QGEMM_RETURN_IF_ERROR(d_out->download(out.data(), out.size()));
  const int64_t checked = std::min<int64_t>(tokens, o.check_tokens);
  std::vector<uint8_t> xs;
  std::vector<int32_t> ids_s;
  std::vector<float> w_s;
  std::vector<double> got;
  const std::vector<double> all = decode_output(DType::bf16(), out);
  for (int64_t i = 0; i < checked; ++i) {
    const int64_t t = checked == tokens ? i : i * tokens / checked;
    xs.insert(xs.end(), x16.begin() + t * H * 2, x16.begin() + (t + 1) * H * 2);
    ids_s.insert(ids_s.end(), host_ids[0].begin() + t * opt.top_k,
                 host_ids[0].begin() + (t + 1) * opt.top_k);
    w_s.insert(w_s.end(), host_weights[0].begin() + t * opt.top_k,
               host_weights[0].begin() + (t + 1) * opt.top_k);
    got.insert(got.end(), all.begin() + t * H, all.begin() + (t + 1) * H);
  }
  auto ref = reference_moe_layer(xs, checked, w13, w2, opt, ids_s, w_s, {}, E, {}, {});
  if (!ref) return ref.status();
  const Comparison cmp = compare(*ref, got);
  row.rel_err = cmp.nan_count > 0 ? NAN : cmp.rel_frobenius;
  row.tolerance = tolerance_for(DType::bf16(), DType::bf16());

  auto fused = bench::time_graph_replays(
      [&](int i, CUstream s) { return layer.run(fused_args(i % o.routings, s)); }, o.routings,
      o.warmup, o.repetitions);
  if (!fused) return fused.status();
  row.fused_us = bench::summarize(*fused).median_us;

  GroupedArgs first;
  first.rows = tokens;
  first.top_k = opt.top_k;
  first.a = d_x->get();
  first.c = d_h->get();
  GroupedArgs second = first;
  second.a_per_slot = true;
  second.a = d_act->get();
  second.c = d_y->get();
  const size_t ws = std::max(g13.workspace_bytes(first), g2.workspace_bytes(second));
  auto d_gws = DeviceBuffer::allocate(std::max<size_t>(ws, 256));
  if (!d_gws) return d_gws.status();
  auto gemms = bench::time_graph_replays(
      [&](int i, CUstream s) {
        GroupedArgs a = first, b = second;
        a.expert_ids = b.expert_ids = static_cast<const int32_t*>(ids[i % o.routings].get());
        a.workspace = b.workspace = d_gws->get();
        a.workspace_bytes = b.workspace_bytes = ws;
        a.stream = b.stream = s;
        QGEMM_RETURN_IF_ERROR(g13.run(a));
        return g2.run(b);
      },
      o.routings, o.warmup, o.repetitions);
  if (!gemms) return gemms.status();
  row.gemms_us = bench::summarize(*gemms).median_us;
  return row;
}

int run_moe(const MoeCommandOptions& o) {
  const auto models = moe_models();
  const auto found = std::find_if(models.begin(), models.end(),
                                  [&](const MoeModel& m) { return o.model == m.name; });
  if (found == models.end()) {
    std::string names;
    for (const MoeModel& m : models) names += str(names.empty() ? "" : ", ", m.name);
    std::fprintf(stderr, "qgemm moe: unknown model '%s'; known: %s\n", o.model.c_str(),
                 names.c_str());
    return 2;
  }
  const MoeModel& md = *found;
  for (int64_t t : o.tokens)
    if (t < 1) {
      std::fprintf(stderr, "qgemm moe: --tokens %lld: each count must be at least 1\n",
                   static_cast<long long>(t));
      return 2;
    }
  if (o.routings < 1 || o.repetitions < 1 || o.warmup < 0 || o.check_tokens < 1) {
    std::fprintf(stderr,
                 "qgemm moe: --routings, --repetitions and --check-tokens must be at least 1, "
                 "--warmup at least 0\n");
    return 2;
  }
  const std::string weight = o.weight.empty() ? md.weight : o.weight;
  auto format = WeightFormat::parse(weight);
  if (!format) {
    std::fprintf(stderr, "qgemm moe: %s\n", format.status().message().c_str());
    return 2;
  }
  if (list_devices().empty()) {
    std::fprintf(stderr, "qgemm moe: needs a GPU (%s)\n", no_gpu_reason().c_str());
    return 2;
  }
  std::fprintf(stderr, "qgemm moe: %s: quantizing and packing the expert stacks\n", md.name);
  auto w13 = bench::bench_expert_stack(md.experts, 2 * md.inter, md.hidden, *format, o.seed);
  auto w2 = bench::bench_expert_stack(md.experts, md.hidden, md.inter, *format, o.seed + 1);
  if (!w13 || !w2) {
    std::fprintf(stderr, "qgemm moe: %s\n", (!w13 ? w13.status() : w2.status()).message().c_str());
    return 1;
  }
  MoeOptions options = md.options;
  options.linear.device = 0;
  options.linear.input = DType::bf16();
  LinearOptions lo = options.linear;
  lo.out = DType::bf16();
  lo.act = *ActFormat::parse("bf16");
  auto layer = MoE::create(*w13, *w2, options);
  auto g13 = layer ? GroupedLinear::create(*w13, lo) : Expected<GroupedLinear>(layer.status());
  auto g2 = g13 ? GroupedLinear::create(*w2, lo) : Expected<GroupedLinear>(g13.status());
  if (!g2) {
    std::fprintf(stderr, "qgemm moe: %s\n", g2.status().message().c_str());
    return 1;
  }
  const int64_t max_tokens = *std::max_element(o.tokens.begin(), o.tokens.end());
  for (Status s : {layer->prepare(max_tokens), g13->prepare(max_tokens * options.top_k),
                   g2->prepare(max_tokens * options.top_k)})
    if (!s.ok()) {
      std::fprintf(stderr, "qgemm moe: %s\n", s.message().c_str());
      return 1;
    }
  std::printf("%s: E=%lld H=%lld I=%lld top-%d, %s x bf16, on %s\n", md.name,
              static_cast<long long>(md.experts), static_cast<long long>(md.hidden),
              static_cast<long long>(md.inter), options.top_k, format->to_string().c_str(),
              list_devices()[0].name.c_str());
  std::printf("%8s %12s %16s %8s %10s\n", "tokens", "layer us", "two GEMMs us", "ratio", "rel err");
  std::vector<MoeRow> rows;
  bool ok = true;
  for (int64_t t : o.tokens) {
    auto row = measure_tokens(md, o, *w13, *w2, *layer, *g13, *g2, t, o.seed * 1000 + t);
    if (!row) {
      std::fprintf(stderr, "qgemm moe: tokens=%lld: %s\n", static_cast<long long>(t),
                   row.status().message().c_str());
      return 1;
    }
    const bool correct = row->rel_err <= row->tolerance;
    ok = ok && correct;
    std::printf("%8lld %12.2f %16.2f %8.3f %10.2e%s\n", static_cast<long long>(t), row->fused_us,
                row->gemms_us, row->fused_us / row->gemms_us, row->rel_err,
                correct ? "" : "  WRONG");
    rows.push_back(*row);
  }
  if (!o.json.empty()) {
    nlohmann::ordered_json report = {{"schema", "qgemm-moe-layer/1"},
                                     {"command", o.command},
                                     {"model", md.name},
                                     {"device", list_devices()[0].name},
                                     {"weight", format->to_string()},
                                     {"experts", md.experts},
                                     {"hidden", md.hidden},
                                     {"inter", md.inter},
                                     {"top_k", options.top_k},
                                     {"rows", nlohmann::ordered_json::array()}};
    for (const MoeRow& r : rows)
      report["rows"].push_back({{"tokens", r.tokens},
                                {"layer_us", r.fused_us},
                                {"gemms_us", r.gemms_us},
                                {"ratio", r.fused_us / r.gemms_us},
                                {"rel_err", r.rel_err},
                                {"tolerance", r.tolerance}});
    const std::string text = report.dump(1) + "\n";
    if (Status s = bench::write_text(text, o.json); !s.ok()) {
      std::fprintf(stderr, "qgemm moe: %s\n", s.message().c_str());
      return 1;
    }
  }
  return ok ? 0 : 1;
}

}  // namespace

void add_moe_command(CLI::App& app, const std::string& command_line) {
  auto* cmd = app.add_subcommand(
      "moe",
      "Time a model's fused MoE layer (routing from logits, w13, activation, w2, weighted sum) "
      "against its two grouped GEMMs on the same routing, and check it against the CPU "
      "reference (GPU)");
  auto o = std::make_shared<MoeCommandOptions>();
  o->command = command_line;
  cmd->add_option("--model", o->model, "deepseek-v3, qwen3-30b-a3b, gpt-oss-120b or mixtral-8x7b")
      ->required();
  cmd->add_option("--weight", o->weight,
                  "Weight format (default: the model's, mxfp4 for gpt-oss, else int4/g128/bf16)");
  cmd->add_option("--tokens", o->tokens, "Token counts (default 1 64 4096)")->delimiter(',');
  cmd->add_option("--routings", o->routings,
                  "Router logits per graph, one per launch, so the experts hit vary (default 8)");
  cmd->add_option("--repetitions", o->repetitions, "Timed graph replays (default 15)");
  cmd->add_option("--warmup", o->warmup, "Untimed graph replays (default 3)");
  cmd->add_option("--check-tokens", o->check_tokens,
                  "Tokens compared with the CPU reference (default 8)");
  cmd->add_option("--seed", o->seed, "Random seed (default 1)");
  cmd->add_option("--json", o->json, "Write the rows here as JSON");
  cmd->callback([o]() {
    const int rc = run_moe(*o);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace qgemm::cli
