#include "quant/scale_recipe.h"

#include <algorithm>
#include <cmath>

namespace qgemm {

double element_range(DType element) {
  if (element.type_class == TypeClass::kSignedInt) return std::max(element.max_value(), 1.0);
  return element.max_value();
}

double choose_scale(double range, DType element, DType scale_type, double global) {
  if (!(range > 0) || !std::isfinite(range)) return 1.0;
  const double target = range / global;
  if (scale_type == DType::ue8m0()) {
    int exponent;
    if (element.is_float()) {
      // OCP MX v1.0: shared exponent = floor(log2(amax)) - emax of the element type.
      exponent = static_cast<int>(std::floor(std::log2(target))) -
                 static_cast<int>(std::floor(std::log2(element.max_value())));
    } else {
      exponent = static_cast<int>(std::ceil(std::log2(target / element_range(element))));
    }
    return std::ldexp(1.0, std::clamp(exponent, -127, 127));
  }
  double s = round_to(scale_type, target / element_range(element));
  if (!std::isfinite(s)) s = scale_type.max_value();
  if (s <= 0) s = decode(scale_type, 1);  // underflow: the smallest positive value
  return s;
}

double choose_global_scale(double range, DType element, DType scale_type) {
  if (!(range > 0) || !std::isfinite(range)) return 1.0;
  const bool narrow_scale =
      scale_type == DType::e4m3() || scale_type == DType::e5m2() || scale_type == DType::fp16();
  const double scale_max = narrow_scale ? scale_type.max_value() : 1.0;
  const double g = round_to(DType::fp32(), range / (element_range(element) * scale_max));
  return g > 0 ? g : 1.0;
}

ActCode act_code(DType t) {
  switch (t.type_class) {
    case TypeClass::kSignedInt:
      return {ActCode::kSigned, t.bits, 0, 0, 0};
    case TypeClass::kUnsignedInt:
      return {ActCode::kUnsigned, t.bits, 0, 0, 0};
    case TypeClass::kExponent:
      return {ActCode::kExponent, 8, 8, 0, 0};
    case TypeClass::kFloat:
      break;
  }
  const int flavor = t.flavor() == FloatFlavor::kIeee ? 2 : t.flavor() == FloatFlavor::kFiniteNan;
  return {ActCode::kFloat, t.bits, t.exp_bits, t.man_bits, flavor};
}

}  // namespace qgemm
