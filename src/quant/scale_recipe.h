#pragma once

#include "act_quant/act_quant_math.cuh"
#include "qgemm/dtype.h"

namespace qgemm {

/// The largest |code value| symmetric quantization maps amax to: 2^(N-1)-1 for intN (1 for int1),
/// 2^N-1 for uintN, the largest finite value for floats.
double element_range(DType element);

/// The scale for a block whose values span `range` (amax for symmetric formats, max - min for
/// zero-point formats), divided by `global`, representable in `scale_type`. Never zero, never
/// infinite: an all-zero block gets scale 1. With ue8m0 scales, float elements follow OCP MX v1.0
/// (2^(floor(log2 amax) - emax(element))), integer elements round the scale up to a power of two.
double choose_scale(double range, DType element, DType scale_type, double global);

/// The per-tensor fp32 scale placed above block scales of `scale_type` so that they use the
/// scale type's range: range / (element_range * max(scale_type)) for e4m3, e5m2 and fp16 scales,
/// range / element_range otherwise; 1 for an all-zero tensor.
double choose_global_scale(double range, DType element, DType scale_type);

/// A number type as the activation recipe (act_quant/act_quant_math.cuh) describes it.
ActCode act_code(DType type);

}  // namespace qgemm
