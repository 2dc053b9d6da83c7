#include "jit/mma_gemm.h"

#include <algorithm>

#include "dense_expand/dense_expand_params.cuh"
#include "dense/mma_layout.cuh"
#include "pack/mma_pack.h"
#include "util/hash.h"
#include "util/error.h"

namespace qgemm {
namespace {

int elem_index(DType t) { return t == DType::fp16() ? 0 : t == DType::bf16() ? 1 : 2; }

const char* elem_name(DType t) {
  if (t == DType::fp16()) return "qgemm::Elem::kFp16";
  if (t == DType::bf16()) return "qgemm::Elem::kBf16";
  return "qgemm::Elem::kFp32";
}

}  // namespace

MmaGemmConfig MmaGemmConfig::from_format(const WeightFormat& w, DType act, DType out) {
  MmaGemmConfig c;
  c.act = act;
  c.out = out;
  c.bits = w.type.bits;
  switch (w.type.type_class) {
    case TypeClass::kSignedInt:
      c.code_kind = 0;
      c.const_zero = 1 << (w.type.bits - 1);
      break;
    case TypeClass::kUnsignedInt:
      c.code_kind = 1;
      break;
    default:
      c.code_kind = 2;
      c.exp_bits = w.type.exp_bits;
      c.man_bits = w.type.man_bits;
      break;
  }
  c.zero_table = w.has_zero_points();
  c.float_zero = w.zero_point == ZeroPointKind::kFloat;
  // The tables' groups (mma_table_group_k): a group of 48 runs as groups of 16, channel or
  // tensor scales with zero points as one group spanning the row.
  c.group_k = mma_table_group_k(w);
  if (c.group_k > 0) c.scale_table = mma_scale_table_type(w.scale_type);
  return c;
}

int MmaGemmConfig::unit_k() const { return mma_layout::unit_k(bits); }

int MmaGemmConfig::scale_pair_bytes() const {
  return mma_layout::scale_pair_bytes(elem_index(scale_table));
}

int MmaGemmConfig::smem_bytes() const {
  const int gps = mma_layout::groups_per_stage(group_k, stage_k());
  return mma_layout::ring_bytes(
             mma_layout::stage_bytes(bits, tiles_n * warps_n, units_per_stage, block_m(), gps,
                                     elem_index(scale_table), zero_kind()),
             stages, wgmma) +
         mma_layout::barrier_bytes(stages, warp_specialized) +
         (gather_rows > 0 ? (gather_rows + 1) * gather_cols * 2 : 0);
}

Status MmaGemmConfig::validate() const {
  const std::string where = "mma_gemm config " + to_string();
  if (!(act == DType::fp16() || act == DType::bf16()))
    return invalid_argument(str(where, ": activations must be fp16 or bf16"));
  if (!(out == DType::fp16() || out == DType::bf16() || out == DType::fp32()))
    return invalid_argument(str(where, ": output must be fp16, bf16 or fp32"));
  if (bits < 1 || bits > 8) return invalid_argument(str(where, ": bits must be 1..8"));
  if (code_kind == 2 && (exp_bits + man_bits + 1 != bits || exp_bits < 2 || exp_bits > 5))
    return invalid_argument(str(where, ": float codes need 1 + exp + man = bits, exp 2..5"));
  if (group_k < 0 || (group_k > 0 && group_k % 16 != 0))
    return invalid_argument(str(where, ": group_k=", group_k, " must be a multiple of 16"));
  if (group_k > 0 && group_k % stage_k() != 0 && stage_k() % group_k != 0)
    return invalid_argument(
        str(where, ": group_k=", group_k, " and stage K=", stage_k(), " must divide one another"));
  if (!(scale_table == DType::fp16() || scale_table == DType::bf16() ||
        scale_table == DType::fp32()))
    return invalid_argument(str(where, ": scale tables are fp16, bf16 or fp32"));
  if (zero_table && group_k == 0)
    return invalid_argument(str(where, ": zero-point tables need group scales"));
  if (warps_n < 1 || warps_m < 1 || tiles_n < 1 || frags_m < 1 || units_per_stage < 1)
    return invalid_argument(str(where, ": tile counts must be positive"));
  if (threads() > 1024) return invalid_argument(str(where, ": more than 1024 threads"));
  if (stages < 2 || stages > 8) return invalid_argument(str(where, ": stages must be 2..8"));
  if (!(arch == "sm_75" || arch == "sm_80" || arch == "sm_86" || arch == "sm_89" ||
        arch == "sm_90" || arch == "sm_90a"))
    return invalid_argument(
        str(where, ": arch ", arch, " is not supported (sm_75, sm_80, sm_86, sm_89, sm_90a)"));
  if (arch == "sm_75" && act == DType::bf16())
    return invalid_argument(
        str(where, ": sm_75 tensor cores take fp16 activations; bf16 needs sm_80 or newer"));
  if (wgmma) {
    if (arch != "sm_90a")
      return invalid_argument(str(where, ": wgmma needs arch sm_90a, not ", arch));
    if (warps_n % 4 != 0 || tiles_n != 1)
      return invalid_argument(str(where, ": wgmma needs warps_n a multiple of 4 and tiles_n=1 ",
                                  "(warpgroups of 64 rows), not warps_n=", warps_n,
                                  " tiles_n=", tiles_n));
    if (frags_m > 32)
      return invalid_argument(str(where, ": wgmma takes at most 256 tokens per warpgroup, ",
                                  "frags_m=", frags_m, " is more than 32"));
    if (stage_k() % 64 != 0)
      return invalid_argument(
          str(where, ": wgmma needs a stage K multiple of 64, not ", stage_k()));
  }
  if (warp_specialized && !wgmma)
    return invalid_argument(str(where, ": warp specialization comes with wgmma"));
  if (prescaled) {
    if (!warp_specialized)
      return invalid_argument(str(where, ": prescaled tiles (ps) are warp-specialized (ws)"));
    if (!(act == DType::bf16() && out == DType::bf16()))
      return invalid_argument(str(where, ": prescaled tiles round w * s to bf16 and take bf16 ",
                                  "activations and output only, not ", act.name(), " -> ",
                                  out.name()));
    if (float_zero)
      return invalid_argument(str(where, ": prescaled tiles do not take float zero points"));
    // The kernel's kPsStageBatch: more than 128 tokens per warpgroup hold two batches' A
    // fragments of 64 K each next to 128 sums: stages of 64 K, or one 128-K unit (2- and 6-bit
    // codes) in two batches.
    // A 128-K unit's stage (two batches) fits only with TMA copies of dense tiles: the copy
    // warpgroup's cp.async loop over 64 KB of activations a stage spills, and so does the
    // gathered (MoE) tile's row copies (`qgemm jit check`: 428 and 284 bytes).
    if (frags_m > 16 && stage_k() != 64 &&
        !(stage_k() == 128 && unit_k() == 128 && tma && (!gathered || sorted_rows)))
      return invalid_argument(str(where, ": prescaled tiles of more than 128 tokens per warpgroup ",
                                  "take stages of 64 K, or one 128-K unit with TMA copies (dense ",
                                  "tiles or sorted rows), not ", units_per_stage, " units of ",
                                  unit_k(), " K", tma ? "" : " without TMA"));
    // The kernel's stage_has_batches(): a stage runs as two wgmma batches or more.
    const bool batches = units_per_stage >= 2 ||
                         (stage_k() >= 32 && frags_m > 16) ||
                         (stage_k() > 64 && group_k > 0 && frags_m > 8);
    if (!batches)
      return invalid_argument(str(where, ": prescaled tiles need two wgmma batches per stage ",
                                  "(two K units or more), not ", units_per_stage, " unit of ",
                                  unit_k(), " K"));
  }
  // The kernel's kTma: one box per operand and stage (the 1536 bytes per 16-row tile of a 128-K
  // unit of 6-bit codes as a 3-D box of 512-byte chunks, kCodeChunks).
  const int stage_code_bytes = units_per_stage * mma_layout::unit_bytes(bits);
  if (tma && !(warp_specialized && block_m() <= 256 &&
               (stage_code_bytes <= 1024 || (units_per_stage == 1 && unit_k() == 128))))
    return invalid_argument(str(where, ": TMA stage copies (tma) are for warp-specialized (ws) ",
                                "tiles of at most 256 tokens and 1 KB of codes per 16-row tile ",
                                "and stage, or one 128-K unit, not ", block_m(), " tokens and ",
                                stage_code_bytes, " bytes"));
  // Gathered TMA tiles: each lane of a copy warp boxes whole rows of the token tile.
  if (gathered && tma && block_m() % 32 != 0)
    return invalid_argument(str(where, ": gathered (MoE) TMA tiles copy their rows by the 32 ",
                                "lanes of a warp: tiles of a multiple of 32 tokens, not ",
                                block_m()));
  if (sorted_rows && !(gathered && tma))
    return invalid_argument(str(where, ": sorted rows are for gathered (MoE) TMA tiles"));
  if (gather_rows < 0 || gather_rows > block_m() ||
      (gather_rows > 0 && (!can_gather_rows() || early_weights || gather_cols <= 0 ||
                           gather_cols % 8 != 0 || gather_cols > 65536)))
    return invalid_argument(str(where, ": act-order rows (gather_rows=", gather_rows,
                                ", gather_cols=", gather_cols, ") are staged by mma.sync tiles ",
                                "of dense layers without early weights, at most a token tile of ",
                                "rows of a multiple of 8 columns up to 65536"));
  if (warps_k != 1 && !(warps_k == 2 && warp_specialized && warps_n * warps_m == 4))
    return invalid_argument(str(where, ": warps_k=", warps_k,
                                " is not supported (1, or 2 for a warp-specialized tile of one "
                                "warpgroup: warps_n x warps_m = 4)"));
  return Status();
}

std::string MmaGemmConfig::tiling() const {
  return str(
      "w", warps_n, "x", warps_m, " t", tiles_n, " f", frags_m, " u", units_per_stage, " s", stages,
      warp_specialized ? " ws"
      : wgmma          ? " wg"
                       : "",
      warps_k > 1 ? str(" kw", warps_k) : std::string(), prescaled ? " ps" : "", tma ? " tma" : "",
      gathered ? " moe" : "", sorted_rows ? " sorted" : "", early_weights ? " early" : "",
      gather_rows > 0 ? str(" rows", gather_rows, "x", gather_cols) : std::string());
}

std::string MmaGemmConfig::to_string() const {
  const char* kinds[] = {"int", "uint", "float"};
  std::string codec = str(kinds[code_kind < 0 || code_kind > 2 ? 0 : code_kind], bits);
  if (code_kind == 2) codec = str("e", exp_bits, "m", man_bits);
  return str(codec, zero_table ? (float_zero ? "/fzp" : "/zp") : "",
             group_k == mma_layout::kWholeRowGroupK ? str("/row:", scale_table.name())
             : group_k                              ? str("/g", group_k, ":", scale_table.name())
                                                    : std::string(),
             " ", act.name(), "->", out.name(), " ", tiling(), " ", arch);
}

uint64_t MmaGemmConfig::hash() const {
  Hasher h;
  h.add(to_string()).add(int64_t(const_zero));
  return h.low();
}

std::string MmaGemmConfig::format_fields() const {
  return str("  static constexpr qgemm::Elem kAct = ", elem_name(act),
             ";\n"
             "  static constexpr qgemm::Elem kOut = ",
             elem_name(out),
             ";\n"
             "  static constexpr int kBits = ",
             bits,
             ";\n"
             "  static constexpr int kCodeKind = ",
             code_kind,
             ";\n"
             "  static constexpr int kExpBits = ",
             exp_bits,
             ";\n"
             "  static constexpr int kManBits = ",
             man_bits,
             ";\n"
             "  static constexpr int kConstZero = ",
             const_zero,
             ";\n"
             "  static constexpr int kZeroTable = ",
             zero_kind(),
             ";\n"
             "  static constexpr int kGroupK = ",
             group_k,
             ";\n"
             "  static constexpr int kScaleElem = ",
             elem_index(scale_table), ";\n");
}

bool MmaGemmConfig::programmatic_launch() const {
  // NOTE: one- and two-warp CTAs launch plainly: many small CTAs per SM run slower launched
  // programmatically, while the 4-warp decode tiles and the ws tiles gain
  // (docs/design.md, "programmatic launch"). Gathered CTAs wait for their tile list first
  // (moe_grouped.cuh).
  return arch == "sm_90a" && threads() >= 128;
}

MmaGemmConfig MmaGemmConfig::early_weights_variant() const {
  MmaGemmConfig c = *this;
  if (warp_specialized || !programmatic_launch()) return c;
  c.early_weights = true;
  if (c.stages == 2 && c.units_per_stage % 2 == 0) {
    c.units_per_stage /= 2;
    c.stages = 4;
  }
  return c;
}

bool MmaGemmConfig::marks_partials() const {
  // The kernel's condition (MmaGemm::kMarkedPartials): the 16-token mma.sync tile.
  return !wgmma && frags_m == 2;
}

KernelSpec MmaGemmConfig::spec() const {
  KernelSpec s;
  // The two dense tile families share MmaGemm and its config; wgmma tiles are dense_wgmma's,
  // gathered tiles of either kind moe_grouped's.
  const char* family = gathered ? "moe_grouped" : wgmma ? "dense_wgmma" : "dense_mma";
  s.family = family;
  s.config = to_string();
  s.arch = arch;
  s.threads = threads();
  s.dynamic_smem = smem_bytes();
  s.source = str(
      "#include \"", family, "/", family, ".cuh\"\nstruct Cfg {\n", format_fields(),
      "  static constexpr int kWarpsN = ", warps_n,
      ";\n"
      "  static constexpr int kWarpsM = ",
      warps_m,
      ";\n"
      "  static constexpr int kWarpsK = ",
      warps_k,
      ";\n"
      "  static constexpr int kTilesN = ",
      tiles_n,
      ";\n"
      "  static constexpr int kFragsM = ",
      frags_m,
      ";\n"
      "  static constexpr int kUnitsPerStage = ",
      units_per_stage,
      ";\n"
      "  static constexpr int kStages = ",
      stages,
      ";\n"
      "  static constexpr bool kWgmma = ",
      wgmma ? "true" : "false",
      ";\n"
      "  static constexpr bool kWarpSpecialized = ",
      warp_specialized ? "true" : "false",
      ";\n"
      "  static constexpr bool kPrescaled = ",
      prescaled ? "true" : "false",
      ";\n"
      "  static constexpr bool kTma = ",
      tma ? "true" : "false", ";\n", gathered ? "  static constexpr bool kGathered = true;\n" : "",
      sorted_rows ? "  static constexpr bool kSortedRows = true;\n" : "",
      early_weights ? "  static constexpr bool kEarlyWeights = true;\n" : "",
      gather_rows > 0 ? str("  static constexpr int kGatherRows = ", gather_rows,
                            ";\n  static constexpr int kGatherCols = ", gather_cols, ";\n")
                      : std::string(),
      "};\n"
      "template __global__ void qgemm::",
      family, "_kernel<Cfg>(const qgemm::MmaGemmParams, const __grid_constant__ qgemm::MmaGemmMaps",
      gathered ? ", const qgemm::MoeGroupParams" : "", ");\n");
  s.name_expression = str("&qgemm::", family, "_kernel<Cfg>");
  s.programmatic_launch = programmatic_launch();
  return s;
}

KernelSpec MmaGemmConfig::dequant_spec() const {
  KernelSpec s;
  s.family = "dense_expand";
  s.config = str(to_string().substr(0, to_string().find(' ')), " ", act.name(), " ", arch);
  s.arch = arch;
  s.threads = mma_dequant::kThreads;
  s.source = str(
      "#include \"dense_expand/dense_expand.cuh\"\nstruct Cfg {\n", format_fields(), "};\n",
      "template __global__ void qgemm::mma_dequant_kernel<Cfg>(const qgemm::MmaDequantParams);\n");
  s.name_expression = "&qgemm::mma_dequant_kernel<Cfg>";
  return s;
}

LaunchShape mma_dequant_launch(const MmaGemmConfig&, int n_tiles, int k_units,
                               int multiprocessors) {
  const int64_t items = mma_dequant::items(n_tiles, k_units);
  const int64_t wave = int64_t(mma_dequant::kBlocksPerSm) * std::max(multiprocessors, 1);
  LaunchShape shape;
  shape.blocks = static_cast<unsigned>(
      std::clamp<int64_t>((items + mma_dequant::kWarps - 1) / mma_dequant::kWarps, 1, wave));
  shape.threads = mma_dequant::kThreads;
  shape.smem_bytes = 0;
  return shape;
}

}  // namespace qgemm
