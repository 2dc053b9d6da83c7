#include "bench/lib/grouped_measure.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>

#include "api/host_run.h"
#include "backend/cublaslt_gemm.h"
#include "backend/device_buffer.h"
#include "backend/grouped_layer.h"
#include "bench/lib/device_data.h"
#include "bench/lib/gpu_timer.h"
#include "util/error.h"
#include "util/parallel.h"
#include "util/random.h"

namespace qgemm::bench {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Compares the sampled rows of a downloaded [slots, N] output with the reference.
void check_rows(const GroupedCase& c, const std::vector<uint8_t>& bytes,
                const std::vector<double>& ref, ResultRow& row) {
  const auto values = decode_output(c.out, bytes);
  row.unwritten =
      std::count_if(values.begin(), values.end(), [](double v) { return std::isnan(v); });
  std::vector<double> got;
  for (int64_t r : c.rows)
    got.insert(got.end(), values.begin() + r * c.w.n, values.begin() + (r + 1) * c.w.n);
  const Comparison cmp = compare(ref, got);
  row.rel_err = cmp.nan_count > 0 ? NAN : cmp.rel_frobenius;
  row.tolerance = tolerance_for(c.out, c.a.format.type);
}

}  // namespace

Expected<QuantizedWeight> bench_expert_stack(int64_t experts, int64_t n, int64_t k,
                                             const WeightFormat& format, uint64_t seed) {
  const int64_t distinct = std::min(experts, kDistinctExperts);
  auto w = quantize_weights(HostValues::of(random_normal(distinct * n * k, seed, 0.05f)), distinct,
                            n, k, format);
  if (!w || distinct == experts) return w;
  // Expert e repeats expert e mod `distinct`: each array grows to `experts` expert-sized parts.
  const auto repeat = [&](auto& v) {
    const size_t part = v.size() / size_t(distinct);
    v.resize(part * size_t(experts));
    for (int64_t e = distinct; e < experts; ++e)
      std::copy_n(v.begin() + (e % distinct) * part, part, v.begin() + e * part);
  };
  repeat(w->codes);
  repeat(w->scales);
  if (!w->zeros.empty()) repeat(w->zeros);
  if (!w->global.empty()) repeat(w->global);
  w->experts = experts;
  QGEMM_RETURN_IF_ERROR(w->validate());
  return w;
}

Expected<std::vector<double>> grouped_reference(const GroupedCase& c) {
  std::vector<double> ref(c.rows.size() * c.w.n, 0.0);
  std::map<int32_t, std::vector<size_t>> by_expert;  // sampled rows per expert
  for (size_t i = 0; i < c.rows.size(); ++i)
    if (const int32_t e = c.routing.expert_ids[c.rows[i]]; e >= 0) by_expert[e].push_back(i);
  for (const auto& [e, picks] : by_expert) {
    std::vector<int64_t> tokens;
    for (size_t i : picks) tokens.push_back(c.rows[i] / c.routing.top_k);
    auto part = reference_gemm(c.a, expert_slice(c.w, e), {}, tokens);
    if (!part) return part.status();
    for (size_t j = 0; j < picks.size(); ++j)
      for (int64_t n = 0; n < c.w.n; ++n) ref[picks[j] * c.w.n + n] = (*part)[j * c.w.n + n];
  }
  return ref;
}

static Status measure_jit(const GroupedCase& c, const GroupedLinear& layer,
                          const std::vector<double>& ref, ResultRow& row) {
  const CudaDriver* d = *cuda_driver();
  const int64_t slots = c.a.m * c.routing.top_k;
  const size_t out_bytes = size_t(slots) * c.w.n * ((c.out.bits + 7) / 8);
  auto a = c.bf16_input != nullptr
               ? DeviceBuffer::upload(c.bf16_input->data(), c.bf16_input->size() * 2)
               : DeviceBuffer::upload(c.a.data.data(), c.a.data.size());
  auto ids = DeviceBuffer::upload(c.routing.expert_ids.data(), slots * 4);
  auto out = DeviceBuffer::allocate(out_bytes);
  GroupedArgs g;
  g.rows = c.a.m;
  g.top_k = c.routing.top_k;
  auto ws = DeviceBuffer::allocate(std::max<size_t>(layer.workspace_bytes(g), 1));
  for (auto* b : {&a, &ids, &out, &ws})
    if (!*b) return b->status();
  QGEMM_CU(d, cuMemsetD8, out->ptr(), 0xff, out_bytes);
  g.a = a->get();
  g.expert_ids = static_cast<const int32_t*>(ids->get());
  g.c = out->get();
  g.workspace = ws->get();
  g.workspace_bytes = ws->bytes();
  const auto t0 = Clock::now();
  QGEMM_RETURN_IF_ERROR(layer.run(g));
  QGEMM_CU(d, cuCtxSynchronize);
  row.first_call_ms = ms_since(t0);
  std::vector<uint8_t> bytes(out_bytes);
  QGEMM_RETURN_IF_ERROR(out->download(bytes.data(), bytes.size()));
  check_rows(c, bytes, ref, row);
  row.copies = 1;
  row.launches = c.launches;
  auto times = time_graph_replays(
      [&](int, CUstream stream) {
        GroupedArgs call = g;
        call.stream = stream;
        return layer.run(call);
      },
      c.launches, c.warmup, c.repetitions);
  if (!times) return times.status();
  row.time = summarize(*times);
  return Status();
}

class CublasExperts {
 public:
  std::vector<DeviceBuffer> weights;  // [N, K] bf16 per expert
};

static Expected<std::shared_ptr<CublasExperts>> build_cublas_experts(const QuantizedWeight& w) {
  QGEMM_RETURN_IF_ERROR(use_device(0));
  auto set = std::make_shared<CublasExperts>();
  std::vector<float> values(w.n * w.k);
  // Experts that repeat one of the first kDistinctExperts (bench_expert_stack) reuse its bf16
  // values, each uploaded to its own buffer, so the baseline reads as many bytes as jit does.
  std::vector<std::vector<uint8_t>> encoded;
  const int64_t code_bytes = w.n * w.row_bytes();
  const int64_t table = w.format.scale_rows(w.n) * w.format.scale_cols(w.k);
  const auto repeats = [&](int64_t e, int64_t of) {
    const auto same = [&](const auto& v, int64_t part) {
      return v.empty() ||
             std::equal(v.begin() + e * part, v.begin() + (e + 1) * part, v.begin() + of * part);
    };
    return same(w.codes, code_bytes) && same(w.scales, table) && same(w.zeros, table) &&
           same(w.global, 1);
  };
  for (int64_t e = 0; e < w.experts; ++e) {
    if (e >= kDistinctExperts && repeats(e, e % kDistinctExperts)) {
      const std::vector<uint8_t>& bytes = encoded[e % kDistinctExperts];
      auto buffer = DeviceBuffer::upload(bytes.data(), bytes.size());
      if (!buffer) return buffer.status();
      set->weights.push_back(std::move(*buffer));
      continue;
    }
    parallel_for(w.n, 16, [&](int64_t b, int64_t end) {
      for (int64_t r = b; r < end; ++r)
        for (int64_t col = 0; col < w.k; ++col)
          values[r * w.k + col] = float(w.dequantize(e, r, col));
    });
    std::vector<uint8_t> bytes = encode_values(values, DType::bf16());
    auto buffer = DeviceBuffer::upload(bytes.data(), bytes.size());
    if (e < kDistinctExperts) encoded.push_back(std::move(bytes));
    if (!buffer) return buffer.status();
    set->weights.push_back(std::move(*buffer));
  }
  return set;
}

static Status measure_cublas(const GroupedCase& c, const CublasExperts& experts,
                             const std::vector<double>& ref, ResultRow& row) {
  const CudaDriver* d = *cuda_driver();
  const int64_t k = c.w.k, n = c.w.n, top_k = c.routing.top_k;
  // Each expert's slots, its tokens gathered into one contiguous bf16 block, expert by expert.
  std::vector<std::vector<int64_t>> slots(c.w.experts);
  for (int64_t s = 0; s < c.a.m * top_k; ++s)
    if (const int32_t e = c.routing.expert_ids[s]; e >= 0) slots[e].push_back(s);
  // bf16 rows: the tokens as they are, or quantized ones' values (dequantized, rounded to bf16).
  std::vector<uint8_t> tokens = c.a.data;
  if (c.a.format.is_quantized()) {
    tokens.resize(size_t(c.a.m) * k * 2);
    for (int64_t r = 0; r < c.a.m; ++r)
      for (int64_t col = 0; col < k; ++col) {
        const auto code = static_cast<uint16_t>(encode(DType::bf16(), c.a.dequantize(r, col)));
        std::memcpy(&tokens[(r * k + col) * 2], &code, 2);
      }
  }
  std::vector<uint8_t> gathered;
  std::vector<int64_t> first(c.w.experts + 1, 0);
  const size_t row_bytes = size_t(k) * 2;
  for (int64_t e = 0; e < c.w.experts; ++e) {
    first[e + 1] = first[e] + int64_t(slots[e].size());
    for (int64_t s : slots[e])
      gathered.insert(gathered.end(), tokens.begin() + (s / top_k) * row_bytes,
                      tokens.begin() + (s / top_k + 1) * row_bytes);
  }
  const int64_t rows = first.back();
  auto a = DeviceBuffer::upload(gathered.data(), std::max<size_t>(gathered.size(), 2));
  auto out = DeviceBuffer::allocate(std::max<size_t>(size_t(rows) * n * 2, 2));
  auto ws = DeviceBuffer::allocate(32 << 20);
  for (auto* b : {&a, &out, &ws})
    if (!*b) return b->status();
  QGEMM_CU(d, cuMemsetD8, out->ptr(), 0xff, size_t(rows) * n * 2);
  std::map<int64_t, std::shared_ptr<LtGemm>> gemms;  // by rows
  for (int64_t e = 0; e < c.w.experts; ++e) {
    const int64_t m = first[e + 1] - first[e];
    if (m == 0 || gemms.count(m)) continue;
    LtGemmShape s;
    s.m = m;
    s.n = n;
    s.k = k;
    s.lda = s.ldw = k;
    auto g = LtGemm::create(s, ws->bytes());
    if (!g) return g.status();
    gemms[m] = *g;
  }
  const auto call = [&](CUstream stream) -> Status {
    for (int64_t e = 0; e < c.w.experts; ++e) {
      const int64_t m = first[e + 1] - first[e];
      if (m == 0) continue;
      QGEMM_RETURN_IF_ERROR(gemms[m]->run(
          static_cast<const uint8_t*>(a->get()) + first[e] * row_bytes, experts.weights[e].get(),
          static_cast<uint8_t*>(out->get()) + first[e] * n * 2, nullptr, nullptr, nullptr,
          ws->get(), ws->bytes(), stream));
    }
    return Status();
  };
  const auto t0 = Clock::now();
  QGEMM_RETURN_IF_ERROR(call(nullptr));
  QGEMM_CU(d, cuCtxSynchronize);
  row.first_call_ms = ms_since(t0);
  // Back to slot order for the check (unrouted slots stay zero, as the reference has them).
  std::vector<uint8_t> grouped(size_t(rows) * n * 2), bytes(size_t(c.a.m * top_k) * n * 2, 0);
  QGEMM_RETURN_IF_ERROR(out->download(grouped.data(), grouped.size()));
  for (int64_t e = 0; e < c.w.experts; ++e)
    for (size_t i = 0; i < slots[e].size(); ++i)
      std::copy_n(grouped.begin() + (first[e] + int64_t(i)) * n * 2, n * 2,
                  bytes.begin() + slots[e][i] * n * 2);
  GroupedCase bf16 = c;
  bf16.out = DType::bf16();
  check_rows(bf16, bytes, ref, row);
  row.copies = 1;
  row.launches = c.launches;
  row.note = "per-expert cuBLASLt GEMMs over tokens gathered beforehand (gather not timed)";
  auto times = time_graph_replays([&](int, CUstream stream) { return call(stream); }, c.launches,
                                  c.warmup, c.repetitions);
  if (!times) return times.status();
  row.time = summarize(*times);
  return Status();
}

GroupedBackend build_grouped_backend(const std::string& backend, const QuantizedWeight& w,
                                     const ActFormat& act, DType out, int64_t max_slots) {
  GroupedBackend b;
  if (backend == "jit") {
    LinearOptions lo;
    lo.act = act;
    lo.out = out;
    lo.backend = BackendKind::kJit;
    b.jit = GroupedLinear::create(w, lo);
    if (*b.jit)
      if (Status s = (*b.jit)->prepare(max_slots); !s.ok()) b.jit = s;
  } else if (backend == "cublas-bf16") {
    b.cublas = build_cublas_experts(w);
  } else {
    b.skip = str("backend ", backend, " has no MoE form (jit, cublas-bf16, cpu)");
  }
  return b;
}

Status measure_grouped(const GroupedCase& c, const GroupedBackend& backend,
                       const std::function<Expected<std::vector<double>>()>& ref, ResultRow& row) {
  if (!backend.jit && !backend.cublas) {
    row.status = "skipped";
    row.note = backend.skip;
    return Status();
  }
  if (backend.jit && !*backend.jit) return backend.jit->status();
  if (backend.cublas && !*backend.cublas) return backend.cublas->status();
  auto r = ref();
  if (!r) return r.status();
  if (backend.jit) {
    row.plan = "heuristics";
    return measure_jit(c, **backend.jit, *r, row);
  }
  return measure_cublas(c, ***backend.cublas, *r, row);
}

}  // namespace qgemm::bench
