// The GPU activation quantizers against the CPU quantizer: the same codes and scales, bit for
// bit, for every activation format, both 16-bit input types, aligned and unaligned rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "backend/device_buffer.h"
#include "format/half.h"
#include "gpu_test_util.h"
#include "quant/gpu_act_quantizer.h"
#include "util/error.h"

namespace qgemm {
namespace {

// Rows of different magnitudes (tiny to large), a few exact zeros of both signs and an all-zero
// row, as 16-bit codes of `type`.
std::vector<uint16_t> test_input(int64_t m, int64_t k, DType type, uint64_t seed) {
  std::vector<float> v = random_normal(m * k, seed, 1.0f);
  std::vector<uint16_t> codes(v.size());
  for (int64_t i = 0; i < m * k; ++i) {
    const int64_t row = i / k;
    float x = v[i] * std::ldexp(1.0f, int(row % 9) - 4);
    if (i % 97 == 0 || row == 2) x = 0.0f;
    if (i % 89 == 1) x = -0.0f;
    codes[i] = float_to_half_code(type, x);
  }
  return codes;
}

struct Case {
  const char* act;
  int64_t m, k;
};

TEST(ActQuantGpu, BitIdenticalToTheCpuQuantizer) {
  QGEMM_REQUIRE_GPU();
  ASSERT_TRUE(use_device(0).ok());
  const std::string arch = list_devices()[0].arch();
  const Case cases[] = {
      {"e4m3/token", 1, 8192},
      {"e4m3/token", 118, 4096},
      {"e4m3/token", 7, 200},
      {"e4m3/token", 3, 1001},
      {"e4m3/tensor", 118, 1024},
      {"e4m3/tensor", 5, 333},
      {"e4m3/tensor", 600, 4104},
      {"e4m3/tensor", 301, 999},
      {"nvfp4", 300, 8192},
      {"e4m3/g128/fp32", 1000, 512},
      {"e4m3/g128/fp32", 7, 8192},
      {"mxfp8", 118, 2048},
      {"mxfp8", 3, 96},
      {"int8/token", 1000, 512},
      {"int8/token", 7, 77},
      {"nvfp4", 118, 1024},
      {"nvfp4", 1, 8192},
      {"e5m2/g32/ue8m0", 7, 256},
      {"e4m3/g40/bf16", 7, 400},
      {"int4/g64/fp16", 9, 512},
  };
  for (DType input : {DType::bf16(), DType::fp16()})
    for (const Case& c : cases) {
      SCOPED_TRACE(str(c.act, " from ", input.name(), " M=", c.m, " K=", c.k));
      const ActFormat f = *ActFormat::parse(c.act);
      const auto x = test_input(c.m, c.k, input, c.m * 31 + c.k);
      auto want = quantize_activations(HostValues{x.data(), input, c.m * c.k}, c.m, c.k, f);
      ASSERT_TRUE(want.ok()) << want.status().to_string();
      auto q = GpuActQuantizer::create(f, input, arch);
      ASSERT_TRUE(q.ok()) << q.status().to_string();
      const size_t ws_bytes = act_workspace_bytes(f, c.m, c.k);
      auto d_x = DeviceBuffer::upload(x.data(), x.size() * 2);
      auto d_ws = DeviceBuffer::allocate(ws_bytes);
      ASSERT_TRUE(d_x.ok() && d_ws.ok());
      // Poison: every byte the quantizer must write starts as 0xff.
      std::vector<uint8_t> poison(ws_bytes, 0xff);
      auto driver = cuda_driver();
      ASSERT_TRUE(driver.ok());
      ASSERT_EQ(CUDA_SUCCESS, (*driver)->cuMemcpyHtoD(d_ws->ptr(), poison.data(), ws_bytes));
      void* scratch = nullptr;
      const DeviceActs acts = carve_act_workspace(d_ws->get(), f, c.m, c.k, &scratch);
      ASSERT_TRUE(q->quantize(d_x->get(), c.k, c.m, c.k, acts, scratch, nullptr).ok());
      ASSERT_EQ(CUDA_SUCCESS, (*driver)->cuCtxSynchronize());
      std::vector<uint8_t> ws(ws_bytes);
      ASSERT_TRUE(d_ws->download(ws.data(), ws_bytes).ok());
      const uint8_t* codes = ws.data() + (acts.q - static_cast<uint8_t*>(d_ws->get()));
      int64_t code_mismatches = 0;
      for (int64_t r = 0; r < c.m; ++r)
        for (int64_t col = 0; col < c.k; ++col)
          if (codes[r * acts.ldq + col] != want->data[r * c.k + col] && code_mismatches++ < 5)
            ADD_FAILURE() << "code (" << r << ", " << col << "): gpu "
                          << int(codes[r * acts.ldq + col]) << ", cpu "
                          << int(want->data[r * c.k + col]);
      EXPECT_EQ(0, code_mismatches);
      const auto* scales =
          reinterpret_cast<const float*>(ws.data() + (reinterpret_cast<uint8_t*>(acts.scales) -
                                                      static_cast<uint8_t*>(d_ws->get())));
      for (size_t i = 0; i < want->scales.size(); ++i)
        ASSERT_EQ(0, std::memcmp(&scales[i], &want->scales[i], 4))
            << "scale " << i << ": gpu " << scales[i] << ", cpu " << want->scales[i];
      if (f.global_scale) {
        float g;
        std::memcpy(&g,
                    ws.data() + (reinterpret_cast<uint8_t*>(acts.global) -
                                 static_cast<uint8_t*>(d_ws->get())),
                    4);
        EXPECT_EQ(want->global[0], g);
      }
    }
}

// Gathered rows (a grouped layer's sorted copy): row r quantizes input row src[r] / 2 exactly as
// that row quantizes in place; rows marked -1 keep the poison.
TEST(ActQuantGpu, GatheredRowsQuantizeAsInPlace) {
  QGEMM_REQUIRE_GPU();
  ASSERT_TRUE(use_device(0).ok());
  const std::string arch = list_devices()[0].arch();
  const Case cases[] = {{"e4m3/token", 37, 2048},
                        {"e4m3/token", 11, 1001},
                        {"e4m3/g128/fp32", 37, 1024},
                        {"int8/token", 20, 520}};
  auto driver = cuda_driver();
  ASSERT_TRUE(driver.ok());
  for (const Case& c : cases) {
    SCOPED_TRACE(str(c.act, " M=", c.m, " K=", c.k));
    const ActFormat f = *ActFormat::parse(c.act);
    const DType input = DType::bf16();
    const auto x = test_input(c.m, c.k, input, c.m * 7 + c.k);
    auto want = quantize_activations(HostValues{x.data(), input, c.m * c.k}, c.m, c.k, f);
    ASSERT_TRUE(want.ok()) << want.status().to_string();
    // Slots of two per input row, out of order, a few unrouted (-1) past the end.
    const int64_t rows = 2 * c.m + 5;
    std::vector<int32_t> src(rows, -1);
    for (int64_t r = 0; r < 2 * c.m; ++r) src[r] = static_cast<int32_t>((r * 7 + 3) % (2 * c.m));
    src[4] = -1;
    auto q = GpuActQuantizer::create(f, input, arch);
    ASSERT_TRUE(q.ok()) << q.status().to_string();
    const size_t ws_bytes = act_workspace_bytes(f, rows, c.k);
    auto d_x = DeviceBuffer::upload(x.data(), x.size() * 2);
    auto d_src = DeviceBuffer::upload(src.data(), src.size() * 4);
    auto d_ws = DeviceBuffer::allocate(ws_bytes);
    ASSERT_TRUE(d_x.ok() && d_src.ok() && d_ws.ok());
    std::vector<uint8_t> ws(ws_bytes, 0xff);
    ASSERT_EQ(CUDA_SUCCESS, (*driver)->cuMemcpyHtoD(d_ws->ptr(), ws.data(), ws_bytes));
    void* scratch = nullptr;
    const DeviceActs acts = carve_act_workspace(d_ws->get(), f, rows, c.k, &scratch);
    ASSERT_TRUE(q->quantize_rows(d_x->get(), c.k, static_cast<const int32_t*>(d_src->get()), 2,
                                 rows, c.k, acts, scratch, nullptr)
                    .ok());
    ASSERT_EQ(CUDA_SUCCESS, (*driver)->cuCtxSynchronize());
    ASSERT_TRUE(d_ws->download(ws.data(), ws_bytes).ok());
    const uint8_t* codes = ws.data() + (acts.q - static_cast<uint8_t*>(d_ws->get()));
    const auto* scales = reinterpret_cast<const float*>(
        ws.data() + (reinterpret_cast<uint8_t*>(acts.scales) - static_cast<uint8_t*>(d_ws->get())));
    const int64_t cols = std::max<int64_t>(f.scale_cols(c.k), 1);
    for (int64_t r = 0; r < rows; ++r) {
      SCOPED_TRACE(str("row ", r, " from slot ", src[r]));
      for (int64_t col = 0; col < c.k; ++col) {
        const int want_code = src[r] < 0 ? 0xff : want->data[(src[r] / 2) * c.k + col];
        ASSERT_EQ(want_code, codes[r * acts.ldq + col]) << "column " << col;
      }
      for (int64_t j = 0; j < cols; ++j) {
        uint32_t got, expected = 0xffffffffu;
        std::memcpy(&got, &scales[r * cols + j], 4);
        if (src[r] >= 0) std::memcpy(&expected, &want->scales[(src[r] / 2) * cols + j], 4);
        ASSERT_EQ(expected, got) << "scale " << j;
      }
    }
  }
}

// Every activation format runs on the jit backend (the 8-bit kernels, or the weight-only tiles on
// activations widened to 16 bits where no 8-bit kernel takes the pair), from pre-quantized codes
// and from 16-bit input the layer quantizes itself, and matches the reference built from the same
// quantized operands; K = 1001 widens one element a thread (rows not 16-byte aligned).
TEST(ActQuantGpu, QuantizedActivationsRunOnTheGpuAndMatchTheReference) {
  QGEMM_REQUIRE_GPU();
  for (const auto& [w, act] :
       std::vector<std::pair<const char*, const char*>>{{"e4m3/channel/fp32", "e4m3/token"},
                                                        {"e4m3/b128x128/fp32", "e4m3/g128/fp32"},
                                                        {"int4/g128/bf16", "e4m3/token"},
                                                        {"e2m1/g32/ue8m0", "mxfp8"},
                                                        {"nvfp4", "e4m3/token"},
                                                        {"nvfp4", "nvfp4"},
                                                        {"int8/channel/fp32", "int8/token"},
                                                        {"int4/g128/fp16", "e4m3/tensor"}})
    for (int64_t m : {1, 7, 118}) {
      SCOPED_TRACE(str(w, " x ", act, " M=", m));
      auto r = testing::run_and_check(*WeightFormat::parse(w), *ActFormat::parse(act),
                                      DType::bf16(), m, 328, 768, BackendKind::kAuto, 40 + m, true);
      ASSERT_NO_FATAL_FAILURE(testing::expect_matches_reference(r, 5e-3));
      EXPECT_EQ(r->backend, "jit");
    }
  for (int64_t m : {3, 70}) {
    SCOPED_TRACE(str("int4/channel/bf16 x e4m3/token K=1001 M=", m));
    auto r = testing::run_and_check(*WeightFormat::parse("int4/channel/bf16"),
                                    *ActFormat::parse("e4m3/token"), DType::bf16(), m, 200, 1001,
                                    BackendKind::kAuto, 60 + m, true);
    ASSERT_NO_FATAL_FAILURE(testing::expect_matches_reference(r, 5e-3));
    EXPECT_EQ(r->backend, "jit");
  }
}

// A GPU layer given 16-bit input quantizes it itself: the same output bits as the same layer
// given the CPU quantizer's codes and scales (the quantizers agree bit for bit).
TEST(ActQuantGpu, LayerQuantizesSixteenBitInputItself) {
  QGEMM_REQUIRE_GPU();
  ASSERT_TRUE(use_device(0).ok());
  const int64_t m = 37, n = 264, k = 1024;
  const auto w = *quantize_weights(HostValues::of(random_normal(n * k, 5, 0.05f)), 1, n, k,
                                   *WeightFormat::parse("e4m3/channel/fp32"));
  const auto x = test_input(m, k, DType::bf16(), 77);
  auto driver = cuda_driver();
  ASSERT_TRUE(driver.ok());
  for (const char* act : {"e4m3/token", "e4m3/tensor", "mxfp8", "nvfp4", "int8/token"}) {
    SCOPED_TRACE(act);
    const ActFormat f = *ActFormat::parse(act);
    const auto q = *quantize_activations(HostValues{x.data(), DType::bf16(), m * k}, m, k, f);
    LinearOptions lo;
    lo.act = f;
    auto layer = Linear::create(w, lo);
    ASSERT_TRUE(layer.ok()) << layer.status().to_string();
    ASSERT_TRUE(layer->prepare(m).ok());
    auto d_x = DeviceBuffer::upload(x.data(), x.size() * 2);
    auto d_q = DeviceBuffer::upload(q.data.data(), q.data.size());
    auto d_s = DeviceBuffer::upload(q.scales.data(), q.scales.size() * 4);
    auto d_g = DeviceBuffer::upload(q.global.data(), q.global.size() * 4);
    auto d_c = DeviceBuffer::allocate(m * n * 2);
    auto d_ws = DeviceBuffer::allocate(std::max<size_t>(layer->workspace_bytes(m), 1));
    ASSERT_TRUE(d_x.ok() && d_q.ok() && d_s.ok() && d_g.ok() && d_c.ok() && d_ws.ok());
    LinearArgs args;
    args.m = m;
    args.c = d_c->get();
    args.workspace = d_ws->get();
    args.workspace_bytes = d_ws->bytes();
    std::vector<uint16_t> from_codes(m * n), from_input(m * n);
    args.a = d_q->get();
    args.a_scales = ActScales::of(f, static_cast<const float*>(d_s->get()),
                                  f.global_scale ? static_cast<const float*>(d_g->get()) : nullptr);
    ASSERT_TRUE(layer->run(args).ok());
    ASSERT_EQ(CUDA_SUCCESS, (*driver)->cuCtxSynchronize());
    ASSERT_TRUE(d_c->download(from_codes.data(), m * n * 2).ok());
    ASSERT_EQ(CUDA_SUCCESS, (*driver)->cuMemsetD8(d_c->ptr(), 0xff, m * n * 2));
    args.a = d_x->get();
    args.a_scales = {};
    ASSERT_TRUE(layer->run(args).ok());
    ASSERT_EQ(CUDA_SUCCESS, (*driver)->cuCtxSynchronize());
    ASSERT_TRUE(d_c->download(from_input.data(), m * n * 2).ok());
    EXPECT_EQ(from_codes, from_input) << layer->explain();
  }
}

}  // namespace
}  // namespace qgemm
