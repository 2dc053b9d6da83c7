#include "api/host_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

#include "backend/device_buffer.h"
#include "backend/grouped_layer.h"
#include "moe_grouped/moe_math.cuh"
#include "qgemm/reference.h"
#include "util/error.h"

namespace qgemm {

std::vector<double> decode_output(DType out, const std::vector<uint8_t>& bytes) {
  const size_t width = (out.bits + 7) / 8;
  std::vector<double> v(bytes.size() / width);
  for (size_t i = 0; i < v.size(); ++i) {
    uint32_t code = 0;
    std::memcpy(&code, &bytes[i * width], width);
    v[i] = decode(out, code);
  }
  return v;
}

std::vector<uint8_t> rows_in_model_order(const std::vector<uint8_t>& stored, int64_t m, int64_t k,
                                         const std::vector<int32_t>& k_order) {
  std::vector<uint8_t> model(stored.size());
  for (int64_t row = 0; row < m; ++row)
    for (int64_t c = 0; c < k; ++c)
      std::memcpy(&model[(row * k + k_order[c]) * 2], &stored[(row * k + c) * 2], 2);
  return model;
}

Expected<HostRun> run_linear_on_host_data(const QuantizedWeight& w, const QuantizedActivations& a,
                                          const std::vector<uint8_t>& bias, DType out,
                                          BackendKind backend, int device,
                                          const std::vector<int32_t>& k_order) {
  LinearOptions lo;
  lo.act = a.format;
  lo.out = out;
  lo.backend = backend;
  lo.device = device;
  lo.k_order = k_order;
  // An act-order layer receives the model's order: stored column c is input feature k_order[c].
  std::vector<uint8_t> model_order;
  if (!k_order.empty()) {
    if (a.format.is_quantized() || int64_t(k_order.size()) != w.k)
      return invalid_argument(
          str("run_linear_on_host_data: act-order runs take 16-bit "
              "activations and a k_order of K=",
              w.k, " entries"));
    model_order = rows_in_model_order(a.data, a.m, w.k, k_order);
  }
  const std::vector<uint8_t>& a_data = k_order.empty() ? a.data : model_order;
  if (device >= 0) QGEMM_RETURN_IF_ERROR(use_device(device));
  HostRun result;
  const auto t0 = std::chrono::steady_clock::now();
  auto layer = Linear::create(w, lo);
  if (!layer) return layer.status();
  QGEMM_RETURN_IF_ERROR(layer->prepare(a.m));
  result.prepare_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  result.backend = layer->backend();
  const size_t out_bytes = size_t(a.m) * w.n * ((out.bits + 7) / 8);
  std::vector<uint8_t> c(out_bytes, 0xff);
  LinearArgs args;
  args.m = a.m;
  if (device < 0) {
    std::vector<uint8_t> workspace(layer->workspace_bytes(a.m));
    args.a = a_data.data();
    if (!a.scales.empty())
      args.a_scales =
          ActScales::of(a.format, a.scales.data(), a.global.empty() ? nullptr : a.global.data());
    args.bias = bias.empty() ? nullptr : bias.data();
    args.c = c.data();
    args.workspace = workspace.empty() ? nullptr : workspace.data();
    args.workspace_bytes = workspace.size();
    QGEMM_RETURN_IF_ERROR(layer->run(args));
  } else {
    auto d_a = DeviceBuffer::upload(a_data.data(), a_data.size());
    auto d_s = DeviceBuffer::upload(a.scales.data(), a.scales.size() * 4);
    auto d_b = DeviceBuffer::upload(bias.data(), bias.size());
    auto d_c = DeviceBuffer::upload(c.data(), out_bytes);  // NaN poison: 0xff bytes
    auto d_g = DeviceBuffer::upload(a.global.data(), a.global.size() * 4);
    auto d_w = DeviceBuffer::allocate(std::max<size_t>(layer->workspace_bytes(a.m), 1));
    for (auto* b : {&d_a, &d_s, &d_g, &d_b, &d_c, &d_w})
      if (!*b) return b->status();
    args.a = d_a->get();
    if (!a.scales.empty())
      args.a_scales =
          ActScales::of(a.format, static_cast<const float*>(d_s->get()),
                        a.global.empty() ? nullptr : static_cast<const float*>(d_g->get()));
    args.bias = bias.empty() ? nullptr : d_b->get();
    args.c = d_c->get();
    args.workspace = d_w->get();
    args.workspace_bytes = d_w->bytes();
    QGEMM_RETURN_IF_ERROR(layer->run(args));
    auto driver = cuda_driver();
    if (!driver) return driver.status();
    QGEMM_CU(*driver, cuCtxSynchronize);
    QGEMM_RETURN_IF_ERROR(d_c->download(c.data(), out_bytes));
  }
  result.c = decode_output(out, c);
  for (double v : result.c)
    if (std::isnan(v)) ++result.unwritten;
  return result;
}

namespace {

// `call`'s fields as GroupedArgs over host memory.
GroupedArgs host_args(const HostGroupedCall& call) {
  GroupedArgs g;
  g.layout = call.layout;
  g.rows = call.rows;
  g.top_k = call.top_k;
  g.expert_ids = call.expert_ids.empty() ? nullptr : call.expert_ids.data();
  g.expert_map = call.expert_map.empty() ? nullptr : call.expert_map.data();
  g.global_experts = call.global_experts;
  g.offsets = call.offsets.empty() ? nullptr : call.offsets.data();
  g.counts = call.counts.empty() ? nullptr : call.counts.data();
  return g;
}

}  // namespace

Expected<HostRun> run_grouped_on_host_data(const QuantizedWeight& stack, const LinearOptions& lo,
                                           const std::vector<uint8_t>& a16,
                                           const HostGroupedCall& call,
                                           const std::vector<uint8_t>& bias) {
  if (lo.device >= 0) QGEMM_RETURN_IF_ERROR(use_device(lo.device));
  HostRun result;
  const auto t0 = std::chrono::steady_clock::now();
  auto layer = GroupedLinear::create(stack, lo);
  if (!layer) return layer.status();
  GroupedArgs args = host_args(call);
  const int64_t out_rows = args.out_rows(stack.experts);
  if (out_rows > 0) QGEMM_RETURN_IF_ERROR(layer->prepare(out_rows));
  result.prepare_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  result.backend = layer->backend();
  const size_t out_bytes = size_t(out_rows) * stack.n * ((lo.out.bits + 7) / 8);
  std::vector<uint8_t> c(out_bytes, 0xff);
  if (lo.device < 0) {
    std::vector<uint8_t> workspace(layer->workspace_bytes(args));
    args.a = a16.data();
    args.bias = bias.empty() ? nullptr : bias.data();
    args.c = c.data();
    args.workspace = workspace.empty() ? nullptr : workspace.data();
    args.workspace_bytes = workspace.size();
    QGEMM_RETURN_IF_ERROR(layer->run(args));
  } else {
    const auto upload_ints = [](const std::vector<int32_t>& v) {
      return DeviceBuffer::upload(v.data(), v.size() * 4);
    };
    auto d_a = DeviceBuffer::upload(a16.data(), a16.size());
    auto d_ids = upload_ints(call.expert_ids);
    auto d_map = upload_ints(call.expert_map);
    auto d_off = upload_ints(call.offsets);
    auto d_cnt = upload_ints(call.counts);
    auto d_b = DeviceBuffer::upload(bias.data(), bias.size());
    auto d_c = DeviceBuffer::upload(c.data(), out_bytes);  // NaN poison: 0xff bytes
    auto d_w = DeviceBuffer::allocate(std::max<size_t>(layer->workspace_bytes(args), 1));
    for (auto* b : {&d_a, &d_ids, &d_map, &d_off, &d_cnt, &d_b, &d_c, &d_w})
      if (!*b) return b->status();
    const auto ints = [](const Expected<DeviceBuffer>& b, const std::vector<int32_t>& v) {
      return v.empty() ? nullptr : static_cast<const int32_t*>(b->get());
    };
    args.a = d_a->get();
    args.expert_ids = ints(d_ids, call.expert_ids);
    args.expert_map = ints(d_map, call.expert_map);
    args.offsets = ints(d_off, call.offsets);
    args.counts = ints(d_cnt, call.counts);
    args.bias = bias.empty() ? nullptr : d_b->get();
    args.c = d_c->get();
    args.workspace = d_w->get();
    args.workspace_bytes = d_w->bytes();
    QGEMM_RETURN_IF_ERROR(layer->run(args));
    auto driver = cuda_driver();
    if (!driver) return driver.status();
    QGEMM_CU(*driver, cuCtxSynchronize);
    QGEMM_RETURN_IF_ERROR(d_c->download(c.data(), out_bytes));
  }
  result.c = decode_output(lo.out, c);
  const GroupedArgs host = host_args(call);
  std::vector<int64_t> unrouted;
  const std::vector<GroupedRow> rows = grouped_rows(host, stack.experts, &unrouted);
  for (const GroupedRow& r : rows) unrouted.push_back(r.c_row);
  for (int64_t row : unrouted)
    for (int64_t j = 0; j < stack.n; ++j)
      if (std::isnan(result.c[row * stack.n + j])) ++result.unwritten;
  return result;
}

GroupedOutputs split_grouped_outputs(const std::vector<double>& reference,
                                     const std::vector<double>& c) {
  GroupedOutputs o;
  for (size_t i = 0; i < reference.size() && i < c.size(); ++i) {
    if (std::isnan(reference[i])) {
      o.touched += !std::isnan(c[i]);
      continue;
    }
    o.want.push_back(reference[i]);
    o.got.push_back(c[i]);
  }
  return o;
}

Expected<std::vector<double>> reference_grouped(const QuantizedActivations& a,
                                                const QuantizedWeight& stack,
                                                const HostGroupedCall& call,
                                                const std::vector<float>& bias) {
  // The call as a routing of one slot per output row (routed: the call's own slots with local
  // ids).
  Routing routing;
  const int64_t e_count = stack.experts;
  if (call.layout == GroupedLayout::kRouted) {
    routing.tokens = call.rows;
    routing.top_k = call.top_k;
    const int32_t* map = call.expert_map.empty() ? nullptr : call.expert_map.data();
    const int64_t global = map != nullptr ? call.global_experts : e_count;
    for (int32_t id : call.expert_ids)
      routing.expert_ids.push_back(static_cast<int32_t>(local_expert(id, map, global, e_count)));
    routing.weights.assign(routing.expert_ids.size(), 1.0f);
    return reference_moe(a, stack, routing, false, bias);
  }
  const int64_t out_rows = call.layout == GroupedLayout::kMasked ? call.rows * e_count : call.rows;
  std::vector<int32_t> expert_of(out_rows, -1);
  for (int64_t e = 0; e < e_count; ++e) {
    int64_t lo = 0, hi = 0;
    if (call.layout == GroupedLayout::kMasked) {
      lo = e * call.rows;
      hi = lo + std::clamp<int64_t>(call.counts[e], 0, call.rows);
    } else {
      lo = std::clamp<int64_t>(call.offsets[e], 0, call.rows);
      hi = std::clamp<int64_t>(call.offsets[e + 1], lo, call.rows);
    }
    for (int64_t r = lo; r < hi; ++r) expert_of[r] = static_cast<int32_t>(e);
  }
  routing.tokens = out_rows;
  routing.top_k = 1;
  routing.expert_ids = expert_of;
  routing.weights.assign(out_rows, 1.0f);
  auto c = reference_moe(a, stack, routing, false, bias);
  if (!c) return c.status();
  for (int64_t r = 0; r < out_rows; ++r)
    if (expert_of[r] < 0)
      for (int64_t j = 0; j < stack.n; ++j) (*c)[r * stack.n + j] = std::nan("");
  return c;
}

void route_on_host(const MoeOptions& o, const float* logits, const float* correction_bias,
                   int64_t tokens, int64_t experts, int32_t* ids, float* weights) {
  const MoeRouting r{static_cast<i32>(experts),
                     o.top_k,
                     o.sigmoid_scoring ? 1 : 0,
                     o.renormalize ? 1 : 0,
                     o.groups,
                     o.top_groups,
                     o.routed_scale};
  for (int64_t t = 0; t < tokens; ++t)
    moe_route(logits + t * experts, correction_bias, r, ids + t * o.top_k, weights + t * o.top_k);
}

Expected<std::vector<double>> reference_moe_layer(
    const std::vector<uint8_t>& x16, int64_t tokens, const QuantizedWeight& w13,
    const QuantizedWeight& w2, const MoeOptions& options, const std::vector<int32_t>& ids,
    const std::vector<float>& weights, const std::vector<int32_t>& expert_map, int64_t global,
    const std::vector<float>& w13_bias, const std::vector<float>& w2_bias) {
  const DType t = options.linear.input;
  const ActFormat act =
      options.linear.act.is_quantized() ? options.linear.act : *ActFormat::parse(t.name());
  const int k = options.top_k;
  const int64_t slots = tokens * k, hidden = w13.k, inter = w2.k;
  // Local ids, -1 for a slot no local expert takes.
  Routing local;
  local.tokens = tokens;
  local.top_k = k;
  const int32_t* map = expert_map.empty() ? nullptr : expert_map.data();
  for (int32_t id : ids)
    local.expert_ids.push_back(static_cast<int32_t>(local_expert(id, map, global, w13.experts)));
  local.weights.assign(slots, 1.0f);
  auto x = quantize_activations(HostValues{x16.data(), t, tokens * hidden}, tokens, hidden, act);
  if (!x) return x.status();
  auto h = reference_moe(*x, w13, local, false, w13_bias);
  if (!h) return h.status();
  const auto round16 = [&](double v) { return static_cast<float>(decode(t, encode(t, v))); };
  std::vector<float> gated(slots * inter);
  for (int64_t s = 0; s < slots; ++s)
    for (int64_t i = 0; i < inter; ++i) {
      const double* row = h->data() + s * 2 * inter;
      const bool il = options.interleaved_gate_up;
      const float g = round16(row[il ? 2 * i : i]), u = round16(row[il ? 2 * i + 1 : inter + i]);
      gated[s * inter + i] =
          round16(moe_activate(g, u,
                               options.activation == MoeActivation::kGeluMul       ? 1
                               : options.activation == MoeActivation::kSwigluClamp ? 2
                                                                                   : 0,
                               options.swiglu_alpha, options.swiglu_limit));
    }
  auto a2 = quantize_activations(HostValues::of(gated), slots, inter, act);
  if (!a2) return a2.status();
  Routing per_slot;
  per_slot.tokens = slots;
  per_slot.top_k = 1;
  per_slot.expert_ids = local.expert_ids;
  per_slot.weights.assign(slots, 1.0f);
  auto y = reference_moe(*a2, w2, per_slot, false, w2_bias);
  if (!y) return y.status();
  std::vector<double> out(tokens * hidden, 0.0);
  for (int64_t s = 0; s < slots; ++s) {
    if (local.expert_ids[s] < 0) continue;
    for (int64_t n = 0; n < hidden; ++n)
      out[(s / k) * hidden + n] += weights[s] * double(round16((*y)[s * hidden + n]));
  }
  return out;
}

}  // namespace qgemm
