// The packed-weight expansion kernel (kernels/dense_expand/dense_expand.cuh) run directly on the GPU:
// every element of [n][k] must equal, bit for bit, the kernel's fp32 formula evaluated on the
// CPU from the packed tables, and lie within one ulp of the exact dequantized value; columns
// k..ldo-1 and rows past n must keep the poison written before the launch.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "backend/device_buffer.h"
#include "dense_expand/dense_expand_params.cuh"
#include "gpu_test_util.h"
#include "jit/kernel_loader.h"
#include "jit/mma_gemm.h"
#include "pack/mma_pack.h"
#include "quant/dequantize_rows.h"
#include "util/parallel.h"
#include "util/error.h"
#include "util/random.h"

namespace qgemm {
namespace {

struct DequantCase {
  const char* weight;
  const char* act;
  int64_t n, k;
  int64_t extra_ld = 0;  ///< columns past k rounded up to 8 (the backend passes 0)
};

void PrintTo(const DequantCase& c, std::ostream* os) {
  *os << c.weight << " " << c.act << " n=" << c.n << " k=" << c.k;
}

// Odd n everywhere; K cuts the last unit or item short where the group size allows, and is not a
// multiple of 8 where there are no groups.
const DequantCase kCases[] = {
    {"int4/g128/bf16", "bf16", 1000, 1152},
    {"int4/g128/fp16", "fp16", 8192, 8192},
    {"uint4/g128/fp16/zp", "fp16", 1000, 1536},
    {"uint4/g64/bf16/zp", "bf16", 999, 1472},
    {"uint4/g64/fp16/zp_fp16", "fp16", 1000, 1472},
    {"uint4/g64/bf16/zp_fp16", "bf16", 1000, 1472, 8},
    {"int8/channel/bf16", "bf16", 1000, 1544},
    {"int8/channel/fp16", "fp16", 1000, 1543},
    {"int8/channel/bf16", "bf16", 17, 72},
    {"e2m1/g16/e4m3/global", "bf16", 1000, 1568},
    {"e2m1/g32/ue8m0", "fp16", 1000, 1568},
    {"int3/g128/bf16", "bf16", 1000, 1152},
    {"int3/g128/fp16", "fp16", 1000, 1536},
    {"e4m3/b128x128/fp32", "bf16", 1000, 1536},
    {"e4m3/channel/fp32", "fp16", 1000, 1001},
    {"int1/g128/bf16", "bf16", 1000, 1152},
    {"int2/g128/fp16", "fp16", 1000, 1408},
    {"int5/g64/bf16", "bf16", 1000, 1472},
    {"int6/channel/fp32", "bf16", 1000, 1001},
    {"int7/g128/bf16", "bf16", 1000, 1152},
    {"uint8/g128/bf16/zp", "bf16", 1000, 1152},
    {"int8/b64x128/e4m3", "fp16", 1000, 1536},
    {"uint4/channel/bf16/zp", "bf16", 1000, 1001},
    {"uint6/tensor/fp32/zp_fp32", "fp16", 999, 1000},
};

constexpr uint16_t kPoison = 0xffff;  // a NaN the kernel never writes (it rounds to 0x7fff)

// Half codes as integers ordered like their values, so that neighbours differ by one.
int ordered(uint16_t code) { return (code & 0x8000) ? -(code & 0x7fff) : code; }

// The kernel's arithmetic on the CPU, from the packed tables: integer zero points subtracted in
// the half type (exact), float ones in fp32, then (v - zero) * (row_scale * group_scale) in fp32.
uint16_t kernel_formula(const MmaPackedWeight& packed, const WeightFormat& f, DType act,
                        double code_value, int64_t row, int64_t col) {
  float scale = packed.row_scale.empty() ? 1.0f : packed.row_scale[row];
  if (packed.groups > 0) scale *= static_cast<float>(unpack_mma_scale(packed, row, col));
  float v = static_cast<float>(code_value);
  float zero = 0.0f;
  if (f.zero_point == ZeroPointKind::kFloat) {
    zero = static_cast<float>(unpack_mma_zero(packed, row, col));
  } else if (f.has_zero_points()) {
    v = static_cast<float>(round_to(act, code_value - unpack_mma_zero(packed, row, col)));
  }
  return static_cast<uint16_t>(encode(act, double((v - zero) * scale)));
}

struct Expansion {
  std::vector<uint16_t> out;  ///< [rows][ldo] as read back
  int64_t rows = 0, ldo = 0;
  double microseconds = 0;  ///< per launch, when timed
};

// Packs `w`, expands it on GPU 0 into a poisoned buffer and reads it back; with `timed_runs`,
// also times that many launches.
Expected<Expansion> expand_on_gpu(const QuantizedWeight& w, DType act, int64_t extra_ld,
                                  const MmaPackedWeight& packed, int timed_runs) {
  QGEMM_RETURN_IF_ERROR(use_device(0));
  auto driver = cuda_driver();
  if (!driver) return driver.status();
  const DeviceInfo device = list_devices().at(0);
  MmaGemmConfig config = MmaGemmConfig::from_format(w.format, act, act);
  config.arch = device.arch();
  auto kernel = get_kernel(config.dequant_spec());
  if (!kernel) return kernel.status();

  auto upload = [](const auto& v) {
    return DeviceBuffer::upload(v.data(), v.size() * sizeof(v[0]));
  };
  auto codes = upload(packed.codes);
  if (!codes) return codes.status();
  Expected<DeviceBuffer> scales = DeviceBuffer(), zeros = DeviceBuffer(), rows = DeviceBuffer();
  if (!packed.scales.empty()) scales = upload(packed.scales);
  if (!packed.zeros.empty()) zeros = upload(packed.zeros);
  if (!packed.row_scale.empty()) rows = upload(packed.row_scale);
  for (auto* b : {&scales, &zeros, &rows})
    if (!*b) return b->status();

  Expansion e;
  e.ldo = (w.k + 7) / 8 * 8 + extra_ld;
  e.rows = int64_t(packed.n_tiles) * 16 + 1;
  auto out = DeviceBuffer::allocate(e.rows * e.ldo * 2);
  if (!out) return out.status();
  QGEMM_CU(*driver, cuMemsetD8, out->ptr(), 0xff, e.rows * e.ldo * 2);

  MmaDequantParams p{};
  p.weights = reinterpret_cast<const u8*>(codes->ptr());
  p.scales = scales->bytes() > 0 ? scales->get() : nullptr;
  p.zeros = zeros->bytes() > 0 ? zeros->get() : nullptr;
  p.row_scale = rows->bytes() > 0 ? static_cast<const float*>(rows->get()) : nullptr;
  p.out = static_cast<u16*>(out->get());
  p.ldo = static_cast<i32>(e.ldo);
  p.n = static_cast<i32>(w.n);
  p.k = static_cast<i32>(w.k);
  p.n_tiles = packed.n_tiles;
  p.k_units = packed.k_units;
  p.groups = packed.groups;
  const LaunchShape shape =
      mma_dequant_launch(config, packed.n_tiles, packed.k_units, device.multiprocessors);
  if (shape.threads != unsigned(kernel->threads) ||
      shape.smem_bytes != unsigned(kernel->dynamic_smem))
    return invalid_argument(str("mma_dequant_launch: ", shape.threads, " threads, ",
                                shape.smem_bytes, " bytes of shared memory; the spec says ",
                                kernel->threads, " and ", kernel->dynamic_smem));
  QGEMM_RETURN_IF_ERROR(launch(*kernel, shape.blocks, 1, 1, p, nullptr));
  QGEMM_CU(*driver, cuCtxSynchronize);
  e.out.resize(e.rows * e.ldo);
  QGEMM_RETURN_IF_ERROR(out->download(e.out.data(), e.out.size() * 2));

  if (timed_runs > 0) {
    CUevent start, stop;
    QGEMM_CU(*driver, cuEventCreate, &start, 0);
    QGEMM_CU(*driver, cuEventCreate, &stop, 0);
    QGEMM_CU(*driver, cuEventRecord, start, nullptr);
    for (int i = 0; i < timed_runs; ++i)
      QGEMM_RETURN_IF_ERROR(launch(*kernel, shape.blocks, 1, 1, p, nullptr));
    QGEMM_CU(*driver, cuEventRecord, stop, nullptr);
    QGEMM_CU(*driver, cuEventSynchronize, stop);
    float ms = 0;
    QGEMM_CU(*driver, cuEventElapsedTime, &ms, start, stop);
    e.microseconds = 1000.0 * ms / timed_runs;
    driver.value()->cuEventDestroy(start);
    driver.value()->cuEventDestroy(stop);
  }
  return e;
}

class MmaDequantGpuTest : public ::testing::TestWithParam<DequantCase> {};

TEST_P(MmaDequantGpuTest, MatchesCpuDequantizationAndWritesNothingElse) {
  QGEMM_REQUIRE_GPU();
  const DequantCase& c = GetParam();
  SCOPED_TRACE(::testing::PrintToString(c));
  const WeightFormat f = *WeightFormat::parse(c.weight);
  const DType act = *parse_dtype(c.act);
  const auto values = random_normal(c.n * c.k, 29, 0.05f);
  auto w = quantize_weights(HostValues::of(values), 1, c.n, c.k, f);
  ASSERT_TRUE(w.ok()) << w.status().to_string();
  auto packed = pack_mma(*w, 0, act);
  ASSERT_TRUE(packed.ok()) << packed.status().to_string();
  const bool big = c.n * c.k >= (int64_t(1) << 26);
  auto e = expand_on_gpu(*w, act, c.extra_ld, *packed, big ? 20 : 0);
  ASSERT_TRUE(e.ok()) << e.status().to_string();
  if (big) {
    const double bytes = double(packed->codes.size()) * 4 + double(c.n) * c.k * 2;
    std::printf("%s %s %lldx%lld: %.1f us per expansion, %.0f GB/s (codes read + output)\n",
                c.weight, c.act, static_cast<long long>(c.n), static_cast<long long>(c.k),
                e->microseconds, bytes / e->microseconds / 1e3);
  }

  // Code values by code, for the kernel formula.
  std::vector<double> code_value(size_t(1) << f.type.bits);
  for (size_t i = 0; i < code_value.size(); ++i) code_value[i] = decode(f.type, uint32_t(i));
  const std::vector<uint32_t> codes = unpack_mma_codes(*packed, f);

  std::atomic<int64_t> formula_mismatch{0}, beyond_ulp{0}, written_outside{0};
  std::atomic<int64_t> first_bad{-1};
  parallel_for(e->rows, 16, [&](int64_t begin, int64_t end) {
    std::vector<double> exact(c.k);
    for (int64_t row = begin; row < end; ++row) {
      const uint16_t* got = e->out.data() + row * e->ldo;
      if (row >= c.n) {
        for (int64_t col = 0; col < e->ldo; ++col) written_outside += got[col] != kPoison;
        continue;
      }
      dequantize_row(*w, 0, row, exact.data());
      for (int64_t col = 0; col < c.k; ++col) {
        const uint16_t want =
            kernel_formula(*packed, f, act, code_value[codes[row * c.k + col]], row, col);
        const uint16_t near = static_cast<uint16_t>(encode(act, exact[col]));
        const bool bad_formula = got[col] != want;
        const bool bad_ulp = std::abs(ordered(got[col]) - ordered(near)) > 1;
        formula_mismatch += bad_formula;
        beyond_ulp += bad_ulp;
        int64_t none = -1;
        if (bad_formula || bad_ulp) first_bad.compare_exchange_strong(none, row * c.k + col);
      }
      for (int64_t col = c.k; col < e->ldo; ++col) written_outside += got[col] != kPoison;
    }
  });
  if (first_bad >= 0) {
    const int64_t row = first_bad / c.k, col = first_bad % c.k;
    std::vector<double> exact(c.k);
    dequantize_row(*w, 0, row, exact.data());
    ADD_FAILURE() << "first bad element (" << row << ", " << col << "): got 0x" << std::hex
                  << e->out[row * e->ldo + col] << ", formula 0x"
                  << kernel_formula(*packed, f, act, code_value[codes[row * c.k + col]], row, col)
                  << std::dec << ", exact " << exact[col];
  }
  EXPECT_EQ(0, formula_mismatch.load()) << "elements that differ from the kernel formula";
  EXPECT_EQ(0, beyond_ulp.load()) << "elements more than one ulp from the exact value";
  EXPECT_EQ(0, written_outside.load()) << "writes to columns >= k or rows >= n";
}

INSTANTIATE_TEST_SUITE_P(Formats, MmaDequantGpuTest, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<DequantCase>& info) {
                           std::string name =
                               str(info.param.weight, "_", info.param.act, "_n", info.param.n, "_k",
                                   info.param.k, info.param.extra_ld ? "_wide" : "");
                           for (char& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

}  // namespace
}  // namespace qgemm
