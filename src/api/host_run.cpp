#include "api/host_run.h"

#include <chrono>
#include <cmath>
#include <cstring>

#include "backend/device_buffer.h"
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

Expected<HostRun> run_linear_on_host_data(const QuantizedWeight& w, const QuantizedActivations& a,
                                          const std::vector<uint8_t>& bias, DType out,
                                          BackendKind backend, int device) {
  LinearOptions lo;
  lo.act = a.format;
  lo.out = out;
  lo.backend = backend;
  lo.device = device;
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
    args.a = a.data.data();
    if (!a.scales.empty())
      args.a_scales =
          ActScales::of(a.format, a.scales.data(), a.global.empty() ? nullptr : a.global.data());
    args.bias = bias.empty() ? nullptr : bias.data();
    args.c = c.data();
    args.workspace = workspace.empty() ? nullptr : workspace.data();
    args.workspace_bytes = workspace.size();
    QGEMM_RETURN_IF_ERROR(layer->run(args));
  } else {
    auto d_a = DeviceBuffer::upload(a.data.data(), a.data.size());
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

}  // namespace qgemm
