// The activation quantization recipe, in fp32 arithmetic, compiled both into the host library
// (the CPU quantizer) and into the GPU quantizer kernels, so the two give the same bits: every
// step is an IEEE-rounded fp32 division or product, a power-of-two scaling or a round to an
// integer (ties to even), which both processors compute alike. (A recipe in double would round
// twice on the CPU and cost a double division per element on the GPU.)
//
//   amax   max |a| over the token, group or tensor (exact: no arithmetic)
//   scale  amax / range, rounded to the scale type (saturating; never 0), or with ue8m0 scales
//          2^(floor(log2 amax) - emax(element)) for float elements (OCP MX v1.0) and
//          2^ceil(log2(amax / range)) for integer ones; 1 for an all-zero block
//   global (NVFP4) amax(tensor) / (range * max(scale type)); block scales divide by it first
//   code   round(a / scale) (a / (scale * global) with a global), saturating at the type's range
#pragma once

#include "common/base.cuh"

#if !defined(__CUDACC_RTC__) && !defined(__CUDACC__)
#include <cmath>
#include <cstring>
#endif

namespace qgemm {

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
// NOTE: spelled out so no compiler option (fast math, fused multiply-add) can change them.
#define QGEMM_FDIV(a, b) __fdiv_rn(a, b)
#define QGEMM_FMUL(a, b) __fmul_rn(a, b)
#else
#define QGEMM_FDIV(a, b) ((a) / (b))
#define QGEMM_FMUL(a, b) ((a) * (b))
#endif

/// A number type as the recipe sees it (the fields of qgemm::DType that matter here).
struct ActCode {
  enum Kind : int { kSigned = 0, kUnsigned = 1, kFloat = 2, kExponent = 3 };
  int kind;
  int bits;
  int exp_bits;  // floats
  int man_bits;  // floats
  /// Float flavour: 0 every code finite (e2m1, e2m3, e3m2), 1 only S.1111.111 is NaN (e4m3),
  /// 2 IEEE (e5m2, fp16, bf16).
  int flavor;
};

/// floor(log2(x)) for a positive finite x.
QGEMM_HOST_DEVICE int act_floor_log2(float x) {
  int e;
  frexpf(x, &e);  // x = f * 2^e, f in [0.5, 1)
  return e - 1;
}

/// ceil(log2(x)) for a positive finite x.
QGEMM_HOST_DEVICE int act_ceil_log2(float x) {
  int e;
  const float f = frexpf(x, &e);
  return f == 0.5f ? e - 1 : e;
}

/// The largest finite value of a float type.
QGEMM_HOST_DEVICE float act_float_max(const ActCode& t) {
  const int all_ones = (1 << t.exp_bits) - 1;
  const int exp_field = t.flavor == 2 ? all_ones - 1 : all_ones;
  const int man_field = t.flavor == 1 ? (1 << t.man_bits) - 2 : (1 << t.man_bits) - 1;
  const int bias = (1 << (t.exp_bits - 1)) - 1;
  return ldexpf(static_cast<float>((1 << t.man_bits) + man_field), exp_field - bias - t.man_bits);
}

/// The largest |value| symmetric quantization maps amax to (qgemm::element_range).
QGEMM_HOST_DEVICE float act_range(const ActCode& t) {
  if (t.kind == ActCode::kSigned)
    return t.bits > 1 ? static_cast<float>((1 << (t.bits - 1)) - 1) : 1.0f;
  if (t.kind == ActCode::kUnsigned) return static_cast<float>((1 << t.bits) - 1);
  return act_float_max(t);
}

/// |x| (finite, >= 0) rounded to the nearest value of float type t, ties to even, saturating at
/// its largest finite value.
QGEMM_HOST_DEVICE float act_round_float(float x, const ActCode& t) {
  const float top = act_float_max(t);
  if (x >= top) return top;
  if (x == 0.0f) return 0.0f;
  const int bias = (1 << (t.exp_bits - 1)) - 1;
  int unbiased = act_floor_log2(x);
  if (unbiased < 1 - bias) unbiased = 1 - bias;  // subnormal range: one quantum
  const int shift = t.man_bits - unbiased;
  return ldexpf(rintf(ldexpf(x, shift)), -shift);
}

/// act_round_float(x, t) for a scale type t; on sm_89+ e4m3 by the hardware conversions (the
/// same rounding: nearest, ties to even, saturating at 448, subnormals down to 2^-9).
QGEMM_HOST_DEVICE float act_round_scale(float x, const ActCode& t) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  // NOTE: NVFP4's e4m3 block scale, rounded per 16 elements, cost the quantizer as much as
  // encoding them.
  if (t.kind == ActCode::kFloat && t.bits == 8 && t.exp_bits == 4 && t.flavor == 1) {
    u16 code;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(code) : "f"(0.0f), "f"(x));
    u32 halves;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;\n" : "=r"(halves) : "h"(code));
    float r;
    asm("cvt.f32.f16 %0, %1;\n" : "=f"(r) : "h"(static_cast<u16>(halves & 0xffffu)));
    return r;
  }
#endif
  return act_round_float(x, t);
}

/// The scale of a block whose largest magnitude is amax, for elements `elem` and scales of
/// type `scale` (fp32, fp16, bf16, e4m3 or ue8m0).
QGEMM_HOST_DEVICE float act_scale(float amax, const ActCode& elem, const ActCode& scale) {
  if (!(amax > 0.0f)) return 1.0f;
  if (scale.kind == ActCode::kExponent) {
    int e = elem.kind == ActCode::kFloat
                ? act_floor_log2(amax) - act_floor_log2(act_float_max(elem))
                : act_ceil_log2(QGEMM_FDIV(amax, act_range(elem)));
    e = e < -127 ? -127 : (e > 127 ? 127 : e);
    return ldexpf(1.0f, e);
  }
  float s = QGEMM_FDIV(amax, act_range(elem));
  if (!(scale.kind == ActCode::kFloat && scale.bits == 32)) s = act_round_scale(s, scale);
  if (s == 0.0f) {  // underflow: the smallest positive value of the scale type
    const int bias = (1 << (scale.exp_bits - 1)) - 1;
    s = ldexpf(1.0f, 1 - bias - scale.man_bits);
  }
  return s;
}

/// The per-tensor scale above block scales of type `scale` (NVFP4: amax / (6 * 448)).
QGEMM_HOST_DEVICE float act_global_scale(float amax, const ActCode& elem, const ActCode& scale) {
  if (!(amax > 0.0f)) return 1.0f;
  const float g = QGEMM_FDIV(amax, QGEMM_FMUL(act_range(elem), act_float_max(scale)));
  return g > 0.0f ? g : 1.0f;
}

/// The bits of x as another type of its size (a float's bits, the float of bits), host and device.
template <class To, class From>
QGEMM_HOST_DEVICE To act_bit_cast(From x) {
  static_assert(sizeof(To) == sizeof(From), "same size");
  To y;
#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
  memcpy(&y, &x, sizeof y);
#else
  std::memcpy(&y, &x, sizeof y);
#endif
  return y;
}

/// The e2m1 code of |q| (finite, >= 0): act_round_float's nearest-even rounding, saturating at
/// 6. The same code as act_encode_float for every |q|.
QGEMM_HOST_DEVICE u32 act_encode_e2m1_magnitude(float x) {
  // NOTE: e2m1 has no hardware conversion before sm_100, and the generic rounding's frexp and
  // ldexp steps (then seven midpoint compares) made the NVFP4 quantizer arithmetic-bound. One
  // IEEE addition rounds instead: e2m1's values are spaced 0.5 below 2, 1 up to 4 and 2 up to 6,
  // the units in the last place of 2^22, 2^23 and 2^24, so x + that power of two is x rounded to
  // the format, ties to the even step, which is the even code. The steps above the power's bits
  // count from the binade's first code (0, 4 = 2.0, 6 = 4.0): step n of binade b is code n + 2b.
  x = x < 6.0f ? x : 6.0f;
  const u32 binade = static_cast<u32>(x >= 2.0f) + static_cast<u32>(x >= 4.0f);
  const u32 magic = 0x4a800000u + (binade << 23);  // 2^(22 + binade)
  const float rounded = x + act_bit_cast<float>(magic);
  return act_bit_cast<u32>(rounded) - magic + 2 * binade;
}

/// The code of the float q in float type t: nearest (ties to even), saturating.
QGEMM_HOST_DEVICE u32 act_encode_float(float q, const ActCode& t) {
  const u32 sign = q < 0.0f ? 1u << (t.bits - 1) : 0u;
  const float r = act_round_float(fabsf(q), t);
  if (r == 0.0f) return sign;
  const int bias = (1 << (t.exp_bits - 1)) - 1;
  const int unbiased = act_floor_log2(r);
  if (unbiased < 1 - bias)  // subnormal
    return sign | static_cast<u32>(ldexpf(r, bias - 1 + t.man_bits));
  const u32 mantissa = static_cast<u32>(ldexpf(r, t.man_bits - unbiased)) - (1u << t.man_bits);
  return sign | (static_cast<u32>(unbiased + bias) << t.man_bits) | mantissa;
}

/// The code of a / divisor in type t: nearest (ties to even), saturating.
QGEMM_HOST_DEVICE u32 act_encode(float a, float divisor, const ActCode& t) {
  const float q = QGEMM_FDIV(a, divisor);
  if (t.kind != ActCode::kFloat) {
    const float lo = t.kind == ActCode::kSigned ? -ldexpf(1.0f, t.bits - 1) : 0.0f;
    const float hi =
        t.kind == ActCode::kSigned ? ldexpf(1.0f, t.bits - 1) - 1.0f : ldexpf(1.0f, t.bits) - 1.0f;
    const float v = rintf(q < lo ? lo : (q > hi ? hi : q));
    return static_cast<u32>(static_cast<i32>(v)) & ((1u << t.bits) - 1u);
  }
  if (t.bits == 4 && t.exp_bits == 2 && t.man_bits == 1)
    return (q < 0.0f ? 8u : 0u) | act_encode_e2m1_magnitude(fabsf(q));
  return act_encode_float(q, t);
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
/// act_encode(a, divisor, e4m3) of two elements by the hardware conversion (sm_89+): nearest,
/// ties to even, saturating at 448, as act_encode for finite quotients. The first element's code
/// is the low byte. Adding +0 first turns a quotient of -0 into +0, whose code act_encode gives.
QGEMM_DEVICE u32 act_encode_e4m3x2(float a0, float a1, float divisor) {
  const float q0 = __fadd_rn(QGEMM_FDIV(a0, divisor), 0.0f);
  const float q1 = __fadd_rn(QGEMM_FDIV(a1, divisor), 0.0f);
  u16 codes;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(codes) : "f"(q1), "f"(q0));
  return codes;
}
#endif

/// The value of code c of type t (finite codes).
QGEMM_HOST_DEVICE float act_decode(u32 c, const ActCode& t) {
  if (t.kind == ActCode::kSigned)
    return static_cast<float>(static_cast<i32>(c << (32 - t.bits)) >> (32 - t.bits));
  if (t.kind == ActCode::kUnsigned) return static_cast<float>(c);
  const int bias = (1 << (t.exp_bits - 1)) - 1;
  const u32 e = (c >> t.man_bits) & ((1u << t.exp_bits) - 1u);
  const u32 m = c & ((1u << t.man_bits) - 1u);
  const float v = e == 0 ? ldexpf(static_cast<float>(m), 1 - bias - t.man_bits)
                         : ldexpf(static_cast<float>(m + (1u << t.man_bits)),
                                  static_cast<int>(e) - bias - t.man_bits);
  return (c >> (t.bits - 1)) & 1u ? -v : v;
}

}  // namespace qgemm
