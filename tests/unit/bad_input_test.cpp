// The bad-input table of the C++ API: every case must fail with a clear error (the expected code
// and a message naming the bad value), never crash, hang or succeed. The CLI's table is
// tests/cli/bad_input_cli_test.cmake.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "plan/jit_kernel_plan.h"
#include "qgemm/qgemm.h"
#include "util/error.h"
#include "util/memory.h"
#include "util/random.h"

namespace qgemm {
namespace {

struct BadInput {
  const char* name;
  ErrorCode code;
  const char* message_part;
  std::function<Status()> call;
};

template <typename T>
Status status_of(const Expected<T>& e) {
  return e.status();
}

QuantizedWeight small_weight(const char* spec = "int4/g128/bf16", int64_t n = 32, int64_t k = 256) {
  return *quantize_weights(HostValues::of(random_normal(n * k, 1, 0.05f)), 1, n, k,
                           *WeightFormat::parse(spec));
}

QuantizedActivations small_acts(const char* spec = "bf16", int64_t m = 4, int64_t k = 256) {
  return *quantize_activations(HostValues::of(random_normal(m * k, 2, 1.0f)), m, k,
                               *ActFormat::parse(spec));
}

Status create_with(const QuantizedWeight& w, const std::function<void(LinearOptions&)>& edit) {
  LinearOptions o;
  o.device = -1;
  edit(o);
  return Linear::create(w, o).status();
}

// A prepared host layer and a valid call on it, which `edit` spoils.
Status run_with(const char* act_spec, const std::function<void(LinearArgs&)>& edit) {
  static const QuantizedWeight w = small_weight();
  const QuantizedActivations a = small_acts(act_spec);
  LinearOptions o;
  o.device = -1;
  o.act = a.format;
  auto layer = Linear::create(w, o);
  if (!layer) return layer.status();
  QGEMM_RETURN_IF_ERROR(layer->prepare(a.m));
  std::vector<uint16_t> c(a.m * w.n);
  LinearArgs args;
  args.m = a.m;
  args.a = a.data.data();
  if (a.format.is_quantized()) args.a_scales = ActScales::of(a.format, a.scales.data());
  args.c = c.data();
  edit(args);
  return layer->run(args);
}

std::vector<BadInput> bad_inputs() {
  const int64_t huge = int64_t(1) << 40;
  const std::vector<float> one(1, 1.0f);
  std::vector<BadInput> cases = {
      // Weight specs.
      {"weight type", ErrorCode::kInvalidArgument, "unknown weight type 'int9'",
       [] { return status_of(WeightFormat::parse("int9/g128")); }},
      {"empty weight spec", ErrorCode::kInvalidArgument, "empty weight spec",
       [] { return status_of(WeightFormat::parse("")); }},
      {"group 0", ErrorCode::kInvalidArgument, "'g0'",
       [] { return status_of(WeightFormat::parse("int4/g0/fp16")); }},
      {"block without K", ErrorCode::kInvalidArgument, "'b128'",
       [] { return status_of(WeightFormat::parse("e4m3/b128/fp32")); }},
      {"zero points on signed codes", ErrorCode::kInvalidArgument,
       "zero points need an unsigned integer weight type",
       [] { return status_of(WeightFormat::parse("int4/g128/fp16/zp")); }},
      {"integer scale type", ErrorCode::kInvalidArgument, "scale type int4 is not supported",
       [] { return status_of(WeightFormat::parse("e2m1/g32/int4")); }},
      {"fp16 weights", ErrorCode::kInvalidArgument, "weight type fp16 is not supported",
       [] { return status_of(WeightFormat::parse("fp16/g128/fp16")); }},
      {"two scale types", ErrorCode::kInvalidArgument, "second scale type 'fp32'",
       [] { return status_of(WeightFormat::parse("int4/g128/fp16/fp32")); }},
      {"e4m3 zero points", ErrorCode::kInvalidArgument, "'zp_e4m3'",
       [] { return status_of(WeightFormat::parse("uint4/g128/fp16/zp_e4m3")); }},
      {"global without groups", ErrorCode::kInvalidArgument,
       "a /global scale needs channel, group or block scales",
       [] { return status_of(WeightFormat::parse("e2m1/tensor/fp32/global")); }},
      // Activation specs.
      {"e4m3 without scale", ErrorCode::kInvalidArgument, "e4m3 activations need a scale",
       [] { return status_of(ActFormat::parse("e4m3")); }},
      {"scaled bf16", ErrorCode::kInvalidArgument, "bf16 activations take no scale",
       [] { return status_of(ActFormat::parse("bf16/token")); }},
      {"scale type first", ErrorCode::kInvalidArgument, "a scale type needs a granularity",
       [] { return status_of(ActFormat::parse("e4m3/fp32")); }},
      {"fp32 activations", ErrorCode::kInvalidArgument, "activation type fp32 is not supported",
       [] { return status_of(ActFormat::parse("fp32")); }},
      {"two granularities", ErrorCode::kInvalidArgument, "second granularity 'tensor'",
       [] { return status_of(ActFormat::parse("e4m3/token/tensor")); }},
      {"unknown backend", ErrorCode::kInvalidArgument, "unknown backend 'tpu'",
       [] { return status_of(parse_backend("tpu")); }},
      // Quantizing weights.
      {"K off the group", ErrorCode::kInvalidArgument, "not a multiple of the group size 128",
       [] {
         return status_of(quantize_weights(HostValues::of(random_normal(32 * 200, 1)), 1, 32, 200,
                                           *WeightFormat::parse("int4/g128")));
       }},
      {"N = 0", ErrorCode::kInvalidArgument, "N=0",
       [] {
         return status_of(
             quantize_weights(HostValues::of({}), 1, 0, 128, *WeightFormat::parse("int4/g128")));
       }},
      {"K = 0", ErrorCode::kInvalidArgument, "K=0",
       [] {
         return status_of(
             quantize_weights(HostValues::of({}), 1, 8, 0, *WeightFormat::parse("int8/channel")));
       }},
      {"experts = 0", ErrorCode::kInvalidArgument, "experts=0 must be positive",
       [] {
         return status_of(quantize_weights(HostValues::of(random_normal(128, 1)), 0, 1, 128,
                                           *WeightFormat::parse("int4/g128")));
       }},
      {"too few values", ErrorCode::kInvalidArgument, "quantize_weights",
       [] {
         return status_of(quantize_weights(HostValues::of(random_normal(100, 1)), 1, 8, 128,
                                           *WeightFormat::parse("int4/g128")));
       }},
      {"NaN weight", ErrorCode::kInvalidArgument, "finite",
       [] {
         std::vector<float> v = random_normal(8 * 128, 1);
         v[77] = std::nanf("");
         return status_of(
             quantize_weights(HostValues::of(v), 1, 8, 128, *WeightFormat::parse("int4/g128")));
       }},
      {"weight past 64 bits", ErrorCode::kInvalidArgument, "does not fit in 64 bits",
       [huge] {
         return status_of(quantize_weights(HostValues::of({}), huge, huge, 128,
                                           *WeightFormat::parse("int4/g128")));
       }},
      {"weight past the host memory", ErrorCode::kOutOfMemory, "of host memory",
       [huge] {
         return status_of(quantize_weights(HostValues::of({}), 1, huge, 1 << 20,
                                           *WeightFormat::parse("int4/g128")));
       }},
      // Quantizing activations.
      {"M = 0 activations", ErrorCode::kInvalidArgument, "M=0 must be positive",
       [] {
         return status_of(
             quantize_activations(HostValues::of({}), 0, 128, *ActFormat::parse("e4m3/token")));
       }},
      {"activation K off the group", ErrorCode::kInvalidArgument, "group size 128",
       [] {
         return status_of(quantize_activations(HostValues::of(random_normal(2 * 200, 1)), 2, 200,
                                               *ActFormat::parse("e4m3/g128/fp32")));
       }},
      {"activations past the host memory", ErrorCode::kOutOfMemory, "of host memory",
       [huge] {
         return status_of(
             quantize_activations(HostValues::of({}), huge, 1 << 20, *ActFormat::parse("bf16")));
       }},
      {"infinite activation", ErrorCode::kInvalidArgument, "finite",
       [] {
         std::vector<float> v = random_normal(2 * 128, 1);
         v[3] = std::numeric_limits<float>::infinity();
         return status_of(
             quantize_activations(HostValues::of(v), 2, 128, *ActFormat::parse("e4m3/token")));
       }},
      // Building a layer.
      {"expert stack in Linear", ErrorCode::kInvalidArgument, "expert stack (E=2)",
       [] {
         auto w = *quantize_weights(HostValues::of(random_normal(2 * 32 * 128, 1)), 2, 32, 128,
                                    *WeightFormat::parse("int4/g128"));
         return create_with(w, [](LinearOptions&) {});
       }},
      {"e4m3 input", ErrorCode::kInvalidArgument, "input type e4m3 is not supported",
       [] {
         return create_with(small_weight(), [](LinearOptions& o) { o.input = DType::e4m3(); });
       }},
      {"nvfp4 activations without their global scale", ErrorCode::kInvalidArgument,
       "which need a_scales.global",
       [] { return run_with("nvfp4", [](LinearArgs& a) { a.a_scales.global = nullptr; }); }},
      {"int8 output", ErrorCode::kInvalidArgument, "output type int8 is not supported",
       [] {
         return create_with(small_weight(), [](LinearOptions& o) { o.out = DType::int_bits(8); });
       }},
      {"device -3", ErrorCode::kInvalidArgument, "device -3",
       [] { return create_with(small_weight(), [](LinearOptions& o) { o.device = -3; }); }},
      {"device 99", ErrorCode::kInvalidArgument, "device 99 is not available",
       [] { return create_with(small_weight(), [](LinearOptions& o) { o.device = 99; }); }},
      {"act group past K", ErrorCode::kInvalidArgument, "not a multiple of the group size 512",
       [] {
         return create_with(small_weight(),
                            [](LinearOptions& o) { o.act = *ActFormat::parse("e4m3/g512/fp32"); });
       }},
      {"jit on host memory", ErrorCode::kUnsupported, "the layer lives in host memory",
       [] {
         return create_with(small_weight(),
                            [](LinearOptions& o) { o.backend = BackendKind::kJit; });
       }},
      {"torn codes", ErrorCode::kInvalidArgument, "codes hold",
       [] {
         QuantizedWeight w = small_weight();
         w.codes.pop_back();
         return create_with(w, [](LinearOptions&) {});
       }},
      {"scale off its type", ErrorCode::kInvalidArgument, "is not a finite bf16 value",
       [] {
         QuantizedWeight w = small_weight();
         w.scales[0] = 1.0f + 1.0f / 1024;
         return create_with(w, [](LinearOptions&) {});
       }},
      {"missing zero points", ErrorCode::kInvalidArgument, "zero points",
       [] {
         QuantizedWeight w = small_weight("uint4/g128/fp16/zp");
         w.zeros.clear();
         return create_with(w, [](LinearOptions&) {});
       }},
      {"missing global scale", ErrorCode::kInvalidArgument, "global scales",
       [] {
         QuantizedWeight w = small_weight("nvfp4");
         w.global.clear();
         return create_with(w, [](LinearOptions&) {});
       }},
      // Running a layer.
      {"negative m", ErrorCode::kInvalidArgument, "m=-2 must not be negative",
       [] { return run_with("bf16", [](LinearArgs& a) { a.m = -2; }); }},
      {"null activations", ErrorCode::kInvalidArgument, "activation pointer a is null",
       [] { return run_with("bf16", [](LinearArgs& a) { a.a = nullptr; }); }},
      {"null output", ErrorCode::kInvalidArgument, "output pointer c is null",
       [] { return run_with("bf16", [](LinearArgs& a) { a.c = nullptr; }); }},
      {"m above prepare", ErrorCode::kInvalidArgument, "exceeds prepare(max_tokens=4)",
       [] { return run_with("bf16", [](LinearArgs& a) { a.m = 5; }); }},
      {"scales for bf16", ErrorCode::kInvalidArgument, "which take no scales",
       [one] { return run_with("bf16", [&](LinearArgs& a) { a.a_scales.data = one.data(); }); }},
      {"global scale without scales", ErrorCode::kInvalidArgument,
       "a_scales.global is set but a_scales.data is null",
       [one] {
         return run_with("e4m3/token", [&](LinearArgs& a) {
           a.a_scales = {};
           a.a_scales.global = one.data();
         });
       }},
      {"group scales for token acts", ErrorCode::kInvalidArgument, "a_scales describe per-group",
       [] {
         return run_with("e4m3/token", [](LinearArgs& a) {
           a.a_scales.kind = ActScaleKind::kGroup;
           a.a_scales.group_k = 128;
         });
       }},
      {"ue8m0 scale array", ErrorCode::kInvalidArgument, "a_scales.type is ue8m0",
       [] {
         return run_with("e4m3/token", [](LinearArgs& a) { a.a_scales.type = DType::ue8m0(); });
       }},
      // The reference.
      {"reference K mismatch", ErrorCode::kInvalidArgument, "activations have K=128",
       [] { return status_of(reference_gemm(small_acts("bf16", 2, 128), small_weight())); }},
      {"reference row outside M", ErrorCode::kInvalidArgument, "row 9 is outside M=4",
       [] { return status_of(reference_gemm(small_acts(), small_weight(), {}, {9})); }},
      {"reference bias size", ErrorCode::kInvalidArgument, "bias has 3 values, N=32",
       [] {
         return status_of(reference_gemm(small_acts(), small_weight(), {1, 2, 3}));
       }},
      {"expert id out of range", ErrorCode::kInvalidArgument, "expert id 7",
       [] {
         Routing r{1, 1, {7}, {1.0f}};
         return r.validate(4);
       }},
      {"routing sizes", ErrorCode::kInvalidArgument, "1 ids and 2 weights",
       [] {
         Routing r{1, 1, {0}, {1.0f, 1.0f}};
         return r.validate(4);
       }},
      // Plans.
      {"tile text", ErrorCode::kInvalidArgument, "unknown part 'q9'",
       [] { return status_of(MmaTile::parse("w4x1 t1 f1 s4 k128 q9")); }},
      {"tile counts", ErrorCode::kInvalidArgument, "every count must be positive",
       [] { return status_of(MmaTile::parse("w4x1 t1 f1 s1 k128")); }},
      {"size past 64 bits", ErrorCode::kInvalidArgument, "does not fit in 64 bits",
       [huge] {
         return status_of(byte_count("a tensor", {huge, huge}, 1));
       }},
  };
  return cases;
}

TEST(BadInput, EveryCaseIsAClearErrorWithTheExpectedCode) {
  const std::vector<BadInput> cases = bad_inputs();
  EXPECT_GE(cases.size(), 50u);
  for (const BadInput& c : cases) {
    const Status s = c.call();
    EXPECT_FALSE(s.ok()) << c.name << ": succeeded";
    EXPECT_EQ(s.code(), c.code) << c.name << ": " << s.to_string();
    EXPECT_NE(s.message().find(c.message_part), std::string::npos)
        << c.name << ": '" << s.message() << "' lacks '" << c.message_part << "'";
  }
}

}  // namespace
}  // namespace qgemm
