// Arguments of the activation quantizer kernels; plain data shared with the host launcher.
#pragma once

#include "common/base.cuh"

namespace qgemm {

/// One quantization (or, for act_dequantize_kernel, expansion) of activations [m, k].
struct ActQuantParams {
  const u16* a;   ///< [m][lda] fp16/bf16 input
  u8* q;          ///< [m][ldq] codes, one byte each (act_dequantize_kernel reads them)
  u16* out;       ///< act_dequantize_kernel: [m][lda] fp16/bf16 values of the codes
  float* scales;  ///< [m][scale_cols] token or group scales, [1] a tensor scale
  float* global;  ///< [1] the global scale of formats that have one, else null
  u32* amax;      ///< [1] the tensor's max |a| as fp32 bits: zero before act_amax_kernel
  i32 m, k, lda, ldq;
  i32 scale_cols;  ///< scales per row (1 for token scales)
  i32 vec;         ///< 1: rows of a (or out) and q are 16- and 8-byte aligned and k % 8 == 0
  /// Or null: row r of q (and of the scales) quantizes row src_rows[r] / src_div of a, and rows
  /// whose src_rows entry is negative are left as they are (a sorted copy of gathered rows).
  const i32* src_rows;
  i32 src_div;
};

/// Chunks of 8 (vec) or single elements each thread of act_amax_kernel reduces: its CTA count is
/// the chunks over 256 times this.
constexpr int kAmaxChunksPerThread = 8;

}  // namespace qgemm
