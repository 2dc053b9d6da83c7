// GPU activation quantizers: fp16/bf16 rows to one-byte codes and fp32 scales, by the recipe of
// act_quant/act_quant_math.cuh (the CPU quantizer's, so the bits agree), and the expansion back
// to fp16/bf16 the dequantize-then-cuBLAS path multiplies.
//
// Per token: a CTA per row finds the row's amax, then encodes it. Per group: the G / 8 lanes of
// a group's 8-element chunks reduce their amax by shuffles (groups of 8..256 elements); other
// group sizes, and rows that are not 16-byte aligned, take one element or group per thread.
// Per tensor and NVFP4 (a global scale): act_amax_kernel first reduces the tensor's amax into
// p.amax (zeroed on the stream before it), 16-byte loads, one atomic per CTA; then every thread
// of the quantize pass derives the same scale from it.
// Inputs are finite (the caller's contract); a NaN or inf gives unspecified codes, never a fault.
#pragma once

#include "act_quant/act_quant_math.cuh"
#include "act_quant/act_quant_params.cuh"
#include "ptx/half2.cuh"

namespace qgemm {

/// Cfg: kIn (Elem), the code type (kCodeKind, kCodeBits, kCodeExp, kCodeMan, kCodeFlavor), the
/// scale type (kScaleKind, kScaleBits, kScaleExp, kScaleMan, kScaleFlavor), kGranularity
/// (1 token, 2 group, 3 tensor), kGroup and kGlobal.
template <class Cfg>
struct ActQuant {
  static constexpr ActCode kCode{Cfg::kCodeKind, Cfg::kCodeBits, Cfg::kCodeExp, Cfg::kCodeMan,
                                 Cfg::kCodeFlavor};
  static constexpr ActCode kScale{Cfg::kScaleKind, Cfg::kScaleBits, Cfg::kScaleExp, Cfg::kScaleMan,
                                  Cfg::kScaleFlavor};
  static constexpr int kThreads = 256;
  static constexpr bool kE4m3 = kCode.kind == ActCode::kFloat && kCode.bits == 8 &&
                                kCode.exp_bits == 4 && kCode.man_bits == 3 && kCode.flavor == 1;
  static constexpr bool kToken = Cfg::kGranularity == 1;
  static constexpr bool kGroupScales = Cfg::kGranularity == 2;
  static constexpr bool kTensor = Cfg::kGranularity == 3;
  // Lanes of an 8-element-chunk group; shuffles reduce groups of 1..32 lanes.
  static constexpr int kGroupLanes = Cfg::kGroup / 8;
  static constexpr bool kShuffleGroups =
      kGroupScales && Cfg::kGroup % 8 == 0 && kGroupLanes <= 32 && (32 % kGroupLanes) == 0;

  static QGEMM_DEVICE float in(u16 h) { return half_to_float<Cfg::kIn>(h); }

  /// The row of a that row `row` of q quantizes, or -1 (none: the row stays as it is).
  static QGEMM_DEVICE int input_row(const ActQuantParams& p, int row) {
    if (p.src_rows == nullptr) return row;
    const int src = p.src_rows[row];
    return src < 0 ? -1 : src / p.src_div;
  }

  /// The W elements of row `row` of a from column `col`.
  template <int W>
  static QGEMM_DEVICE void load(const ActQuantParams& p, int row, int col, float (&v)[W]) {
    const u16* src = p.a + static_cast<i64>(row) * p.lda + col;
    if constexpr (W == 8) {
      const uint4 x = *reinterpret_cast<const uint4*>(src);
      const u32 w[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        v[2 * i] = in(static_cast<u16>(w[i] & 0xffffu));
        v[2 * i + 1] = in(static_cast<u16>(w[i] >> 16));
      }
    } else {
      v[0] = in(*src);
    }
  }

  /// Encodes the W elements with `divisor` and stores their codes.
  template <int W>
  static QGEMM_DEVICE void store(const ActQuantParams& p, int row, int col, const float (&v)[W],
                                 float divisor) {
    u8* dst = p.q + static_cast<i64>(row) * p.ldq + col;
    if constexpr (W == 8) {
      u32 lo = 0, hi = 0;
#if __CUDA_ARCH__ >= 890
      if constexpr (kE4m3) {
        // NOTE: act_encode's float steps made e4m3 quantization arithmetic-bound, where int8
        // codes were bound by memory (docs/design.md, "Quantizer speed").
        lo = act_encode_e4m3x2(v[0], v[1], divisor) | act_encode_e4m3x2(v[2], v[3], divisor) << 16;
        hi = act_encode_e4m3x2(v[4], v[5], divisor) | act_encode_e4m3x2(v[6], v[7], divisor) << 16;
        *reinterpret_cast<uint2*>(dst) = make_uint2(lo, hi);
        return;
      }
#endif
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        lo |= act_encode(v[i], divisor, kCode) << (8 * i);
        hi |= act_encode(v[4 + i], divisor, kCode) << (8 * i);
      }
      *reinterpret_cast<uint2*>(dst) = make_uint2(lo, hi);
    } else {
      *dst = static_cast<u8>(act_encode(v[0], divisor, kCode));
    }
  }

  template <int W>
  static QGEMM_DEVICE float chunk_amax(const float (&v)[W]) {
    float m = 0.0f;
#pragma unroll
    for (int i = 0; i < W; ++i) m = fmaxf(m, fabsf(v[i]));
    return m;
  }

  /// The max over the CTA, returned to every thread.
  static QGEMM_DEVICE float cta_max(float v, float* shared) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    __syncthreads();  // an earlier row's readers are done with `shared`
    if (threadIdx.x % 32 == 0) shared[threadIdx.x / 32] = v;
    __syncthreads();
    v = 0.0f;
#pragma unroll
    for (int w = 0; w < kThreads / 32; ++w) v = fmaxf(v, shared[w]);
    return v;
  }

  /// The divisor of every element under a tensor scale (with or without block scales under a
  /// global one); thread 0 of CTA 0 stores the scale.
  static QGEMM_DEVICE float tensor_divisor(const ActQuantParams& p) {
    const float amax = __uint_as_float(*p.amax);
    if constexpr (Cfg::kGlobal) {
      const float g = act_global_scale(amax, kCode, kScale);
      if (blockIdx.x == 0 && threadIdx.x == 0) p.global[0] = g;
      return g;
    } else {
      const float s = act_scale(amax, kCode, kScale);
      if (blockIdx.x == 0 && threadIdx.x == 0) p.scales[0] = s;
      return s;
    }
  }

  /// Scale of a block of amax `amax` (under a global scale g: of amax / g), and its divisor.
  static QGEMM_DEVICE float block_scale(float amax, float g, float& divisor) {
    if constexpr (Cfg::kGlobal) {
      const float s = act_scale(QGEMM_FDIV(amax, g), kCode, kScale);
      divisor = QGEMM_FMUL(s, g);
      return s;
    } else {
      const float s = act_scale(amax, kCode, kScale);
      divisor = s;
      return s;
    }
  }

  template <int W>
  static QGEMM_DEVICE void run_rows(const ActQuantParams& p, float* shared) {
    const float tensor = kTensor ? tensor_divisor(p) : 1.0f;
    for (int row = blockIdx.x; row < p.m; row += gridDim.x) {
      const int in_row = input_row(p, row);
      if (in_row < 0) continue;
      float divisor = tensor;
      if constexpr (kToken) {
        float m = 0.0f;
        for (int col = threadIdx.x * W; col < p.k; col += kThreads * W) {
          float v[W];
          load<W>(p, in_row, col, v);
          m = fmaxf(m, chunk_amax<W>(v));
        }
        const float s = block_scale(cta_max(m, shared), 1.0f, divisor);
        if (threadIdx.x == 0) p.scales[row] = s;
      }
      for (int col = threadIdx.x * W; col < p.k; col += kThreads * W) {
        float v[W];
        load<W>(p, in_row, col, v);
        store<W>(p, row, col, v, divisor);
      }
    }
  }

  /// Groups of 8-element chunks, kGroupLanes lanes each, over the flattened [m][k / 8] chunks.
  static QGEMM_DEVICE void run_shuffle_groups(const ActQuantParams& p) {
    const float g = Cfg::kGlobal ? tensor_divisor(p) : 1.0f;
    const int row_chunks = p.k / 8;
    const i64 total = static_cast<i64>(p.m) * row_chunks;
    for (i64 i0 = static_cast<i64>(blockIdx.x) * kThreads; i0 < total;
         i0 += static_cast<i64>(gridDim.x) * kThreads) {
      const i64 i = i0 + threadIdx.x;
      const bool active = i < total;  // whole groups: row_chunks is a multiple of kGroupLanes
      // NOTE: a 64-bit division costs tens of instructions per 8 elements; 32 bits where the
      // chunks fit.
      const i64 r = total <= 0xffffffffll
                        ? static_cast<i64>(static_cast<u32>(i) / static_cast<u32>(row_chunks))
                        : i / row_chunks;
      const int row = active ? static_cast<int>(r) : 0;
      const int col = active ? static_cast<int>(i - r * row_chunks) * 8 : 0;
      // A skipped row's lanes take part in the shuffles with zeros and store nothing: whole
      // groups share a row, so no group mixes a skipped row with another.
      const int in_row = active ? input_row(p, row) : -1;
      float v[8] = {};
      if (in_row >= 0) load<8>(p, in_row, col, v);
      float m = chunk_amax<8>(v);
#pragma unroll
      for (int o = kGroupLanes / 2; o > 0; o >>= 1)
        m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
      float divisor;
      const float s = block_scale(m, g, divisor);
      if (in_row < 0) continue;
      if (col % Cfg::kGroup == 0)
        p.scales[static_cast<i64>(row) * p.scale_cols + col / Cfg::kGroup] = s;
      store<8>(p, row, col, v, divisor);
    }
  }

  /// One thread per group, element by element (any group size, any alignment).
  static QGEMM_DEVICE void run_serial_groups(const ActQuantParams& p) {
    const float g = Cfg::kGlobal ? tensor_divisor(p) : 1.0f;
    const i64 total = static_cast<i64>(p.m) * p.scale_cols;
    for (i64 i = static_cast<i64>(blockIdx.x) * kThreads + threadIdx.x; i < total;
         i += static_cast<i64>(gridDim.x) * kThreads) {
      const int row = static_cast<int>(i / p.scale_cols);
      const int col0 = static_cast<int>(i % p.scale_cols) * Cfg::kGroup;
      const int in_row = input_row(p, row);
      if (in_row < 0) continue;
      float m = 0.0f;
      for (int c = 0; c < Cfg::kGroup; ++c) {
        float v[1];
        load<1>(p, in_row, col0 + c, v);
        m = fmaxf(m, fabsf(v[0]));
      }
      float divisor;
      p.scales[i] = block_scale(m, g, divisor);
      for (int c = 0; c < Cfg::kGroup; ++c) {
        float v[1];
        load<1>(p, in_row, col0 + c, v);
        store<1>(p, row, col0 + c, v, divisor);
      }
    }
  }
};

/// Quantizes p.a into p.q and p.scales (and p.global); after act_amax_kernel for tensor scales
/// and global ones.
template <class Cfg>
__global__ void __launch_bounds__(256) act_quantize_kernel(const ActQuantParams p) {
  using Q = ActQuant<Cfg>;
  __shared__ float shared[Q::kThreads / 32];
  if constexpr (Q::kGroupScales) {
    if (Q::kShuffleGroups && p.vec)
      Q::run_shuffle_groups(p);
    else
      Q::run_serial_groups(p);
  } else {
    if (p.vec)
      Q::template run_rows<8>(p, shared);
    else
      Q::template run_rows<1>(p, shared);
  }
}

/// *p.amax = max(*p.amax, max |a|) over p.a (fp32 bits: non-negative floats order as integers).
/// CTA b reduces the b-th block of kAmaxChunksPerThread * 256 chunks counted from the end, so the
/// last CTAs to run read the tensor's first rows, which the quantize pass then reads from L2.
template <class Cfg>
__global__ void __launch_bounds__(256) act_amax_kernel(const ActQuantParams p) {
  using Q = ActQuant<Cfg>;
  __shared__ float shared[Q::kThreads / 32];
  const int width = p.vec ? 8 : 1;
  const i64 row_chunks = (p.k + width - 1) / width;
  const i64 total = static_cast<i64>(p.m) * row_chunks;
  const i64 per_cta = static_cast<i64>(Q::kThreads) * kAmaxChunksPerThread;
  const i64 first = total - (static_cast<i64>(blockIdx.x) + 1) * per_cta;
  float m = 0.0f;
#pragma unroll
  for (int u = 0; u < kAmaxChunksPerThread; ++u) {
    const i64 i = first + u * Q::kThreads + threadIdx.x;
    if (i < 0) continue;
    // NOTE: a 64-bit division per chunk costs tens of instructions; 32 bits where they fit.
    const i64 r = total <= 0xffffffffll
                      ? static_cast<i64>(static_cast<u32>(i) / static_cast<u32>(row_chunks))
                      : i / row_chunks;
    const int row = Q::input_row(p, static_cast<int>(r));
    const int col = static_cast<int>(i - r * row_chunks) * width;
    if (row < 0) continue;
    if (p.vec) {
      float v[8];
      Q::template load<8>(p, row, col, v);
      m = fmaxf(m, Q::template chunk_amax<8>(v));
    } else {
      float v[1];
      Q::template load<1>(p, row, col, v);
      m = fmaxf(m, fabsf(v[0]));
    }
  }
  m = Q::cta_max(m, shared);
  if (threadIdx.x == 0) atomicMax(p.amax, __float_as_uint(m));
}

/// p.out[r][c] = the fp16/bf16 value of code p.q[r][c] times its scale (and the global scale).
/// With p.vec a thread takes 8 columns of one row (an 8-byte load, a 16-byte store), else one.
template <class Cfg>
__global__ void __launch_bounds__(256) act_dequantize_kernel(const ActQuantParams p) {
  using Q = ActQuant<Cfg>;
  const int width = p.vec ? 8 : 1;
  const i64 row_chunks = (p.k + width - 1) / width;
  const i64 total = static_cast<i64>(p.m) * row_chunks;
  const float g = Cfg::kGlobal ? p.global[0] : 1.0f;
  auto value = [&](int row, int col, u8 code) {
    const float s = Q::kTensor ? p.scales[0]
                    : Q::kToken
                        ? p.scales[row]
                        : p.scales[static_cast<i64>(row) * p.scale_cols + col / Cfg::kGroup];
    return static_cast<u16>(pack_half2<Cfg::kIn>(act_decode(code, Q::kCode) * (s * g), 0.0f) &
                            0xffffu);
  };
  for (i64 i = static_cast<i64>(blockIdx.x) * Q::kThreads + threadIdx.x; i < total;
       i += static_cast<i64>(gridDim.x) * Q::kThreads) {
    // NOTE: a 64-bit division per chunk costs tens of instructions; 32 bits where they fit.
    const i64 r = total <= 0xffffffffll
                      ? static_cast<i64>(static_cast<u32>(i) / static_cast<u32>(row_chunks))
                      : i / row_chunks;
    const int row = static_cast<int>(r), col = static_cast<int>(i - r * row_chunks) * width;
    const u8* q = p.q + static_cast<i64>(row) * p.ldq + col;
    u16* out = p.out + static_cast<i64>(row) * p.lda + col;
    if (p.vec) {
      const uint2 codes = *reinterpret_cast<const uint2*>(q);
      u32 h[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const u32 word = j < 2 ? codes.x : codes.y;
        const int shift = 16 * (j % 2);
        h[j] = value(row, col + 2 * j, static_cast<u8>(word >> shift)) |
               static_cast<u32>(value(row, col + 2 * j + 1, static_cast<u8>(word >> (shift + 8))))
                   << 16;
      }
      *reinterpret_cast<uint4*>(out) = make_uint4(h[0], h[1], h[2], h[3]);
    } else {
      *out = value(row, col, *q);
    }
  }
}

}  // namespace qgemm
