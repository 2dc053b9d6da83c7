#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "qgemm/status.h"

namespace qgemm {

/// The families of number types qgemm knows.
enum class TypeClass : uint8_t {
  kSignedInt,    ///< intN, two's complement, N = 1..8
  kUnsignedInt,  ///< uintN, N = 1..8
  kFloat,        ///< eXmY small floats, fp16, bf16, fp32
  kExponent,     ///< ue8m0: unsigned power of two 2^(code-127), 0xff is NaN
};

/// How a float type spends its all-ones exponent.
enum class FloatFlavor : uint8_t {
  kIeee,       ///< all-ones exponent: infinity (mantissa 0) or NaN (fp16, bf16, fp32, e5m2)
  kFiniteNan,  ///< no infinities; only S.1111.111 is NaN ('fn' types: e4m3)
  kFinite,     ///< every code is a finite number (e2m1, e2m3, e3m2)
};

/// A scalar number type: its bit width and how codes map to values.
///
/// Rounding (encode): round to nearest, ties to the even code. Overflow saturates to the largest
/// finite value in types without infinity, and rounds to infinity in IEEE types. NaN encodes to
/// the canonical NaN where the type has one; types without NaN (integers, e2m1, e2m3, e3m2)
/// encode NaN as +0 — quantizers reject non-finite input before it gets there.
struct DType {
  TypeClass type_class = TypeClass::kFloat;
  uint8_t bits = 32;
  uint8_t exp_bits = 8;   ///< floats only
  uint8_t man_bits = 23;  ///< floats only

  static constexpr DType int_bits(int n) {
    return {TypeClass::kSignedInt, static_cast<uint8_t>(n), 0, 0};
  }
  static constexpr DType uint_bits(int n) {
    return {TypeClass::kUnsignedInt, static_cast<uint8_t>(n), 0, 0};
  }
  static constexpr DType float_bits(int e, int m) {
    return {TypeClass::kFloat, static_cast<uint8_t>(1 + e + m), static_cast<uint8_t>(e),
            static_cast<uint8_t>(m)};
  }
  static constexpr DType e2m1() { return float_bits(2, 1); }
  static constexpr DType e2m3() { return float_bits(2, 3); }
  static constexpr DType e3m2() { return float_bits(3, 2); }
  static constexpr DType e4m3() { return float_bits(4, 3); }
  static constexpr DType e5m2() { return float_bits(5, 2); }
  static constexpr DType fp16() { return float_bits(5, 10); }
  static constexpr DType bf16() { return float_bits(8, 7); }
  static constexpr DType fp32() { return float_bits(8, 23); }
  static constexpr DType ue8m0() { return {TypeClass::kExponent, 8, 8, 0}; }

  bool is_int() const {
    return type_class == TypeClass::kSignedInt || type_class == TypeClass::kUnsignedInt;
  }
  bool is_float() const { return type_class == TypeClass::kFloat; }
  bool is_signed() const {
    return type_class == TypeClass::kSignedInt || type_class == TypeClass::kFloat;
  }
  FloatFlavor flavor() const;
  int exponent_bias() const { return (1 << (exp_bits - 1)) - 1; }

  /// Largest finite value.
  double max_value() const;
  /// Smallest (most negative) finite value; the smallest positive one for ue8m0.
  double min_value() const;
  /// Name as written in specs: "int4", "uint8", "e2m1", "fp16", "ue8m0", ...
  std::string name() const;

  friend bool operator==(const DType&, const DType&) = default;
};

/// Parses a type name; the error lists the accepted names.
Expected<DType> parse_dtype(std::string_view name);

/// Every type qgemm accepts, in listing order.
std::vector<DType> all_dtypes();

/// The exact value of `code` (the low `bits` bits are used). NaN and ±inf where the type has them.
double decode(DType type, uint32_t code);

/// The code nearest to `x` (ties to even), saturating or rounding to inf as documented on DType.
uint32_t encode(DType type, double x);

/// encode(), except that values beyond the largest finite value of a float type take that value
/// (with their sign) instead of inf: the conversion quantizers use. A power-of-two (ue8m0) scale
/// chosen by the OCP MX rule leaves block maxima up to 2^(emax+1), past e5m2's 57344.
uint32_t encode_saturating(DType type, double x);

/// `x` rounded to the nearest value of `type`: decode(type, encode(type, x)).
double round_to(DType type, double x);

/// Whether every value of `narrow` is exactly representable in `wide`.
bool represents_exactly(DType wide, DType narrow);

}  // namespace qgemm
