#pragma once

#include <cstdint>

#include "qgemm/quantized.h"

namespace qgemm {

/// Row `row` of expert `e` of `w` as exact doubles, [K] into `out`: the same values as
/// QuantizedWeight::dequantize, through a per-type code table and per-group scales, so the CPU
/// reference spends its time in the dot products rather than in decoding.
void dequantize_row(const QuantizedWeight& w, int64_t e, int64_t row, double* out);

}  // namespace qgemm
