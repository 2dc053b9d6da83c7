#include "jit/dequantize_kernel.h"
#include "util/error.h"

namespace qgemm {

std::string DequantizeConfig::to_string() const {
  return str(weight.type.name(), " -> ", out.name(), " ", arch);
}

KernelSpec DequantizeConfig::spec() const {
  const DType t = weight.type;
  const int kind = t.type_class == TypeClass::kSignedInt     ? 0
                   : t.type_class == TypeClass::kUnsignedInt ? 1
                                                             : 2;
  KernelSpec s;
  s.family = "dequantize";
  s.config = to_string();
  s.arch = arch;
  s.threads = 256;
  s.source = str(
      "#include \"dequant/dequantize_canonical.cuh\"\n"
      "struct Cfg {\n"
      "  static constexpr int kBits = ",
      int(t.bits),
      ";\n"
      "  static constexpr int kCodeKind = ",
      kind,
      ";\n"
      "  static constexpr int kExpBits = ",
      kind == 2 ? int(t.exp_bits) : 0,
      ";\n"
      "  static constexpr int kManBits = ",
      kind == 2 ? int(t.man_bits) : 0,
      ";\n"
      "  static constexpr qgemm::Elem kOut = ",
      out == DType::bf16() ? "qgemm::Elem::kBf16" : "qgemm::Elem::kFp16",
      ";\n"
      "};\n"
      "template __global__ void qgemm::dequantize_kernel<Cfg>(const qgemm::DequantizeParams);\n");
  s.name_expression = "&qgemm::dequantize_kernel<Cfg>";
  return s;
}

}  // namespace qgemm
