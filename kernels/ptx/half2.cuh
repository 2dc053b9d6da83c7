// Packed fp16x2 / bf16x2 arithmetic on raw 32-bit registers, and conversions.
// PTX ISA: "Half Precision Floating-Point Instructions" (fma.rn.{f16x2,bf16x2} need sm_80 for
// bf16) and "cvt". bf16x2 add/mul are sm_90-only, so they are written as fma here.
// sm_75 has no bf16 arithmetic or conversions and no f16x2 conversion from f32: there the bf16
// forms are fp32 math plus a round-to-nearest-even in integer ops. Every bf16 fma the kernels
// issue is exact (magic-number decode, powers of two), so the two forms give the same bits.
#pragma once

#include "common/base.cuh"

namespace qgemm {

/// Bits of a 16-bit float (fp16: 5/10, bf16: 8/7) holding `v`, which must be exactly
/// representable and normal (used for small integers and powers of two known at compile time).
template <Elem kElem>
QGEMM_HOST_DEVICE constexpr u16 exact_half_bits(double v) {
  constexpr int man = kElem == Elem::kBf16 ? 7 : 10;
  constexpr int bias = kElem == Elem::kBf16 ? 127 : 15;
  if (v == 0) return 0;
  const u16 sign = v < 0 ? 0x8000 : 0;
  double a = v < 0 ? -v : v;
  int e = 0;
  while (a >= 2) {
    a /= 2;
    ++e;
  }
  while (a < 1) {
    a *= 2;
    --e;
  }
  const int mantissa = static_cast<int>((a - 1) * (1 << man));
  return static_cast<u16>(sign | ((e + bias) << man) | mantissa);
}

/// Both halves set to `v`.
template <Elem kElem>
QGEMM_HOST_DEVICE constexpr u32 exact_half2_bits(double v) {
  return static_cast<u32>(exact_half_bits<kElem>(v)) * 0x10001u;
}

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define QGEMM_NO_BF16_MATH 1
/// bf16 bits of `f`, rounded to nearest even (NaN stays a quiet NaN).
QGEMM_DEVICE u32 bf16_bits_rn(float f) {
  const u32 u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return (u >> 16) | 0x40u;
  return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
}
QGEMM_DEVICE float bf16_lo(u32 x) { return __uint_as_float(x << 16); }
QGEMM_DEVICE float bf16_hi(u32 x) { return __uint_as_float(x & 0xffff0000u); }
#endif

template <Elem kElem>
QGEMM_DEVICE u32 hfma2(u32 a, u32 b, u32 c) {
  u32 d;
#ifdef QGEMM_NO_BF16_MATH
  if constexpr (kElem == Elem::kBf16) {
    d = bf16_bits_rn(fmaf(bf16_lo(a), bf16_lo(b), bf16_lo(c))) |
        (bf16_bits_rn(fmaf(bf16_hi(a), bf16_hi(b), bf16_hi(c))) << 16);
    return d;
  }
#endif
  if constexpr (kElem == Elem::kBf16) {
    asm("fma.rn.bf16x2 %0, %1, %2, %3;\n" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  } else {
    asm("fma.rn.f16x2 %0, %1, %2, %3;\n" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  }
  return d;
}

template <Elem kElem>
QGEMM_DEVICE u32 hmul2(u32 a, u32 b) {
  return hfma2<kElem>(a, b, 0x80008000u);  // + (-0) keeps a * b exact and its sign
}

template <Elem kElem>
QGEMM_DEVICE u32 hadd2(u32 a, u32 b) {
  return hfma2<kElem>(a, exact_half2_bits<kElem>(1.0), b);
}

/// Two floats to one packed pair (lo in the low half), rounded to nearest even.
template <Elem kElem>
QGEMM_DEVICE u32 pack_half2(float lo, float hi) {
  u32 d;
#ifdef QGEMM_NO_BF16_MATH
  if constexpr (kElem == Elem::kBf16) {
    return bf16_bits_rn(lo) | (bf16_bits_rn(hi) << 16);
  } else {
    u16 l, h;
    asm("cvt.rn.f16.f32 %0, %1;\n" : "=h"(l) : "f"(lo));
    asm("cvt.rn.f16.f32 %0, %1;\n" : "=h"(h) : "f"(hi));
    return static_cast<u32>(l) | (static_cast<u32>(h) << 16);
  }
#endif
  if constexpr (kElem == Elem::kBf16) {
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(d) : "f"(hi), "f"(lo));
  } else {
    asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(d) : "f"(hi), "f"(lo));
  }
  return d;
}

template <Elem kElem>
QGEMM_DEVICE float half_to_float(u16 h) {
  if constexpr (kElem == Elem::kBf16) {
    return __uint_as_float(static_cast<u32>(h) << 16);
  } else {
    float f;
    asm("cvt.f32.f16 %0, %1;\n" : "=f"(f) : "h"(h));
    return f;
  }
}

/// Selects bytes of {b, a} (PTX prmt): used to broadcast one half of a pair into both halves.
QGEMM_DEVICE u32 prmt(u32 a, u32 b, u32 selector) {
  u32 d;
  asm("prmt.b32 %0, %1, %2, %3;\n" : "=r"(d) : "r"(a), "r"(b), "r"(selector));
  return d;
}

/// (a & b) | c in one LOP3 (the compiler splits it in two when b and c are both immediates).
/// PTX ISA: "lop3".
QGEMM_DEVICE u32 and_or(u32 a, u32 b, u32 c) {
  u32 d;
  asm("lop3.b32 %0, %1, %2, %3, 0xEA;\n" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

QGEMM_DEVICE u32 low_half_both(u32 x) { return prmt(x, 0, 0x1010); }
QGEMM_DEVICE u32 high_half_both(u32 x) { return prmt(x, 0, 0x3232); }

/// The same broadcasts as a `mov {h, h}`, which ptxas folds into the operand selector
/// (.H0_H0 / .H1_H1) of the half2 instruction that reads the result: no instruction of its own,
/// where the prmt above is one. Kept apart because the choice moves ptxas's schedule
/// (docs/design.md, "zero points by operand selectors").
QGEMM_DEVICE u32 low_half_operand(u32 x) {
  u32 d;
  asm("{\n .reg .b16 lo, hi;\n mov.b32 {lo, hi}, %1;\n mov.b32 %0, {lo, lo};\n}\n"
      : "=r"(d)
      : "r"(x));
  return d;
}
QGEMM_DEVICE u32 high_half_operand(u32 x) {
  u32 d;
  asm("{\n .reg .b16 lo, hi;\n mov.b32 {lo, hi}, %1;\n mov.b32 %0, {hi, hi};\n}\n"
      : "=r"(d)
      : "r"(x));
  return d;
}

#endif

}  // namespace qgemm
