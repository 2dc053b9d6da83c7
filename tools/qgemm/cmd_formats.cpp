#include <cmath>
#include <cstdio>
#include <string>

#include "commands.h"
#include "qgemm/dtype.h"
#include "qgemm/format.h"

namespace qgemm::cli {
namespace {

// "1.5", "-0", "nan", "inf", "-inf", "0.001953125": shortest text that reads back exactly.
std::string value_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

int dump(const std::string& name) {
  auto type = parse_dtype(name);
  if (!type) {
    std::fprintf(stderr, "qgemm formats --dump: %s\n", type.status().message().c_str());
    return 2;
  }
  if (type->bits > 8) {
    std::fprintf(stderr,
                 "qgemm formats --dump: %s has %d bits; --dump lists types of at most 8 bits\n",
                 name.c_str(), int(type->bits));
    return 2;
  }
  for (uint32_t code = 0; code < (1u << type->bits); ++code)
    std::printf("0x%02x %s\n", code, value_text(decode(*type, code)).c_str());
  return 0;
}

void list() {
  std::printf("Number types (weights, activations, scales):\n");
  std::printf("  %-7s %4s  %-12s %s\n", "type", "bits", "max", "notes");
  for (DType t : all_dtypes()) {
    std::string notes;
    if (t.is_float()) {
      switch (t.flavor()) {
        case FloatFlavor::kIeee:
          notes = "IEEE-like: inf and NaN";
          break;
        case FloatFlavor::kFiniteNan:
          notes = "no inf; S.1111.111 is NaN; saturates";
          break;
        case FloatFlavor::kFinite:
          notes = "all codes finite; saturates";
          break;
      }
    } else if (t.type_class == TypeClass::kExponent) {
      notes = "2^(code-127); 0xff is NaN";
    } else {
      notes = t.type_class == TypeClass::kSignedInt ? "two's complement" : "unsigned";
    }
    std::printf("  %-7s %4d  %-12s %s\n", t.name().c_str(), int(t.bits),
                value_text(t.max_value()).c_str(), notes.c_str());
  }
  std::printf(
      "\nWeight specs: <type>[/g<G>|/channel|/b<GN>x<GK>|/tensor][/<scale "
      "type>][/zp|/zp_<fp16|bf16|fp32>]"
      "[/global]\n  scale types: fp16 bf16 fp32 e4m3 e5m2 ue8m0; left out: fp16 for integer codes, "
      "ue8m0 for float codes in groups of 32, fp32 for other float codes\n  e.g. int4/g128/fp16  "
      "uint4/g128/fp16/zp  e4m3/channel/fp32  e4m3/b128x128/fp32  int8/channel/bf16\n");
  std::printf("  aliases:\n");
  for (const FormatAlias& a : weight_aliases())
    std::printf("    %-12s = %s\n", a.name.c_str(), a.spec.c_str());
  std::printf(
      "\nActivation specs: bf16 | fp16 | <type>/token | <type>/tensor | <type>/g<G>[/<scale type>]\n"
      "  group scales left out: ue8m0 in groups of 32, fp32 otherwise\n"
      "  e.g. e4m3/token  e4m3/g128/fp32  int8/token  e4m3/tensor\n  aliases:\n");
  for (const FormatAlias& a : act_aliases())
    std::printf("    %-12s = %s\n", a.name.c_str(), a.spec.c_str());
  std::printf("\nNamed recipes (weight x activation):\n");
  for (const Recipe& r : recipes())
    std::printf("  %-12s %-22s x %-16s %s\n", r.name.c_str(), r.weight.c_str(), r.act.c_str(),
                r.description.c_str());
}

}  // namespace

void add_formats_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("formats", "List number types, format specs, aliases and recipes");
  auto dump_type = std::make_shared<std::string>();
  cmd->add_option("--dump", *dump_type,
                  "Print every code of a type of at most 8 bits and its value, one per line");
  cmd->callback([cmd, dump_type] {
    if (!dump_type->empty()) {
      const int rc = dump(*dump_type);
      if (rc != 0) throw CLI::RuntimeError(rc);
      return;
    }
    (void)cmd;
    list();
  });
}

}  // namespace qgemm::cli
