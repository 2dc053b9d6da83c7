// The grouped layer on the CPU reference: each expert's rows gathered, multiplied by the
// reference GEMM (double accumulation) and scattered, over host memory.
#include <algorithm>
#include <cstring>

#include "backend/grouped_layer.h"
#include "qgemm/reference.h"
#include "util/error.h"

namespace qgemm {

Status validate_grouped_args(const GroupedArgs& args, int64_t experts) {
  const char* where = "qgemm::GroupedLinear::run";
  if (args.rows < 0) return invalid_argument(str(where, ": rows=", args.rows, " is negative"));
  if (args.rows == 0) return Status();
  if (args.a == nullptr || args.c == nullptr)
    return invalid_argument(str(where, ": a and c must be set"));
  switch (args.layout) {
    case GroupedLayout::kRouted:
      if (args.top_k < 1)
        return invalid_argument(str(where, ": top_k=", args.top_k, " must be at least 1"));
      if (args.expert_ids == nullptr)
        return invalid_argument(str(where, ": the routed layout needs expert_ids [rows, top_k]"));
      if (args.expert_map != nullptr && args.global_experts < 1)
        return invalid_argument(str(where, ": expert_map needs global_experts (its length), not ",
                                    args.global_experts));
      if (args.expert_map == nullptr && args.global_experts != 0 && args.global_experts != experts)
        return invalid_argument(str(where, ": global_experts=", args.global_experts,
                                    " without an expert_map; ids are local (", experts,
                                    " experts)"));
      if (args.global_experts > INT32_MAX)
        return invalid_argument(
            str(where, ": global_experts=", args.global_experts, " is more than 2^31 - 1"));
      break;
    case GroupedLayout::kContiguous:
      if (args.a_per_slot)
        return invalid_argument(str(where, ": a_per_slot is for the routed layout"));
      if (args.offsets == nullptr)
        return invalid_argument(str(where, ": the contiguous layout needs offsets [E + 1]"));
      break;
    case GroupedLayout::kMasked:
      if (args.a_per_slot)
        return invalid_argument(str(where, ": a_per_slot is for the routed layout"));
      if (args.counts == nullptr)
        return invalid_argument(str(where, ": the masked layout needs counts [E]"));
      break;
    default:
      return invalid_argument(str(where, ": unknown layout ", static_cast<int>(args.layout)));
  }
  if (args.out_rows(experts) > INT32_MAX)
    return invalid_argument(str(where, ": ", args.out_rows(experts), " output rows (",
                                grouped_layout_name(args.layout),
                                " layout) are more than 2^31 - 1"));
  return Status();
}

int64_t local_expert(int64_t id, const int32_t* map, int64_t global, int64_t experts) {
  if (id < 0 || id >= global) return -1;
  const int64_t e = map != nullptr ? map[id] : id;
  return e >= 0 && e < experts ? e : -1;
}

std::vector<GroupedRow> grouped_rows(const GroupedArgs& args, int64_t experts,
                                     std::vector<int64_t>* unrouted) {
  std::vector<GroupedRow> rows;
  if (args.rows <= 0) return rows;
  switch (args.layout) {
    case GroupedLayout::kRouted: {
      const int64_t global = args.expert_map != nullptr ? args.global_experts : experts;
      for (int64_t s = 0; s < args.rows * args.top_k; ++s) {
        const int64_t e = local_expert(args.expert_ids[s], args.expert_map, global, experts);
        if (e >= 0)
          rows.push_back({args.a_per_slot ? s : s / args.top_k, s, static_cast<int>(e)});
        else if (unrouted != nullptr)
          unrouted->push_back(s);
      }
      break;
    }
    case GroupedLayout::kContiguous:
      for (int64_t e = 0; e < experts; ++e) {
        const int64_t lo = std::clamp<int64_t>(args.offsets[e], 0, args.rows);
        const int64_t hi = std::clamp<int64_t>(args.offsets[e + 1], lo, args.rows);
        for (int64_t r = lo; r < hi; ++r) rows.push_back({r, r, static_cast<int>(e)});
      }
      break;
    case GroupedLayout::kMasked:
      for (int64_t e = 0; e < experts; ++e) {
        const int64_t count = std::clamp<int64_t>(args.counts[e], 0, args.rows);
        for (int64_t r = 0; r < count; ++r)
          rows.push_back({e * args.rows + r, e * args.rows + r, static_cast<int>(e)});
      }
      break;
  }
  std::sort(rows.begin(), rows.end(),
            [](const GroupedRow& x, const GroupedRow& y) { return x.c_row < y.c_row; });
  return rows;
}

QuantizedWeight expert_slice(const QuantizedWeight& w, int64_t e) {
  QuantizedWeight we;
  we.format = w.format;
  we.n = w.n;
  we.k = w.k;
  const int64_t code_bytes = w.n * w.row_bytes();
  we.codes.assign(w.codes.begin() + e * code_bytes, w.codes.begin() + (e + 1) * code_bytes);
  const int64_t table = w.format.scale_rows(w.n) * w.format.scale_cols(w.k);
  if (!w.scales.empty())
    we.scales.assign(w.scales.begin() + e * table, w.scales.begin() + (e + 1) * table);
  if (!w.zeros.empty())
    we.zeros.assign(w.zeros.begin() + e * table, w.zeros.begin() + (e + 1) * table);
  if (!w.global.empty()) we.global = {w.global[e]};
  return we;
}

namespace {

class GroupedCpuLayer final : public PreparedGrouped {
 public:
  GroupedCpuLayer(QuantizedWeight stack, LayerProblem problem)
      : stack_(std::move(stack)), problem_(std::move(problem)) {}

  Status prepare(int64_t) override { return Status(); }
  size_t workspace_bytes(const GroupedArgs&) const override { return 0; }
  std::string describe() const override {
    return "every call: CPU reference per expert (double accumulation), host memory";
  }

  Status run(const GroupedArgs& args) const override {
    const int64_t n = stack_.n, k = stack_.k;
    const size_t out_bytes = (problem_.out.bits + 7) / 8;
    std::vector<int64_t> unrouted;
    const std::vector<GroupedRow> rows = grouped_rows(args, stack_.experts, &unrouted);
    for (int64_t c_row : unrouted)
      std::memset(static_cast<uint8_t*>(args.c) + c_row * n * out_bytes, 0, n * out_bytes);
    // The rows of A the call reads, quantized together (a tensor scale is theirs), then gathered
    // per expert with their scales. Rows no expert reads (a masked block's tail) may hold anything.
    std::vector<int64_t> used;
    for (const GroupedRow& r : rows) used.push_back(r.a_row);
    std::sort(used.begin(), used.end());
    used.erase(std::unique(used.begin(), used.end()), used.end());
    if (used.empty()) return Status();
    const size_t in_bytes = (problem_.input.bits + 7) / 8;
    std::vector<uint8_t> input(used.size() * k * in_bytes);
    for (size_t i = 0; i < used.size(); ++i)
      std::memcpy(&input[i * k * in_bytes],
                  static_cast<const uint8_t*>(args.a) + used[i] * k * in_bytes, k * in_bytes);
    const int64_t count = static_cast<int64_t>(used.size());
    auto q = quantize_activations(HostValues{input.data(), problem_.input, count * k}, count, k,
                                  problem_.act.is_quantized()
                                      ? problem_.act
                                      : ActFormat::parse(problem_.input.name()).value());
    if (!q) return q.status();
    const QuantizedActivations all = std::move(*q);
    const auto used_row = [&](int64_t a_row) {
      return std::lower_bound(used.begin(), used.end(), a_row) - used.begin();
    };
    const int64_t row_bytes = k * all.element_bytes();
    const int64_t row_scales = problem_.act.scale_kind == ActScaleKind::kToken ? 1
                               : problem_.act.scale_kind == ActScaleKind::kGroup
                                   ? problem_.act.scale_cols(k)
                                   : 0;
    for (int64_t e = 0; e < stack_.experts; ++e) {
      std::vector<const GroupedRow*> mine;
      for (const GroupedRow& r : rows)
        if (r.expert == e) mine.push_back(&r);
      if (mine.empty()) continue;
      const int64_t m = static_cast<int64_t>(mine.size());
      QuantizedActivations a;
      a.format = all.format;
      a.m = m;
      a.k = k;
      a.global = all.global;
      a.data.resize(m * row_bytes);
      if (row_scales == 0) a.scales = all.scales;
      for (int64_t i = 0; i < m; ++i) {
        const int64_t from = used_row(mine[i]->a_row);
        std::memcpy(&a.data[i * row_bytes], &all.data[from * row_bytes], row_bytes);
        for (int64_t j = 0; j < row_scales; ++j)
          a.scales.push_back(all.scales[from * row_scales + j]);
      }
      std::vector<float> bias;
      if (args.bias != nullptr) {
        bias.resize(n);
        for (int64_t j = 0; j < n; ++j) {
          uint32_t code = 0;
          std::memcpy(&code, static_cast<const uint8_t*>(args.bias) + (e * n + j) * out_bytes,
                      out_bytes);
          bias[j] = static_cast<float>(decode(problem_.out, code));
        }
      }
      auto c = reference_gemm(a, expert_slice(stack_, e), bias);
      if (!c) return c.status();
      for (int64_t i = 0; i < m; ++i)
        store_output(problem_.out, c->data() + i * n, n,
                     static_cast<uint8_t*>(args.c) + mine[i]->c_row * n * out_bytes);
    }
    return Status();
  }

 private:
  QuantizedWeight stack_;
  LayerProblem problem_;
};

}  // namespace

Expected<std::unique_ptr<PreparedGrouped>> build_grouped_cpu(const QuantizedWeight& stack,
                                                             const LayerProblem& problem) {
  return std::unique_ptr<PreparedGrouped>(new GroupedCpuLayer(stack, problem));
}

}  // namespace qgemm
