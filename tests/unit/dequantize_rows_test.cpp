// The CPU reference's fast row decoder gives exactly QuantizedWeight::dequantize.
#include "quant/dequantize_rows.h"
#include "util/random.h"

#include <gtest/gtest.h>

namespace qgemm {
namespace {

TEST(DequantizeRow, SameValuesAsElementwiseDequantize) {
  for (const char* spec : {"int4/g128/fp16", "uint3/g32/bf16/zp", "uint4/g64/fp16/zp_fp32",
                           "e2m1/g16/e4m3/global", "e4m3/b16x64/fp32", "int8/channel/bf16",
                           "e5m2/tensor/fp32", "int2", "uint7/g128/ue8m0/zp"}) {
    SCOPED_TRACE(spec);
    const WeightFormat f = *WeightFormat::parse(spec);
    const int64_t e = 2, n = 37,
                  k = f.scale_kind == ScaleKind::kGroup || f.scale_kind == ScaleKind::kBlock
                          ? 3 * f.group_k
                          : 301;
    auto w = quantize_weights(HostValues::of(random_normal(e * n * k, 5, 0.1f)), e, n, k, f);
    ASSERT_TRUE(w.ok()) << w.status().to_string();
    std::vector<double> row(k);
    for (int64_t ex = 0; ex < e; ++ex)
      for (int64_t r = 0; r < n; r += 6) {
        dequantize_row(*w, ex, r, row.data());
        for (int64_t c = 0; c < k; ++c) ASSERT_EQ(row[c], w->dequantize(ex, r, c)) << r << "," << c;
      }
  }
}

}  // namespace
}  // namespace qgemm
