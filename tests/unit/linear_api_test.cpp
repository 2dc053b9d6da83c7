// The public Linear API on host memory (device -1): what the README shows, and its errors.
#include <gtest/gtest.h>

#include <cstring>

#include "qgemm/qgemm.h"
#include "util/random.h"

namespace qgemm {
namespace {

struct HostLayer {
  QuantizedWeight w;
  QuantizedActivations a;
};

HostLayer make_layer(const char* weight, const char* act, int64_t m, int64_t n, int64_t k) {
  HostLayer l;
  l.w = *quantize_weights(HostValues::of(random_normal(n * k, 1, 0.05f)), 1, n, k,
                          *WeightFormat::parse(weight));
  l.a = *quantize_activations(HostValues::of(random_normal(m * k, 2, 1.0f)), m, k,
                              *ActFormat::parse(act));
  return l;
}

TEST(LinearApi, HostLayerRunsOnTheCpuBackendAndMatchesTheReference) {
  const int64_t m = 5, n = 48, k = 256;
  HostLayer l = make_layer("int4/g128/bf16", "e4m3/token", m, n, k);
  LinearOptions options;
  options.act = l.a.format;
  options.device = -1;
  auto layer = Linear::create(l.w, options);
  ASSERT_TRUE(layer.ok()) << layer.status().to_string();
  EXPECT_EQ(layer->backend(), "cpu");
  EXPECT_NE(layer->explain().find("jit: no"), std::string::npos) << layer->explain();
  ASSERT_TRUE(layer->prepare(m).ok());
  std::vector<uint16_t> c(m * n, 0xffff);
  LinearArgs args{m,       l.a.data.data(), ActScales::of(l.a.format, l.a.scales.data()),
                  nullptr, c.data(),        nullptr,
                  0,       nullptr};
  ASSERT_TRUE(layer->run(args).ok());
  auto ref = reference_gemm(l.a, l.w);
  ASSERT_TRUE(ref.ok());
  std::vector<double> got;
  for (uint16_t v : c) got.push_back(decode(DType::bf16(), v));
  EXPECT_LE(compare(*ref, got).rel_frobenius, 5e-3);
}

TEST(LinearApi, BadInputsAreClearErrors) {
  HostLayer l = make_layer("int4/g128/bf16", "bf16", 4, 32, 128);
  LinearOptions options;
  options.device = -1;
  options.out = DType::e4m3();
  auto bad_out = Linear::create(l.w, options);
  EXPECT_EQ(bad_out.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad_out.status().message().find("output type e4m3"), std::string::npos);

  options.out = DType::bf16();
  options.device = -7;
  EXPECT_NE(Linear::create(l.w, options).status().message().find("device -7"), std::string::npos);

  options.device = -1;
  options.act = *ActFormat::parse("e4m3/g256/fp32");  // K=128 is not a multiple of 256
  auto bad_k = Linear::create(l.w, options);
  EXPECT_NE(bad_k.status().message().find("not a multiple of the group size 256"),
            std::string::npos)
      << bad_k.status().message();

  options.act = *ActFormat::parse("bf16");
  auto layer = Linear::create(l.w, options);
  ASSERT_TRUE(layer.ok());
  ASSERT_TRUE(layer->prepare(4).ok());
  std::vector<uint16_t> c(4 * 32);
  LinearArgs args{4, l.a.data.data(), {}, nullptr, c.data(), nullptr, 0, nullptr};
  LinearArgs no_a = args;
  no_a.a = nullptr;
  EXPECT_NE(layer->run(no_a).message().find("activation pointer a is null"), std::string::npos);
  LinearArgs too_many = args;
  too_many.m = 5;
  EXPECT_NE(layer->run(too_many).message().find("exceeds prepare(max_tokens=4)"),
            std::string::npos);
  LinearArgs negative = args;
  negative.m = -1;
  EXPECT_NE(layer->run(negative).message().find("m=-1 must not be negative"), std::string::npos);
  // An empty batch is a valid call that touches no pointer.
  LinearArgs empty;
  EXPECT_TRUE(layer->run(empty).ok());
  EXPECT_EQ(layer->workspace_bytes(0), 0u);
  EXPECT_EQ(layer->prepare(0).code(), ErrorCode::kInvalidArgument);
}

TEST(LinearApi, BackendsCanBeForcedAndExplainWhyNot) {
  HostLayer l = make_layer("nvfp4", "bf16", 2, 32, 128);
  LinearOptions options;
  options.device = -1;
  options.backend = BackendKind::kJit;
  auto layer = Linear::create(l.w, options);
  ASSERT_FALSE(layer.ok());
  EXPECT_EQ(layer.status().code(), ErrorCode::kUnsupported);
  EXPECT_NE(layer.status().message().find("jit: no, the layer lives in host memory"),
            std::string::npos)
      << layer.status().message();
  EXPECT_EQ(parse_backend("tpu").status().code(), ErrorCode::kInvalidArgument);
}

TEST(LinearApi, ActivationScalesMustMatchTheLayersFormat) {
  HostLayer l = make_layer("int4/g128/bf16", "e4m3/token", 2, 32, 128);
  LinearOptions options;
  options.device = -1;
  options.act = l.a.format;
  auto layer = Linear::create(l.w, options);
  ASSERT_TRUE(layer.ok()) << layer.status().to_string();
  ASSERT_TRUE(layer->prepare(2).ok());
  std::vector<uint16_t> c(2 * 32);
  LinearArgs args{2,       l.a.data.data(), ActScales::of(l.a.format, l.a.scales.data()),
                  nullptr, c.data(),        nullptr,
                  0,       nullptr};
  EXPECT_TRUE(layer->run(args).ok());
  LinearArgs stray_global = args;
  stray_global.a_scales.global = l.a.scales.data();
  EXPECT_NE(layer->run(stray_global).message().find("which take no a_scales.global"),
            std::string::npos);
  LinearArgs grouped = args;
  grouped.a_scales.kind = ActScaleKind::kGroup;
  grouped.a_scales.group_k = 32;
  EXPECT_NE(layer->run(grouped).message().find(
                "a_scales describe per-group g32 scales, but the layer's activations are "
                "e4m3/token"),
            std::string::npos)
      << layer->run(grouped).message();
  LinearArgs bytes = args;
  bytes.a_scales.type = DType::ue8m0();
  EXPECT_NE(layer->run(bytes).message().find("a_scales.type is ue8m0"), std::string::npos);

  options.act = *ActFormat::parse("bf16");
  auto plain = Linear::create(l.w, options);
  ASSERT_TRUE(plain.ok());
  ASSERT_TRUE(plain->prepare(2).ok());
  EXPECT_NE(plain->run(args).message().find("which take no scales"), std::string::npos);
}

// Without scales, a layer of quantized activations takes 16-bit input and quantizes it itself:
// the same bits as quantizing on the host first (one recipe), for every activation format.
TEST(LinearApi, SixteenBitInputIsQuantizedByTheLayer) {
  const int64_t m = 3, n = 40, k = 256;
  const std::vector<float> values = random_normal(m * k, 7, 1.5f);
  std::vector<uint16_t> input(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    input[i] = static_cast<uint16_t>(encode(DType::bf16(), values[i]));
  const auto w = *quantize_weights(HostValues::of(random_normal(n * k, 1, 0.05f)), 1, n, k,
                                   *WeightFormat::parse("int4/g128/bf16"));
  for (const char* act :
       {"e4m3/token", "e4m3/g128/fp32", "mxfp8", "int8/token", "e4m3/tensor", "nvfp4"}) {
    SCOPED_TRACE(act);
    const ActFormat format = *ActFormat::parse(act);
    auto q = quantize_activations(HostValues{input.data(), DType::bf16(), m * k}, m, k, format);
    ASSERT_TRUE(q.ok()) << q.status().to_string();
    LinearOptions options;
    options.device = -1;
    options.act = format;
    auto layer = Linear::create(w, options);
    ASSERT_TRUE(layer.ok()) << layer.status().to_string();
    ASSERT_TRUE(layer->prepare(m).ok());
    std::vector<uint16_t> from_codes(m * n, 0xffff), from_input(m * n, 0x7fff);
    LinearArgs args{
        m,
        q->data.data(),
        ActScales::of(format, q->scales.data(), q->global.empty() ? nullptr : q->global.data()),
        nullptr,
        from_codes.data(),
        nullptr,
        0,
        nullptr};
    ASSERT_TRUE(layer->run(args).ok());
    args.a = input.data();
    args.a_scales = {};
    args.c = from_input.data();
    ASSERT_TRUE(layer->run(args).ok());
    EXPECT_EQ(from_codes, from_input);
  }
}

// Act-order layers (LinearOptions::k_order) take activations in the model's order: the same bits
// as the layer without k_order run on the activations gathered by hand, for 16-bit and for
// quantized activations (which the layer then quantizes after gathering). Bad orders and
// pre-quantized input are clear errors.
TEST(LinearApi, ActOrderLayersGatherTheModelsColumns) {
  const int64_t m = 3, n = 40, k = 256;
  const std::vector<float> values = random_normal(m * k, 8, 1.0f);
  std::vector<int32_t> order(k);
  for (int64_t c = 0; c < k; ++c) order[c] = static_cast<int32_t>((c * 97 + 13) % k);
  std::vector<uint16_t> input(m * k), gathered(m * k);
  for (int64_t i = 0; i < m * k; ++i)
    input[i] = static_cast<uint16_t>(encode(DType::bf16(), values[i]));
  for (int64_t r = 0; r < m; ++r)
    for (int64_t c = 0; c < k; ++c) gathered[r * k + c] = input[r * k + order[c]];
  const auto w = *quantize_weights(HostValues::of(random_normal(n * k, 1, 0.05f)), 1, n, k,
                                   *WeightFormat::parse("int4/g128/bf16"));
  for (const char* act : {"bf16", "e4m3/g128/fp32"}) {
    SCOPED_TRACE(act);
    LinearOptions options;
    options.device = -1;
    options.act = *ActFormat::parse(act);
    auto plain = Linear::create(w, options);
    options.k_order = order;
    auto ordered = Linear::create(w, options);
    ASSERT_TRUE(plain.ok() && ordered.ok()) << ordered.status().to_string();
    ASSERT_TRUE(plain->prepare(m).ok() && ordered->prepare(m).ok());
    EXPECT_EQ(ordered->workspace_bytes(m), plain->workspace_bytes(m) + 256 * 6);
    std::vector<uint16_t> want(m * n, 0xffff), got(m * n, 0x7fff);
    std::vector<uint8_t> workspace(ordered->workspace_bytes(m));
    LinearArgs args{m, gathered.data(), {}, nullptr, want.data(), nullptr, 0, nullptr};
    ASSERT_TRUE(plain->run(args).ok());
    args.a = input.data();
    args.c = got.data();
    args.workspace = workspace.data();
    args.workspace_bytes = workspace.size();
    ASSERT_TRUE(ordered->run(args).ok());
    EXPECT_EQ(want, got);
    EXPECT_NE(ordered->explain().find("act-order"), std::string::npos) << ordered->explain();
    EXPECT_EQ(plain->explain().find("act-order"), std::string::npos);
    if (options.act.is_quantized()) {
      std::vector<float> scales(m * k / 128, 1.0f);
      args.a_scales = ActScales::of(options.act, scales.data());
      const Status s = ordered->run(args);
      EXPECT_NE(s.message().find("a_scales.data must be null"), std::string::npos) << s.message();
    }
  }
  LinearOptions options;
  options.device = -1;
  options.k_order = order;
  options.k_order.pop_back();
  EXPECT_NE(Linear::create(w, options).status().message().find("k_order has 255 entries"),
            std::string::npos);
  options.k_order = order;
  options.k_order[5] = options.k_order[4];
  EXPECT_NE(Linear::create(w, options).status().message().find("repeats an earlier entry"),
            std::string::npos);
  options.k_order[5] = -1;
  EXPECT_NE(Linear::create(w, options).status().message().find("k_order[5] = -1 is outside"),
            std::string::npos);
}

}  // namespace
}  // namespace qgemm
