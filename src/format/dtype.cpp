#include "qgemm/dtype.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "format/half.h"
#include "format/int_codes.h"
#include "util/error.h"

namespace qgemm {
namespace {

// NOTE: only these small floats have an agreed meaning (OCP MX v1.0 and OFP8); other eXmY
// splits are rejected instead of guessed.
constexpr DType kSmallFloats[] = {DType::e2m1(), DType::e2m3(), DType::e3m2(), DType::e4m3(),
                                  DType::e5m2()};

uint32_t code_mask(DType t) { return t.bits >= 32 ? 0xffffffffu : (1u << t.bits) - 1; }

// Largest biased exponent field that still encodes finite numbers.
int max_exponent_field(DType t) {
  int all_ones = (1 << t.exp_bits) - 1;
  return t.flavor() == FloatFlavor::kIeee ? all_ones - 1 : all_ones;
}

// Largest mantissa field usable with max_exponent_field (e4m3 loses S.1111.111 to NaN).
int max_mantissa_field(DType t) {
  int all_ones = (1 << t.man_bits) - 1;
  return t.flavor() == FloatFlavor::kFiniteNan ? all_ones - 1 : all_ones;
}

uint32_t nan_code(DType t) {
  switch (t.flavor()) {
    case FloatFlavor::kIeee:  // quiet NaN: all-ones exponent, mantissa MSB set
      return (((1u << t.exp_bits) - 1) << t.man_bits) | (1u << (t.man_bits - 1));
    case FloatFlavor::kFiniteNan:
      return (1u << (t.bits - 1)) - 1;
    case FloatFlavor::kFinite:
      return 0;
  }
  return 0;
}

double decode_float(DType t, uint32_t code) {
  const uint32_t sign = (code >> (t.bits - 1)) & 1;
  const int exp_field = static_cast<int>((code >> t.man_bits) & ((1u << t.exp_bits) - 1));
  const int man_field = static_cast<int>(code & ((1u << t.man_bits) - 1));
  const int all_ones = (1 << t.exp_bits) - 1;
  double value;
  if (t.flavor() == FloatFlavor::kIeee && exp_field == all_ones) {
    value = man_field == 0 ? std::numeric_limits<double>::infinity()
                           : std::numeric_limits<double>::quiet_NaN();
  } else if (t.flavor() == FloatFlavor::kFiniteNan && exp_field == all_ones &&
             man_field == (1 << t.man_bits) - 1) {
    value = std::numeric_limits<double>::quiet_NaN();
  } else if (exp_field == 0) {
    value = std::ldexp(static_cast<double>(man_field), 1 - t.exponent_bias() - t.man_bits);
  } else {
    value = std::ldexp(static_cast<double>(man_field + (1 << t.man_bits)),
                       exp_field - t.exponent_bias() - t.man_bits);
  }
  return sign ? -value : value;
}

// Round-to-nearest-even for any float layout: find the quantum (ulp) of |x|'s binade, clamped
// at the subnormal range, and round |x|/quantum to an integer with the FPU's ties-to-even mode.
// The integer's parity is the mantissa LSB, so ties go to the even code.
uint32_t encode_float(DType t, double x) {
  if (std::isnan(x)) return nan_code(t);
  const uint32_t sign_bit = std::signbit(x) ? (1u << (t.bits - 1)) : 0u;
  const double a = std::fabs(x);
  const int bias = t.exponent_bias();
  const uint32_t max_code = (static_cast<uint32_t>(max_exponent_field(t)) << t.man_bits) |
                            static_cast<uint32_t>(max_mantissa_field(t));
  const uint32_t inf_code = static_cast<uint32_t>((1 << t.exp_bits) - 1) << t.man_bits;
  const bool ieee = t.flavor() == FloatFlavor::kIeee;
  if (std::isinf(a)) return sign_bit | (ieee ? inf_code : max_code);
  if (a == 0) return sign_bit;

  int e;
  std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1)
  const int unbiased = std::max(e - 1, 1 - bias);
  const double quantum = std::ldexp(1.0, unbiased - t.man_bits);
  const double rounded = std::nearbyint(a / quantum) * quantum;
  if (rounded > decode_float(t, max_code)) return sign_bit | (ieee ? inf_code : max_code);
  if (rounded == 0) return sign_bit;

  std::frexp(rounded, &e);
  const int exp_unbiased = e - 1;
  if (exp_unbiased < 1 - bias) {  // subnormal
    const auto man = static_cast<uint32_t>(std::ldexp(rounded, bias - 1 + t.man_bits));
    return sign_bit | man;
  }
  const auto exp_field = static_cast<uint32_t>(exp_unbiased + bias);
  const auto man =
      static_cast<uint32_t>(std::ldexp(rounded, t.man_bits - exp_unbiased)) - (1u << t.man_bits);
  return sign_bit | (exp_field << t.man_bits) | man;
}

uint32_t encode_exponent(double x) {
  if (std::isnan(x)) return 0xff;
  if (!(x > std::ldexp(1.0, -127))) return 0;  // zero, negatives and tiny values clamp low
  if (x >= std::ldexp(1.0, 127)) return 254;
  int e;
  std::frexp(x, &e);  // 2^(e-1) <= x < 2^e
  const double low = std::ldexp(1.0, e - 1);
  const double mid = 1.5 * low;  // the arithmetic midpoint between 2^(e-1) and 2^e
  uint32_t code = static_cast<uint32_t>(e - 1 + 127);
  if (x > mid || (x == mid && (code & 1))) code += 1;
  return std::min<uint32_t>(code, 254);
}

// NOTE: fp16 and bf16 take these fast paths (importers and packers convert every scale), the
// bulk converters of format/half.h; they give the generic coder's bits (tests compare them on
// every code and midpoint).
// A finite fp16 or bf16 code as a double, or false for other types and inf and NaN codes.
bool decode_half_fast(DType t, uint32_t code, double& value) {
  if (t == DType::bf16() && (code & 0x7f80u) != 0x7f80u) {
    value = bf16_to_float(static_cast<uint16_t>(code));
    return true;
  }
  if (t == DType::fp16() && (code & 0x7c00u) != 0x7c00u) {
    value = fp16_to_float(static_cast<uint16_t>(code));
    return true;
  }
  return false;
}

// x rounded to nearest even in fp16 or bf16 where x is a float (one rounding, as the generic
// coder's) and not NaN; false otherwise.
bool encode_half_fast(DType t, double x, uint32_t& code) {
  if (!(t == DType::bf16() || t == DType::fp16())) return false;
  const auto f = static_cast<float>(x);
  if (static_cast<double>(f) != x) return false;
  code = float_to_half_code(t, f);
  return true;
}

}  // namespace

FloatFlavor DType::flavor() const {
  if (bits > 8 || *this == e5m2()) return FloatFlavor::kIeee;
  if (*this == e4m3()) return FloatFlavor::kFiniteNan;
  return FloatFlavor::kFinite;
}

double DType::max_value() const {
  switch (type_class) {
    case TypeClass::kSignedInt:
      return std::ldexp(1.0, bits - 1) - 1;
    case TypeClass::kUnsignedInt:
      return std::ldexp(1.0, bits) - 1;
    case TypeClass::kExponent:
      return std::ldexp(1.0, 127);
    case TypeClass::kFloat:
      return decode_float(*this, (static_cast<uint32_t>(max_exponent_field(*this)) << man_bits) |
                                     static_cast<uint32_t>(max_mantissa_field(*this)));
  }
  return 0;
}

double DType::min_value() const {
  switch (type_class) {
    case TypeClass::kSignedInt:
      return -std::ldexp(1.0, bits - 1);
    case TypeClass::kUnsignedInt:
      return 0;
    case TypeClass::kExponent:
      return std::ldexp(1.0, -127);
    case TypeClass::kFloat:
      return -max_value();
  }
  return 0;
}

std::string DType::name() const {
  switch (type_class) {
    case TypeClass::kSignedInt:
      return str("int", int(bits));
    case TypeClass::kUnsignedInt:
      return str("uint", int(bits));
    case TypeClass::kExponent:
      return "ue8m0";
    case TypeClass::kFloat:
      if (*this == fp16()) return "fp16";
      if (*this == bf16()) return "bf16";
      if (*this == fp32()) return "fp32";
      return str("e", int(exp_bits), "m", int(man_bits));
  }
  return "?";
}

std::vector<DType> all_dtypes() {
  std::vector<DType> types;
  for (int b = 1; b <= 8; ++b) types.push_back(DType::int_bits(b));
  for (int b = 1; b <= 8; ++b) types.push_back(DType::uint_bits(b));
  for (DType t : kSmallFloats) types.push_back(t);
  types.push_back(DType::ue8m0());
  types.push_back(DType::fp16());
  types.push_back(DType::bf16());
  types.push_back(DType::fp32());
  return types;
}

Expected<DType> parse_dtype(std::string_view name) {
  for (DType t : all_dtypes()) {
    if (t.name() == name) return t;
  }
  if (name == "float16" || name == "half") return DType::fp16();
  if (name == "bfloat16") return DType::bf16();
  if (name == "float32" || name == "float") return DType::fp32();
  if (name == "e4m3fn") return DType::e4m3();
  return invalid_argument(str("unknown number type '", name,
                              "'; accepted: int1..int8, uint1..uint8, e2m1, e2m3, e3m2, e4m3, "
                              "e5m2, ue8m0, fp16, bf16, fp32"));
}

double decode(DType t, uint32_t code) {
  code &= code_mask(t);
  switch (t.type_class) {
    case TypeClass::kSignedInt: {
      const int64_t v = code;
      return static_cast<double>(code >> (t.bits - 1) ? v - (int64_t{1} << t.bits) : v);
    }
    case TypeClass::kUnsignedInt:
      return static_cast<double>(code);
    case TypeClass::kExponent:
      return code == 0xff ? std::numeric_limits<double>::quiet_NaN()
                          : std::ldexp(1.0, static_cast<int>(code) - 127);
    case TypeClass::kFloat:
      if (t == DType::fp32()) {
        float f;
        std::memcpy(&f, &code, 4);
        return f;
      }
      if (double v; decode_half_fast(t, code, v)) return v;
      return decode_float(t, code);
  }
  return 0;
}

uint32_t encode(DType t, double x) {
  switch (t.type_class) {
    case TypeClass::kSignedInt:
    case TypeClass::kUnsignedInt:
      return encode_int(x, t.min_value(), t.max_value(), code_mask(t));
    case TypeClass::kExponent:
      return encode_exponent(x);
    case TypeClass::kFloat:
      if (t == DType::fp32()) {
        const float f = static_cast<float>(x);  // the FPU rounds to nearest even
        uint32_t code;
        std::memcpy(&code, &f, 4);
        return code;
      }
      if (uint32_t code; !std::isnan(x) && encode_half_fast(t, x, code)) return code;
      return encode_float(t, x);
  }
  return 0;
}

double round_to(DType t, double x) { return decode(t, encode(t, x)); }

namespace {

// Round-to-nearest-even of a finite x into a small float type (e2m1 .. e5m2) by the
// midpoints between its non-negative finite values: quantizers encode every weight, and the
// generic coder's frexp/ldexp per value dominated them. The same bits as encode_float (the
// midpoint test compares every value, midpoint and neighbour).
class SmallFloatRounder {
 public:
  explicit SmallFloatRounder(DType t) {
    for (uint32_t code = 0; code < (1u << (t.bits - 1)); ++code) {
      const double v = decode(t, code);
      if (!std::isfinite(v)) break;  // codes grow with their values up to inf / NaN
      values_.push_back(v);
    }
    for (size_t i = 0; i + 1 < values_.size(); ++i)
      mids_.push_back(0.5 * (values_[i] + values_[i + 1]));
    sign_ = 1u << (t.bits - 1);
  }
  /// x clamped to +-max first (the saturating coder's rule).
  uint32_t encode(double x) const {
    const double a = std::min(std::fabs(x), values_.back());
    // The first midpoint not below a: codes below it round down to i, a tie goes to the even one.
    const size_t i = std::lower_bound(mids_.begin(), mids_.end(), a) - mids_.begin();
    uint32_t code = static_cast<uint32_t>(i);
    if (i < mids_.size() && a == mids_[i] && (code & 1u)) code += 1;
    return std::signbit(x) ? code | sign_ : code;
  }

 private:
  std::vector<double> values_, mids_;
  uint32_t sign_ = 0;
};

const SmallFloatRounder* small_float_rounder(DType t) {
  static const SmallFloatRounder rounders[] = {
      SmallFloatRounder(DType::e2m1()), SmallFloatRounder(DType::e2m3()),
      SmallFloatRounder(DType::e3m2()), SmallFloatRounder(DType::e4m3()),
      SmallFloatRounder(DType::e5m2())};
  for (size_t i = 0; i < std::size(kSmallFloats); ++i)
    if (t == kSmallFloats[i]) return &rounders[i];
  return nullptr;
}

}  // namespace

uint32_t encode_saturating(DType t, double x) {
  if (t.type_class == TypeClass::kFloat && std::isfinite(x)) {
    if (const SmallFloatRounder* r = small_float_rounder(t)) return r->encode(x);
    x = std::clamp(x, -t.max_value(), t.max_value());
  }
  return encode(t, x);
}

bool represents_exactly(DType wide, DType narrow) {
  if (wide == narrow) return true;
  if (narrow.bits <= 8) {
    for (uint32_t c = 0; c < (1u << narrow.bits); ++c) {
      const double v = decode(narrow, c);
      if (std::isnan(v)) continue;
      const double r = round_to(wide, v);
      if (!(r == v)) return false;
    }
    return true;
  }
  if (!wide.is_float() || !narrow.is_float()) return false;
  const int wide_min_exp = 1 - wide.exponent_bias() - wide.man_bits;
  const int narrow_min_exp = 1 - narrow.exponent_bias() - narrow.man_bits;
  return wide.man_bits >= narrow.man_bits && wide.max_value() >= narrow.max_value() &&
         wide_min_exp <= narrow_min_exp;
}

}  // namespace qgemm
