// The public Linear object on the GPU: the qdq backend, routing fallbacks, CUDA-graph capture.
#include <gtest/gtest.h>

#include "backend/device_buffer.h"
#include "gpu_test_util.h"
#include "util/error.h"
#include "util/random.h"

namespace qgemm {
namespace {

TEST(LinearGpu, QdqBackendMatchesReference) {
  QGEMM_REQUIRE_GPU();
  for (const char* spec : {"int4/g128/bf16", "e2m1/g16/e4m3/global", "uint4/channel/fp16/zp",
                           "e4m3/b128x128/fp32", "int3/g32/fp16"})
    for (int64_t m : {1, 70}) {
      SCOPED_TRACE(str(spec, " M=", m));
      auto r = testing::run_and_check(*WeightFormat::parse(spec), *ActFormat::parse("bf16"),
                                      DType::bf16(), m, 520, 1024, BackendKind::kQdq, 3 + m, true);
      ASSERT_NO_FATAL_FAILURE(testing::expect_matches_reference(r, 5e-3));
      EXPECT_EQ(r->backend, "qdq");
    }
}

// Groups of 40 are no jit format (no multiple of the 16-element k-step); auto routing must
// still run the layer.
TEST(LinearGpu, FallbackRunsWhatJitDeclines) {
  QGEMM_REQUIRE_GPU();
  auto r = testing::run_and_check(*WeightFormat::parse("int4/g40/fp16"), *ActFormat::parse("fp16"),
                                  DType::fp16(), 5, 256, 520, BackendKind::kAuto, 11);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_NE(r->backend, "jit");
  EXPECT_LE(r->cmp.rel_frobenius, 2e-3);
}

// The CPU backend runs a GPU layer from device memory (copies in and out).
TEST(LinearGpu, CpuFallbackFromDeviceMemory) {
  QGEMM_REQUIRE_GPU();
  auto r = testing::run_and_check(*WeightFormat::parse("e2m1/g32/ue8m0"),
                                  *ActFormat::parse("e4m3/g32/ue8m0"), DType::bf16(), 3, 64, 256,
                                  BackendKind::kCpu, 12);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->backend, "cpu");
  EXPECT_LE(r->cmp.rel_frobenius, 5e-3);
}

// Act-order layers (LinearOptions::k_order) gather the model-order activations on the GPU: the
// same bits as the layer without k_order on activations in the stored order, for the decode,
// mid and large-M kernels; poisoned outputs all written.
// The decode tile stages the rows itself up to act_order_rows tokens (1 and 2 at K = 1024, and
// int4/channel at K = 1001, whose padded rows the order's padding points into); past them, for
// K = 28672 (rows too long to stage) and for three-stage rings (int8/channel), the gather kernel
// (act_order.cpp) runs first: direct below 64 rows, for K past what a row of shared memory
// holds and for odd K (scalar stores); staged in one slab of several chunks a thread (M = 300)
// or in slabs of their own (M = 100, K = 8192).
TEST(LinearGpu, ActOrderGatherGivesTheBitsOfTheStoredOrder) {
  QGEMM_REQUIRE_GPU();
  struct Case {
    const char* weight;
    const char* act;
    int64_t n, k, m;
  };
  std::vector<Case> cases;
  for (const auto& [weight, act] :
       {std::pair{"uint4/g128/fp16/zp", "fp16"}, std::pair{"int4/g128/bf16", "bf16"}})
    for (int64_t m : {1, 2, 5, 8, 40, 300}) cases.push_back({weight, act, 520, 1024, m});
  cases.push_back({"uint4/g128/fp16/zp", "fp16", 256, 28672, 1});
  cases.push_back({"int8/channel/bf16", "bf16", 64, 1001, 1});
  cases.push_back({"int8/channel/bf16", "bf16", 64, 1001, 7});
  cases.push_back({"int4/channel/bf16", "bf16", 520, 1001, 1});
  cases.push_back({"int4/channel/bf16", "bf16", 520, 1001, 2});
  cases.push_back({"int4/g128/bf16", "bf16", 64, 33024, 40});
  cases.push_back({"int4/g128/bf16", "bf16", 64, 8192, 100});
  cases.push_back({"int4/g128/bf16", "bf16", 64, 8192, 300});
  cases.push_back({"int8/channel/bf16", "bf16", 64, 1001, 100});
  for (const auto& [weight, act, n, k, m] : cases) {
    std::vector<int32_t> order(k);
    for (int64_t c = 0; c < k; ++c) order[c] = static_cast<int32_t>((c * 389 + 7) % k);
    SCOPED_TRACE(str(weight, " x ", act, " N=", n, " K=", k, " M=", m));
    const WeightFormat wf = *WeightFormat::parse(weight);
    auto w = quantize_weights(HostValues::of(random_normal(n * k, 31 + m, 0.05f)), 1, n, k, wf);
    ASSERT_TRUE(w.ok()) << w.status().to_string();
    auto a = quantize_activations(HostValues::of(random_normal(m * k, 32 + m, 1.0f)), m, k,
                                  *ActFormat::parse(act));
    ASSERT_TRUE(a.ok());
    auto plain = run_linear_on_host_data(*w, *a, {}, DType::bf16(), BackendKind::kJit, 0);
    auto ordered = run_linear_on_host_data(*w, *a, {}, DType::bf16(), BackendKind::kJit, 0, order);
    ASSERT_TRUE(plain.ok()) << plain.status().to_string();
    ASSERT_TRUE(ordered.ok()) << ordered.status().to_string();
    EXPECT_EQ(ordered->unwritten, 0);
    EXPECT_EQ(plain->backend, ordered->backend);
    EXPECT_EQ(plain->c, ordered->c);
    auto ref = reference_gemm(*a, *w);
    ASSERT_TRUE(ref.ok());
    EXPECT_LE(compare(*ref, ordered->c).rel_frobenius, 5e-3);
  }
}

TEST(LinearGpu, RunUnderGraphCaptureNeverCompiles) {
  QGEMM_REQUIRE_GPU();
  const int64_t m = 48, n = 384, k = 1024;
  const auto wv = random_normal(n * k, 21, 0.05f);
  auto w = quantize_weights(HostValues::of(wv), 1, n, k, *WeightFormat::parse("int4/g128/bf16"));
  ASSERT_TRUE(w.ok());
  const auto av = random_normal(m * k, 22, 1.0f);
  auto a = quantize_activations(HostValues::of(av), m, k, *ActFormat::parse("bf16"));
  ASSERT_TRUE(a.ok());
  ASSERT_TRUE(use_device(0).ok());
  LinearOptions lo;
  lo.backend = BackendKind::kJit;
  auto layer = Linear::create(*w, lo);
  ASSERT_TRUE(layer.ok()) << layer.status().to_string();
  ASSERT_TRUE(layer->prepare(m).ok());

  auto d_a = DeviceBuffer::upload(a->data.data(), a->data.size());
  auto d_c = DeviceBuffer::allocate(m * n * 2);
  auto d_w = DeviceBuffer::allocate(std::max<size_t>(layer->workspace_bytes(m), 1));
  ASSERT_TRUE(d_a.ok() && d_c.ok() && d_w.ok());
  const CudaDriver* d = *cuda_driver();
  CUstream stream;
  ASSERT_EQ(d->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  const LinearArgs args = device_linear_args(m, *d_a, *d_c, *d_w, stream);

  // More tokens than prepared: a clear error, no compilation behind the caller's back.
  LinearArgs too_many = args;
  too_many.m = 4096;
  Status s = layer->run(too_many);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("prepare"), std::string::npos) << s.message();

  ASSERT_EQ(d->cuMemsetD8(d_c->ptr(), 0xff, m * n * 2), CUDA_SUCCESS);
  // The poison goes on the legacy stream, which `stream` (non-blocking) does not wait for.
  ASSERT_EQ(d->cuCtxSynchronize(), CUDA_SUCCESS);
  CUgraph graph;
  ASSERT_EQ(d->cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
  Status captured = layer->run(args);
  ASSERT_EQ(d->cuStreamEndCapture(stream, &graph), CUDA_SUCCESS);
  ASSERT_TRUE(captured.ok()) << captured.to_string();
  CUgraphExec exec;
  ASSERT_EQ(d->cuGraphInstantiateWithFlags(&exec, graph, 0), CUDA_SUCCESS);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(d->cuGraphLaunch(exec, stream), CUDA_SUCCESS);
  ASSERT_EQ(d->cuStreamSynchronize(stream), CUDA_SUCCESS);
  std::vector<uint8_t> c(m * n * 2);
  ASSERT_TRUE(d_c->download(c.data(), c.size()).ok());
  const auto got = decode_output(DType::bf16(), c);
  auto ref = reference_gemm(*a, *w);
  ASSERT_TRUE(ref.ok());
  const Comparison cmp = compare(*ref, got);
  EXPECT_EQ(cmp.nan_count, 0);
  EXPECT_LE(cmp.rel_frobenius, 5e-3);
  d->cuGraphExecDestroy(exec);
  d->cuGraphDestroy(graph);
  d->cuStreamDestroy(stream);
}

TEST(LinearGpu, BadArgumentsAreClearErrors) {
  QGEMM_REQUIRE_GPU();
  const auto wv = random_normal(64 * 128, 1, 0.05f);
  auto w = quantize_weights(HostValues::of(wv), 1, 64, 128, *WeightFormat::parse("int4/g128/bf16"));
  ASSERT_TRUE(use_device(0).ok());
  auto layer = Linear::create(*w, LinearOptions{});
  ASSERT_TRUE(layer.ok());
  ASSERT_TRUE(layer->prepare(8).ok());
  LinearArgs args;
  args.m = 4;
  Status s = layer->run(args);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("null"), std::string::npos) << s.message();
}

// Two layers of one weight, each on its own stream, running at the same time: every call gives
// the bits of a lone call (their split-K state is each layer's own).
TEST(LinearGpu, DistinctLayersOnTwoStreamsAtOnceGiveTheBitsOfALoneRun) {
  QGEMM_REQUIRE_GPU();
  const int64_t m = 16, n = 4096, k = 4096;
  auto w = quantize_weights(HostValues::of(random_normal(n * k, 31, 0.05f)), 1, n, k,
                            *WeightFormat::parse("int4/g128/bf16"));
  auto a = quantize_activations(HostValues::of(random_normal(m * k, 32, 1.0f)), m, k,
                                *ActFormat::parse("bf16"));
  ASSERT_TRUE(w.ok() && a.ok());
  ASSERT_TRUE(use_device(0).ok());
  const CudaDriver* d = *cuda_driver();
  auto d_a = DeviceBuffer::upload(a->data.data(), a->data.size());
  ASSERT_TRUE(d_a.ok());
  std::vector<Linear> layers;
  std::vector<DeviceBuffer> outputs, workspaces;
  std::vector<CUstream> streams(2);
  for (int i = 0; i < 2; ++i) {
    LinearOptions lo;
    lo.backend = BackendKind::kJit;
    auto layer = Linear::create(*w, lo);
    ASSERT_TRUE(layer.ok()) << layer.status().to_string();
    ASSERT_TRUE(layer->prepare(m).ok());
    auto c = DeviceBuffer::allocate(m * n * 2);
    auto ws = DeviceBuffer::allocate(std::max<size_t>(layer->workspace_bytes(m), 1));
    ASSERT_TRUE(c.ok() && ws.ok());
    layers.push_back(std::move(*layer));
    outputs.push_back(std::move(*c));
    workspaces.push_back(std::move(*ws));
    ASSERT_EQ(d->cuStreamCreate(&streams[i], CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  }
  const auto args_for = [&](int i) {
    return device_linear_args(m, *d_a, outputs[i], workspaces[i], streams[i]);
  };
  // Alone: layer 0, then read its output.
  ASSERT_TRUE(layers[0].run(args_for(0)).ok());
  ASSERT_EQ(d->cuStreamSynchronize(streams[0]), CUDA_SUCCESS);
  std::vector<uint16_t> alone(m * n), got(m * n);
  ASSERT_EQ(d->cuMemcpyDtoH(alone.data(), outputs[0].ptr(), alone.size() * 2), CUDA_SUCCESS);
  // Together: many calls of both layers interleaved on their two streams.
  for (int i = 0; i < 2; ++i)
    ASSERT_EQ(d->cuMemsetD8(outputs[i].ptr(), 0xff, m * n * 2), CUDA_SUCCESS);
  ASSERT_EQ(d->cuCtxSynchronize(), CUDA_SUCCESS);
  for (int round = 0; round < 20; ++round)
    for (int i = 0; i < 2; ++i) ASSERT_TRUE(layers[i].run(args_for(i)).ok());
  ASSERT_EQ(d->cuCtxSynchronize(), CUDA_SUCCESS);
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(d->cuMemcpyDtoH(got.data(), outputs[i].ptr(), got.size() * 2), CUDA_SUCCESS);
    EXPECT_EQ(got, alone) << "layer " << i;
  }
  for (CUstream s : streams) d->cuStreamDestroy(s);
}

}  // namespace
}  // namespace qgemm
