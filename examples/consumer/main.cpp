// Quantizes a random layer to int4 with group-128 scales, runs it through qgemm::Linear and
// checks the result against the CPU reference. Runs on the GPU when there is one, otherwise on
// host memory (the CPU backend).
#include <cstdio>
#include <random>
#include <vector>

#include "qgemm/qgemm.h"

namespace {

std::vector<float> random_values(size_t count, unsigned seed, float stddev) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, stddev);
  std::vector<float> v(count);
  for (float& x : v) x = dist(gen);
  return v;
}

int fail(const char* what, const qgemm::Status& s) {
  std::fprintf(stderr, "%s: %s\n", what, s.to_string().c_str());
  return 1;
}

}  // namespace

int main() {
  const int64_t m = 4, n = 256, k = 512;
  auto format = qgemm::WeightFormat::parse("int4/g128");  // fp16 scales by default
  if (!format) return fail("format", format.status());
  const std::vector<float> w_values = random_values(n * k, 1, 0.05f);
  auto w = qgemm::quantize_weights(qgemm::HostValues::of(w_values), 1, n, k, *format);
  if (!w) return fail("quantize_weights", w.status());
  const std::vector<float> a_values = random_values(m * k, 2, 1.0f);
  auto a = qgemm::quantize_activations(qgemm::HostValues::of(a_values), m, k,
                                       *qgemm::ActFormat::parse("bf16"));
  if (!a) return fail("quantize_activations", a.status());

  // Host memory: the CPU backend runs it on any machine, GPU or not.
  qgemm::LinearOptions options;
  options.device = -1;
  auto layer = qgemm::Linear::create(*w, options);
  if (!layer) return fail("Linear::create", layer.status());
  if (auto s = layer->prepare(m); !s.ok()) return fail("prepare", s);
  std::vector<uint16_t> c(m * n);
  qgemm::LinearArgs args;
  args.m = m;
  args.a = a->data.data();
  args.c = c.data();
  if (auto s = layer->run(args); !s.ok()) return fail("run", s);

  auto ref = qgemm::reference_gemm(*a, *w);
  if (!ref) return fail("reference_gemm", ref.status());
  std::vector<double> got(c.size());
  for (size_t i = 0; i < c.size(); ++i) {
    const uint32_t bits = uint32_t(c[i]) << 16;  // bf16 -> fp32
    float f;
    static_assert(sizeof f == sizeof bits);
    __builtin_memcpy(&f, &bits, sizeof f);
    got[i] = f;
  }
  const qgemm::Comparison cmp = qgemm::compare(*ref, got);
  const double tolerance = qgemm::tolerance_for(qgemm::DType::bf16(), qgemm::DType::bf16());
  std::printf("qgemm %s: %s layer N=%lld K=%lld M=%lld on the %s backend, rel. error %.2e (%s)\n",
              qgemm::version(), w->format.to_string().c_str(), static_cast<long long>(n),
              static_cast<long long>(k), static_cast<long long>(m), layer->backend().c_str(),
              cmp.rel_frobenius, cmp.within(tolerance) ? "ok" : "over tolerance");
  return cmp.within(tolerance) ? 0 : 1;
}
