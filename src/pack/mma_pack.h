#pragma once

#include <cstdint>
#include <vector>

#include "qgemm/quantized.h"

namespace qgemm {

/// A weight in the layout of the mma.sync GEMM family (kernels/dense/mma_layout.cuh).
struct MmaPackedWeight {
  int bits = 0;
  int64_t n = 0;
  int64_t k = 0;
  int n_tiles = 0;                  ///< ceil(n / 16)
  int k_units = 0;                  ///< ceil(k / unit_k(bits))
  int group_k = 0;                  ///< K extent of a group (or block) scale; 0 when there are none
  int groups = 0;                   ///< scale groups along the padded K
  DType half_type = DType::bf16();  ///< activation type: the zero-point table's type
  DType scale_type = DType::fp16();  ///< the scale table's type (see mma_scale_table_type)
  std::vector<uint32_t> codes;       ///< n_tiles * k_units * unit_bytes / 4 words
  /// [n_tiles][groups][8] pairs (row g, row g+8): one word (lo | hi << 16) for fp16/bf16
  /// tables, two words (floats) for fp32 tables.
  std::vector<uint32_t> scales;
  /// [n_tiles][groups][8] pairs: half pairs (one word) for integer zero points, two fp32 words for
  /// float zero points; empty without zero points.
  std::vector<uint32_t> zeros;
  std::vector<float> row_scale;  ///< [n] channel * tensor * global factor; empty when all 1
};

/// Packs expert `expert` of `w` for activations of `half_type` (fp16 or bf16). Group and block
/// scales go to tables that hold them exactly; zero points go to `half_type` tables and must be
/// normal numbers there (kUnsupported otherwise); channel, tensor and global scales become the
/// fp32 row factor.
Expected<MmaPackedWeight> pack_mma(const QuantizedWeight& w, int64_t expert, DType half_type);

/// The zero point the kernel subtracts for (row, col), as a real number (for tests).
double unpack_mma_zero(const MmaPackedWeight& packed, int64_t row, int64_t col);

/// K extent of the scale groups in the mma layout's tables for format `f` (0: no tables):
/// - the format's group, where it is a power of two (every stage size divides it or is a
///   multiple of it);
/// - other multiples of 16 (g48, b32x96, ...): their largest power-of-two divisor, each table
///   group repeating its format group's scale and zero point;
/// - channel or tensor scales with zero points: one group spanning the row (kWholeRowGroupK);
/// - groups that are no multiple of 16 stay as they are, and the kernels decline them.
int mma_table_group_k(const WeightFormat& f);

/// The group-scale table type that holds every value of `scale_type` exactly: fp16 for fp16, e4m3
/// and e5m2; bf16 for bf16 and ue8m0; fp32 for fp32.
DType mma_scale_table_type(DType scale_type);

/// The codes back as canonical code bits, [n][k] row-major (for tests).
std::vector<uint32_t> unpack_mma_codes(const MmaPackedWeight& packed, const WeightFormat& format);

/// The group scale the kernel uses for (row, col), as a real number (for tests).
double unpack_mma_scale(const MmaPackedWeight& packed, int64_t row, int64_t col);

}  // namespace qgemm
