#include "bench/lib/runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <numeric>
#include <optional>
#include <random>

#include "api/host_run.h"
#include "backend/cublaslt_gemm.h"
#include "backend/cublaslt_library.h"
#include "backend/device_buffer.h"
#include "bench/lib/device_data.h"
#include "bench/lib/gpu_timer.h"
#include "bench/lib/grouped_measure.h"
#include "bench/lib/layer_memory.h"
#include "bench/lib/recipe_kernels.h"
#include "bench/lib/sampling.h"
#include "format/half.h"
#include "jit/kernel_cache.h"
#include "jit/kernel_loader.h"
#include "plan/jit_kernel_plan.h"
#include "qgemm/linear.h"
#include "qgemm/reference.h"
#include "quant/gpu_act_quantizer.h"
#include "util/error.h"
#include "util/parallel.h"
#include "util/progress.h"
#include "util/random.h"
#include "util/settings.h"

namespace qgemm::bench {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kMaxCopies = 64;
constexpr double kCpuMacLimit = 2e9;  // larger problems take too long for a CPU timing

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// One (problem, M): the operands every backend runs and the lazily computed reference.
struct Case {
  const BenchProblem& problem;
  WeightFormat wf;
  ActFormat af;
  DType out;
  const QuantizedWeight& w;
  QuantizedActivations a;
  /// Quantized activation formats: the bf16 input `a` was quantized from (what jit-q16 passes).
  std::vector<uint16_t> a16;
  Routing routing;
  std::vector<int64_t> rows;  // rows compared with the reference
  std::optional<std::vector<double>> reference;
  // NOTE: every backend of a problem replays graphs of the same number of launches, so each runs
  // under the same sustained load: a shorter graph runs at a higher clock (docs/design.md,
  // "equal graph lengths in the bench").
  int launches = 1;

  const std::vector<double>& ref() {
    if (!reference) reference = *reference_gemm(a, w, {}, rows);
    return *reference;
  }

  // MoE: the grouped call's case (output rows are slots) and its reference, shared by backends.
  std::optional<GroupedCase> grouped;
  std::optional<Expected<std::vector<double>>> grouped_ref;
  Expected<std::vector<double>>& moe_ref() {
    if (!grouped_ref) grouped_ref = grouped_reference(*grouped);
    return *grouped_ref;
  }
};

int copies_for(double weight_bytes, int64_t rotate_bytes) {
  return weight_copies(weight_bytes, rotate_bytes, kMaxCopies);
}

bool is_cublas_baseline(const std::string& backend) {
  return backend == "cublas-bf16" || backend == "cublas-fp8" || backend == "cublas-int8";
}

// The weight bytes each GPU backend of a problem rotates copies of.
std::vector<double> backend_weight_bytes(const QuantizedWeight& w,
                                         const std::vector<std::string>& backends) {
  const double elements = double(std::max<int64_t>(w.experts, 1)) * w.n * w.k;
  std::vector<double> bytes;
  for (const std::string& b : backends) {
    if (b == "jit" || b == "jit-pdl" || b == "jit-q16" || b == "jit-act-order" || b == "qdq")
      bytes.push_back(double(w.storage_bytes()));
    if (b == "cublas-bf16") bytes.push_back(2.0 * elements);
    if (b == "cublas-fp8" || b == "cublas-int8") bytes.push_back(elements);
  }
  return bytes;
}

int64_t free_device_bytes() {
  size_t free_b = 0, total = 0;
  if (auto d = cuda_driver(); d.ok()) (*d)->cuMemGetInfo(&free_b, &total);
  return static_cast<int64_t>(free_b);
}

// Device memory taken since it was made: the drop in what the driver reports free.
class DeviceMemoryTaken {
 public:
  int64_t bytes() const { return free_before_ - free_device_bytes(); }

 private:
  int64_t free_before_ = free_device_bytes();
};

// Downloads an output buffer, counts poison left in it and compares the checked rows.
Status check_output(Case& c, const DeviceBuffer& out_buffer, DType out,
                    const std::vector<double>& ref, ResultRow& row) {
  std::vector<uint8_t> bytes(size_t(c.a.m) * c.w.n * ((out.bits + 7) / 8));
  QGEMM_RETURN_IF_ERROR(out_buffer.download(bytes.data(), bytes.size()));
  const auto values = decode_output(out, bytes);
  row.unwritten =
      std::count_if(values.begin(), values.end(), [](double v) { return std::isnan(v); });
  const Comparison cmp = compare(ref, pick_rows(values, c.rows, c.w.n));
  row.rel_err = cmp.nan_count > 0 ? NAN : cmp.rel_frobenius;
  row.tolerance = tolerance_for(out, c.af.type);
  return Status();
}

// A quantized backend (jit or qdq) through the public Linear API: `copies` layers of the same
// weight, rotated so every launch reads cold weights. Built once per problem, prepared for the
// largest M, then timed at each M.
struct LinearSet {
  std::vector<Linear> layers;
  double build_ms = 0;  // create + prepare of the first copy (JIT compile or cache load)
  int copies = 0;
  int64_t device_bytes = 0;
};

// The act-order permutation "jit-act-order" layers get: a random one of K, fixed by the seed.
std::vector<int32_t> random_k_order(int64_t k, uint64_t seed) {
  std::vector<int32_t> order(k);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

Expected<LinearSet> build_linear_set(const QuantizedWeight& w, const ActFormat& af, DType out,
                                     BackendKind kind, bool programmatic, int64_t max_m,
                                     int64_t rotate, const std::vector<int32_t>& k_order) {
  QGEMM_RETURN_IF_ERROR(use_device(0));
  LinearSet set;
  const DeviceMemoryTaken taken;
  set.copies = copies_for(w.storage_bytes(), rotate);
  LinearOptions lo;
  lo.act = af;
  lo.out = out;
  lo.backend = kind;
  lo.programmatic_launch = programmatic;
  lo.k_order = k_order;
  for (int i = 0; i < set.copies; ++i) {
    const auto t0 = Clock::now();
    auto layer = Linear::create(w, lo);
    if (!layer) return layer.status();
    QGEMM_RETURN_IF_ERROR(layer->prepare(max_m));
    if (i == 0) set.build_ms = ms_since(t0);
    set.layers.push_back(std::move(*layer));
  }
  set.device_bytes = taken.bytes();
  return set;
}

// `from16`: the layer gets the bf16 input and quantizes it itself (the time includes it).
// `k_order`: the layers are act-order ones; they get the activations in the model's order
// (stored column j is input feature k_order[j]) and gather them back (the time includes it).
Status measure_linear(Case& c, LinearSet& set, const Recipe& recipe, ResultRow& row,
                      bool from16 = false, const std::vector<int32_t>& k_order = {}) {
  const CudaDriver* d = *cuda_driver();
  row.copies = set.copies;
  row.launches = c.launches;
  row.l2_resident = set.copies == kMaxCopies;
  const DeviceMemoryTaken taken;  // by this run's buffers
  const std::vector<uint8_t> model_order =
      k_order.empty() ? std::vector<uint8_t>{}
                      : rows_in_model_order(c.a.data, c.a.m, c.w.k, k_order);
  auto a = from16            ? DeviceBuffer::upload(c.a16.data(), c.a16.size() * 2)
           : k_order.empty() ? DeviceBuffer::upload(c.a.data.data(), c.a.data.size())
                             : DeviceBuffer::upload(model_order.data(), model_order.size());
  auto a_scales = DeviceBuffer::upload(c.a.scales.data(), c.a.scales.size() * 4);
  auto a_global = DeviceBuffer::upload(c.a.global.data(), c.a.global.size() * 4);
  const size_t out_bytes = size_t(c.a.m) * c.w.n * ((c.out.bits + 7) / 8);
  auto out = DeviceBuffer::allocate(out_bytes);
  auto ws = DeviceBuffer::allocate(std::max<size_t>(set.layers[0].workspace_bytes(c.a.m), 1));
  for (auto* b : {&a, &a_scales, &a_global, &out, &ws})
    if (!*b) return b->status();
  QGEMM_CU(d, cuMemsetD8, out->ptr(), 0xff, out_bytes);
  auto args_for = [&](CUstream stream) {
    LinearArgs args = device_linear_args(c.a.m, *a, *out, *ws, stream);
    if (c.a.format.is_quantized() && !from16)
      args.a_scales =
          ActScales::of(c.a.format, static_cast<const float*>(a_scales->get()),
                        c.a.global.empty() ? nullptr : static_cast<const float*>(a_global->get()));
    return args;
  };
  // First call at this M: one synchronous run, then the correctness check on its output.
  const auto t0 = Clock::now();
  QGEMM_RETURN_IF_ERROR(set.layers[0].run(args_for(nullptr)));
  QGEMM_CU(d, cuCtxSynchronize);
  row.first_call_ms = set.build_ms + ms_since(t0);
  QGEMM_RETURN_IF_ERROR(check_output(c, *out, c.out, c.ref(), row));
  row.device_bytes = set.device_bytes + taken.bytes();
  auto times = time_graph_replays(
      [&](int i, CUstream stream) { return set.layers[i % set.copies].run(args_for(stream)); },
      c.launches, recipe.warmup, recipe.repetitions);
  if (!times) return times.status();
  row.time = summarize(*times);
  return Status();
}

// "act-quant": the layer's GPU activation quantizer alone, on the bf16 input the case's codes
// came from. Its codes, scales and global scale must equal the CPU quantizer's bit for bit. The
// inputs rotate over `rotate` bytes so every launch reads them from DRAM; row.bytes counts what
// one pass must move (the input once, the codes and scales once), so formats with a tensor or
// global scale (an amax pass first) show their second read as a lower share of the copy rate.
Status measure_act_quant(Case& c, const Recipe& recipe, ResultRow& row, const std::string& arch,
                         int64_t rotate) {
  if (!c.af.is_quantized())
    return Status(ErrorCode::kUnsupported, "act-quant: the activations are not quantized");
  const CudaDriver* d = *cuda_driver();
  const int64_t m = c.a.m, k = c.w.k;
  auto q = GpuActQuantizer::create(c.af, DType::bf16(), arch);
  if (!q) return q.status();
  const size_t in_bytes = c.a16.size() * 2, ws_bytes = act_workspace_bytes(c.af, m, k);
  const int copies = copies_for(double(in_bytes + ws_bytes), rotate);
  std::vector<DeviceBuffer> inputs, workspaces;
  for (int i = 0; i < copies; ++i) {
    auto in = DeviceBuffer::upload(c.a16.data(), in_bytes);
    auto ws = DeviceBuffer::allocate(ws_bytes);
    if (!in) return in.status();
    if (!ws) return ws.status();
    QGEMM_CU(d, cuMemsetD8, ws->ptr(), 0xff, ws_bytes);
    inputs.push_back(std::move(*in));
    workspaces.push_back(std::move(*ws));
  }
  auto launch = [&](int i, CUstream stream) {
    void* scratch = nullptr;
    const DeviceActs acts = carve_act_workspace(workspaces[i % copies].get(), c.af, m, k, &scratch);
    return q->quantize(inputs[i % copies].get(), k, m, k, acts, scratch, stream);
  };
  const auto t0 = Clock::now();
  QGEMM_RETURN_IF_ERROR(launch(0, nullptr));
  QGEMM_CU(d, cuCtxSynchronize);
  row.first_call_ms = ms_since(t0);
  // The first copy's output against the CPU quantizer's codes, scales and global scale.
  std::vector<uint8_t> ws(ws_bytes);
  QGEMM_RETURN_IF_ERROR(workspaces[0].download(ws.data(), ws_bytes));
  void* scratch = nullptr;
  const DeviceActs acts = carve_act_workspace(ws.data(), c.af, m, k, &scratch);
  int64_t mismatches = 0;
  for (int64_t r = 0; r < m; ++r)
    for (int64_t col = 0; col < k; ++col)
      mismatches += acts.q[r * acts.ldq + col] != c.a.data[r * k + col];
  for (size_t i = 0; i < c.a.scales.size(); ++i)
    mismatches += std::memcmp(&acts.scales[i], &c.a.scales[i], 4) != 0;
  if (!c.a.global.empty())
    mismatches += acts.global == nullptr || std::memcmp(acts.global, c.a.global.data(), 4) != 0;
  if (mismatches > 0)
    return Status(ErrorCode::kInternal, str("act-quant: ", mismatches,
                                            " codes or scales differ from the CPU quantizer's"));
  row.rel_err = 0;
  row.tolerance = 0;
  row.copies = copies;
  row.launches = std::max(c.launches, copies);  // a graph walks every copy
  row.bytes = double(in_bytes) + double(m) * k + 4.0 * double(c.a.scales.size());
  auto times = time_graph_replays(launch, row.launches, recipe.warmup, recipe.repetitions);
  if (!times) return times.status();
  row.time = summarize(*times);
  return Status();
}

// Where a jit layer's plan comes from: the same pure function the jit backend plans with.
std::string jit_plan_source(const BenchProblem& p, const WeightFormat& wf, const ActFormat& af,
                            DType out, const DeviceInfo& device) {
  auto plan = plan_jit_kernels(p.n, p.k, wf, af.type, out, device, cublaslt_library().ok());
  return plan ? plan->source : std::string();
}

// cuBLASLt on dense operands of the same shape: bf16 (the dequantized weight, so the result is
// checked against the same reference), or e4m3 or int8 with per-channel and per-token scales.
struct CublasSet {
  DType op = DType::bf16();           // the operand type: bf16, e4m3 or int8
  QuantizedWeight w8;                 // 8-bit: the e4m3/channel or int8/channel weight
  std::vector<DeviceBuffer> weights;  // rotated copies
  DeviceBuffer w_scales;
  int64_t device_bytes = 0;
};

// The weight dequantized to float, [n, k] (expert 0).
std::vector<float> dequantized(const QuantizedWeight& w) {
  std::vector<float> values(w.n * w.k);
  parallel_for(w.n, 16, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r)
      for (int64_t col = 0; col < w.k; ++col)
        values[r * w.k + col] = float(w.dequantize(0, r, col));
  });
  return values;
}

// The cuBLAS baselines: "cublas-bf16" the layer's weight dequantized to bf16; "cublas-fp8" and
// "cublas-int8" requantized per channel (e4m3 or int8 codes, fp32 scales), their activations per
// token.
Expected<CublasSet> build_cublas_set(const QuantizedWeight& w, const std::string& backend,
                                     int64_t rotate) {
  QGEMM_RETURN_IF_ERROR(use_device(0));
  CublasSet set;
  set.op = backend == "cublas-fp8"    ? DType::e4m3()
           : backend == "cublas-int8" ? DType::int_bits(8)
                                      : DType::bf16();
  const DeviceMemoryTaken taken;
  const std::vector<float> values = dequantized(w);
  std::vector<uint8_t> bytes;
  if (set.op.bits == 8) {
    auto w8 = quantize_weights(
        HostValues::of(values), 1, w.n, w.k,
        *WeightFormat::parse(set.op == DType::e4m3() ? "e4m3/channel/fp32" : "int8/channel/fp32"));
    if (!w8) return w8.status();
    set.w8 = std::move(*w8);
    bytes = set.w8.codes;
    auto s = DeviceBuffer::upload(set.w8.scales.data(), set.w8.scales.size() * 4);
    if (!s) return s.status();
    set.w_scales = std::move(*s);
  } else {
    bytes = encode_values(values, DType::bf16());
  }
  const int copies = copies_for(double(bytes.size()), rotate);
  for (int i = 0; i < copies; ++i) {
    auto b = DeviceBuffer::upload(bytes.data(), bytes.size());
    if (!b) return b.status();
    set.weights.push_back(std::move(*b));
  }
  set.device_bytes = taken.bytes();
  return set;
}

Status measure_cublas(Case& c, CublasSet& set, const Recipe& recipe, ResultRow& row) {
  const CudaDriver* d = *cuda_driver();
  const int64_t n = c.w.n, k = c.w.k, m = c.a.m;
  std::vector<float> a_values(m * k);
  for (int64_t r = 0; r < m; ++r)
    for (int64_t col = 0; col < k; ++col) a_values[r * k + col] = float(c.a.dequantize(r, col));
  const DType op = set.op;
  const bool eight_bit = op.bits == 8, int8 = op == DType::int_bits(8);
  std::vector<uint8_t> a_bytes;
  std::vector<float> a_scales;
  std::vector<double> ref;
  if (eight_bit) {
    auto a8 = quantize_activations(HostValues::of(a_values), m, k,
                                   *ActFormat::parse(int8 ? "int8/token" : "e4m3/token"));
    if (!a8) return a8.status();
    a_bytes = a8->data;
    a_scales = a8->scales;
    auto r = reference_gemm(*a8, set.w8, {}, c.rows);
    if (!r) return r.status();
    ref = std::move(*r);
  } else {
    a_bytes = encode_values(a_values, op);
    ref = c.ref();
  }
  row.copies = int(set.weights.size());
  row.launches = c.launches;
  row.l2_resident = row.copies == kMaxCopies;
  const DeviceMemoryTaken taken;  // by this run's buffers
  auto a = DeviceBuffer::upload(a_bytes.data(), a_bytes.size());
  auto as_scale = DeviceBuffer::upload(a_scales.data(), a_scales.size() * 4);
  const DType out_type = int8 ? DType::int_bits(32) : DType::bf16();
  auto out = DeviceBuffer::allocate(size_t(m) * n * (out_type.bits / 8));
  auto ws = DeviceBuffer::allocate(32 << 20);
  for (auto* b : {&a, &as_scale, &out, &ws})
    if (!*b) return b->status();
  QGEMM_CU(d, cuMemsetD8, out->ptr(), 0xff, out->bytes());
  LtGemmShape s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.lda = s.ldw = k;
  s.a_type = s.w_type = op;
  s.out_type = out_type;
  s.row_scales = eight_bit && !int8;
  const auto t0 = Clock::now();
  auto gemm = LtGemm::create(s, ws->bytes());
  if (!gemm) return gemm.status();
  // Scalar scales make another product than the reference's (one scale per operand): timed as
  // the FP8 rate, not checked.
  const bool scalar_scales = op == DType::e4m3() && !(*gemm)->vector_scales();
  if (scalar_scales) row.note = "cuBLASLt took scalar fp8 scales only: timed, not checked";
  auto run = [&](int i, CUstream stream) {
    return (*gemm)->run(a->get(), set.weights[i].get(), out->get(), nullptr,
                        static_cast<const float*>(as_scale->get()),
                        static_cast<const float*>(set.w_scales.get()), ws->get(), ws->bytes(),
                        stream);
  };
  QGEMM_RETURN_IF_ERROR(run(0, nullptr));
  QGEMM_CU(d, cuCtxSynchronize);
  row.first_call_ms = ms_since(t0);
  if (int8) {
    // The exact int32 sums, scaled here by the token and channel scales for the check.
    std::vector<int32_t> sums(size_t(m) * n);
    QGEMM_RETURN_IF_ERROR(out->download(sums.data(), sums.size() * 4));
    std::vector<double> values(sums.size());
    for (int64_t r = 0; r < m; ++r)
      for (int64_t col = 0; col < n; ++col)
        values[r * n + col] = double(sums[r * n + col]) * a_scales[r] * set.w8.scales[col];
    const Comparison cmp = compare(ref, pick_rows(values, c.rows, n));
    row.rel_err = cmp.nan_count > 0 ? NAN : cmp.rel_frobenius;
    row.tolerance = tolerance_for(DType::fp32(), op);
  } else {
    QGEMM_RETURN_IF_ERROR(check_output(c, *out, DType::bf16(), ref, row));
    if (scalar_scales) row.tolerance = NAN;
  }
  row.device_bytes = set.device_bytes + taken.bytes();
  auto times =
      time_graph_replays([&](int i, CUstream stream) { return run(i % row.copies, stream); },
                         c.launches, recipe.warmup, recipe.repetitions);
  if (!times) return times.status();
  row.time = summarize(*times);
  row.bytes = eight_bit ? double(n) * k + double(m) * k + double(m) * n * (out_type.bits / 8) +
                              (int8 ? 0.0 : n * 4.0 + m * 4.0)
                        : 2.0 * n * k + 2.0 * m * k + 2.0 * m * n;
  return Status();
}

// The CPU backend, timed with the host clock: dense through Linear on host memory, MoE through
// the reference (which is the CPU MoE implementation).
Status measure_cpu(Case& c, const Recipe& recipe, ResultRow& row) {
  const double macs = double(c.a.m) * c.w.n * c.w.k * std::max(c.problem.top_k, 1);
  if (macs > kCpuMacLimit) {
    row.status = "skipped";
    row.note = str("too large for a CPU timing (", macs, " multiply-adds)");
    return Status();
  }
  std::function<Status()> call;
  std::optional<Linear> layer;
  std::vector<uint8_t> out(size_t(c.a.m) * c.w.n * ((c.out.bits + 7) / 8));
  const auto t0 = Clock::now();
  if (c.problem.experts > 0) {
    call = [&]() { return reference_moe(c.a, c.w, c.routing, false).status(); };
  } else {
    LinearOptions lo;
    lo.act = c.af;
    lo.out = c.out;
    lo.backend = BackendKind::kCpu;
    lo.device = -1;
    auto l = Linear::create(c.w, lo);
    if (!l) return l.status();
    QGEMM_RETURN_IF_ERROR(l->prepare(c.a.m));
    layer.emplace(std::move(*l));
    call = [&]() {
      LinearArgs args;
      args.m = c.a.m;
      args.a = c.a.data.data();
      if (!c.a.scales.empty())
        args.a_scales = ActScales::of(c.a.format, c.a.scales.data(),
                                      c.a.global.empty() ? nullptr : c.a.global.data());
      args.c = out.data();
      return layer->run(args);
    };
  }
  QGEMM_RETURN_IF_ERROR(call());
  row.first_call_ms = ms_since(t0);
  if (c.problem.experts == 0) {
    const auto values = decode_output(c.out, out);
    const Comparison cmp = compare(c.ref(), pick_rows(values, c.rows, c.w.n));
    row.rel_err = cmp.rel_frobenius;
    row.tolerance = tolerance_for(c.out, c.af.type);
  }
  for (int i = 0; i < recipe.warmup; ++i) QGEMM_RETURN_IF_ERROR(call());
  std::vector<double> samples;
  for (int i = 0; i < recipe.repetitions; ++i) {
    const auto t = Clock::now();
    QGEMM_RETURN_IF_ERROR(call());
    samples.push_back(1000.0 * ms_since(t));
  }
  row.time = summarize(samples);
  row.copies = 1;
  return Status();
}

// Fills throughput, % of peaks and the traffic of a finished row.
void account(const Case& c, const BenchReport& report, ResultRow& row) {
  if (row.bytes == 0) {
    int64_t touched = 0;
    if (c.problem.experts > 0) {
      std::vector<bool> hit(c.w.experts, false);
      for (int32_t id : c.routing.expert_ids)
        if (id >= 0) hit[id] = true;
      touched = std::count(hit.begin(), hit.end(), true);
    }
    const Traffic t = c.problem.experts > 0 ? moe_traffic(c.a.m, c.problem.top_k, touched, c.w.n,
                                                          c.w.k, c.wf, c.af, c.out)
                                            : dense_traffic(c.a.m, c.w.n, c.w.k, c.wf, c.af, c.out);
    row.bytes = t.bytes;
    row.flops = t.flops;
  }
  const bool gemm = row.backend != "act-quant";  // the quantizer alone: bytes, no flops
  if (gemm && row.flops == 0)
    row.flops = 2.0 * c.a.m * c.w.n * c.w.k * std::max(c.problem.top_k, 1);
  if (gemm) row.tflops = tflops(row.flops, row.time.median_us);
  row.gbps = gbps(row.bytes, row.time.median_us);
  if (row.backend == "cpu") return;  // GPU ceilings do not apply
  row.pct_copy_bw = 100.0 * row.gbps / report.peaks.copy_gbps;
  if (!gemm) return;
  // 8-bit operands (FP8 or INT8: the same tensor-core rate on Hopper) against the FP8 peak.
  const bool eight_bit =
      row.backend == "cublas-fp8" || row.backend == "cublas-int8" || c.af.is_quantized();
  row.pct_peak =
      100.0 * row.tflops / (eight_bit ? report.peaks.fp8_tflops : report.peaks.bf16_tflops);
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace

Expected<BenchReport> run_recipe(const Recipe& recipe, const RunOptions& options) {
  BenchReport report;
  report.recipe = recipe;
  report.command = options.command;
  report.date = utc_now();
  const auto devices = list_devices();
  report.gpu = !devices.empty();
  if (report.gpu) {
    report.device = devices[0];
    report.driver_version = (*cuda_driver())->version;
    QGEMM_RETURN_IF_ERROR(use_device(0));
    if (options.measure_peaks) {
      auto peaks = measure_peaks();
      if (!peaks) return peaks.status();
      report.peaks = *peaks;
    }
  }
  report.rotate_bytes = recipe.rotate_bytes > 0
                            ? recipe.rotate_bytes
                            : std::max<int64_t>(300ll << 20, 5 * report.device.l2_bytes);

  size_t total = 0;
  for (const BenchProblem& p : recipe.problems)
    total += p.m.size() * (options.backends.empty() ? p.backends.size() : options.backends.size());
  Progress progress("qgemm bench", total, true);

  if (report.gpu) {
    // Every kernel of the recipe at once, on every core; layer by layer, a few would compile
    // at a time. A kernel that fails here fails again, with its message, in its layer.
    Recipe planned = recipe;
    if (!options.backends.empty())
      for (BenchProblem& p : planned.problems) p.backends = options.backends;
    const RecipeKernels kernels = recipe_kernels(planned, report.device);
    progress.set_detail(str("compiling ", kernels.specs.size(), " kernels"));
    KernelCache::instance().get_all(kernels.specs, 1);
  }

  for (size_t pi = 0; pi < recipe.problems.size(); ++pi) {
    const BenchProblem& p = recipe.problems[pi];
    const uint64_t seed = recipe.seed * 1000003 + pi;
    const WeightFormat wf = *WeightFormat::parse(p.weight);
    const ActFormat af = *ActFormat::parse(p.act);
    const DType out = *parse_dtype(p.out);
    const int64_t experts = std::max<int64_t>(p.experts, 1);
    for (int64_t m : p.m)
      if (Status fits = check_layer_fits(m, p.n, p.k, experts, std::min(experts, kDistinctExperts));
          !fits.ok())
        return Status(fits.code(), str(p.name, ": ", fits.message()));
    progress.set_detail(p.name + ": quantizing");
    auto w = bench_expert_stack(experts, p.n, p.k, wf, seed);
    if (!w) return Status(w.status().code(), str(p.name, ": ", w.status().message()));
    const auto& backends = options.backends.empty() ? p.backends : options.backends;
    // Operands and reference per M, shared by every backend.
    std::vector<Case> cases;
    cases.reserve(p.m.size());
    for (int64_t m : p.m) {
      const auto a_values = random_normal(m * p.k, seed + 7 + m, 1.0f);
      // Quantized activations come from bf16 input, as a layer that quantizes them gets it.
      std::vector<uint16_t> a16;
      if (af.is_quantized())
        for (float v : a_values) a16.push_back(static_cast<uint16_t>(encode(DType::bf16(), v)));
      auto a = af.is_quantized() ? quantize_activations(
                                       HostValues{a16.data(), DType::bf16(), m * p.k}, m, p.k, af)
                                 : quantize_activations(HostValues::of(a_values), m, p.k, af);
      if (!a) return a.status();
      cases.push_back(Case{p,
                           wf,
                           af,
                           out,
                           *w,
                           std::move(*a),
                           std::move(a16),
                           {},
                           sample_rows(m, seed + m),
                           std::nullopt,
                           1,
                           std::nullopt,
                           std::nullopt});
      if (p.experts > 0) {
        Case& c = cases.back();
        c.routing = random_routing(m, p.top_k, p.experts, seed + m);
        c.grouped.emplace(GroupedCase{c.w, c.a, af.is_quantized() ? &c.a16 : nullptr, c.routing,
                                      out, sample_rows(m * p.top_k, seed + m), 1, recipe.warmup,
                                      recipe.repetitions});
      }
    }
    const int launches =
        graph_launches(backend_weight_bytes(*w, backends), report.rotate_bytes, kMaxCopies);
    for (Case& c : cases) {
      c.launches = launches;
      if (c.grouped) c.grouped->launches = launches;
    }
    const int64_t max_m = *std::max_element(p.m.begin(), p.m.end());
    std::vector<std::vector<ResultRow>> rows(cases.size());
    for (const std::string& backend : backends) {
      // Layers or weight copies are built once per problem and backend, then timed at each M.
      std::optional<Expected<LinearSet>> linear;
      std::optional<Expected<CublasSet>> cublas;
      std::optional<GroupedBackend> grouped;
      const bool gpu_backend = backend != "cpu";
      const bool runnable = !gpu_backend || report.gpu;
      const bool moe = p.experts > 0;
      // NOTE: "jit" launches plainly, like the cuBLAS baselines; "jit-pdl" launches
      // programmatically, so each timed launch overlaps the end of the one before it (what
      // back-to-back layers, or neighbours that trigger their dependents early, give).
      // "jit-q16" passes bf16 input that the layer quantizes (quantized activation formats).
      // "jit-act-order" gives the layer a random act-order permutation of K (a GPTQ desc_act
      // layer), which it gathers before its GEMM (16-bit activations); it launches
      // programmatically, as layers do by default, so compare it with "jit-pdl".
      const bool jit = backend == "jit" || backend == "jit-pdl" || backend == "jit-q16" ||
                       backend == "jit-act-order";
      const std::vector<int32_t> k_order = backend == "jit-act-order" && !af.is_quantized()
                                               ? random_k_order(p.k, recipe.seed)
                                               : std::vector<int32_t>{};
      if (runnable && gpu_backend && moe) {
        progress.set_detail(str(p.name, " ", backend, ": building the expert stack"));
        grouped = build_grouped_backend(backend, *w, af, out, max_m * p.top_k);
      } else if (runnable && (jit || backend == "qdq")) {
        progress.set_detail(str(p.name, " ", backend, ": building layers"));
        linear = build_linear_set(*w, af, out, jit ? BackendKind::kJit : BackendKind::kQdq,
                                  backend == "jit-pdl" || backend == "jit-act-order", max_m,
                                  report.rotate_bytes, k_order);
      } else if (runnable && is_cublas_baseline(backend)) {
        progress.set_detail(str(p.name, " ", backend, ": uploading weights"));
        cublas = build_cublas_set(*w, backend, report.rotate_bytes);
      }
      for (size_t mi = 0; mi < cases.size(); ++mi) {
        Case& c = cases[mi];
        progress.set_detail(str(p.name, " M=", c.a.m, " ", backend));
        ResultRow row;
        row.problem = p.name;
        row.backend = backend;
        row.m = c.a.m;
        row.n = p.n;
        row.k = p.k;
        row.experts = p.experts;
        row.top_k = p.top_k;
        row.weight = wf.to_string();
        row.act = af.to_string();
        row.out = out.name();
        Status s;
        if (!gpu_backend) {
          s = measure_cpu(c, recipe, row);
        } else if (!report.gpu) {
          row.status = "skipped";
          row.note = "no GPU";
        } else if (backend == "act-quant") {
          s = moe ? Status(ErrorCode::kUnsupported, "act-quant: dense problems only")
                  : measure_act_quant(c, recipe, row, report.device.arch(), report.rotate_bytes);
        } else if (moe) {
          s = measure_grouped(*c.grouped, *grouped, [&]() { return c.moe_ref(); }, row);
        } else if (linear) {
          if (backend == "jit-q16" && !af.is_quantized())
            s = Status(ErrorCode::kUnsupported, "jit-q16: the activations are not quantized");
          else if (backend == "jit-act-order" && af.is_quantized())
            s = Status(ErrorCode::kUnsupported,
                       "jit-act-order: act-order layers are timed with 16-bit activations");
          else
            s = linear->ok()
                    ? measure_linear(c, **linear, recipe, row, backend == "jit-q16", k_order)
                    : linear->status();
          if (jit) row.plan = jit_plan_source(p, wf, af, out, report.device);
          if (backend == "jit-pdl" && settings().no_programmatic_launch)
            row.note = "QGEMM_NO_PDL=1: launched plainly";
        } else if (cublas) {
          s = cublas->ok() ? measure_cublas(c, **cublas, recipe, row) : cublas->status();
        }
        if (!s.ok()) {
          row.status = s.code() == ErrorCode::kUnsupported ? "skipped" : "error";
          row.note = s.message();
        }
        if (row.status == "ok") account(c, report, row);
        rows[mi].push_back(row);
        progress.advance();
      }
    }
    for (auto& group : rows) {
      // Ratios to the baselines measured for the same problem and M.
      for (ResultRow& row : group)
        for (const ResultRow& base : group) {
          if (&row == &base || base.status != "ok" || row.status != "ok") continue;
          if (is_cublas_baseline(base.backend))
            row.vs[base.backend] = row.time.median_us / base.time.median_us;
        }
      report.rows.insert(report.rows.end(), group.begin(), group.end());
    }
    report.problems_done = pi + 1;
    if (options.after_problem) options.after_problem(report);
  }
  progress.finish();
  return report;
}

}  // namespace qgemm::bench
