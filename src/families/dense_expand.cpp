#include "families/dense_expand.h"

#include "dense/mma_layout.cuh"
#include "families/dense_wgmma.h"
#include "plan/mma_tile.h"
#include "util/error.h"

namespace qgemm {

bool cublaslt_has_gemm(DType act, DType out) {
  // cuBLASLt has bf16 x bf16 -> bf16/fp32 and fp16 x fp16 -> fp16/fp32, but no mixed halves.
  return (act == DType::fp16() || act == DType::bf16()) && (out == act || out == DType::fp32());
}

int64_t mma_handoff_m(const DeviceInfo& device, const WeightFormat& weight, DType act, DType out) {
  if (!cublaslt_has_gemm(act, out)) return INT64_MAX;
  GemmProblem p;
  p.weight = weight, p.act = act, p.out = out, p.device = device;
  // NOTE: from here on the layer is compute-bound and the tile kernels reach a fraction of the
  // tensor rate, so expanding the weight (a cost per layer, not per token) and calling cuBLAS is
  // faster (docs/design.md, "warp-specialized wgmma"). Wider codes are dearer per token in the
  // tile: 5- and 7-bit codes (20 and 28 words per lane and unit, 32 tokens) hand off from 129;
  // codes the large bucket holds at 64 tokens per warpgroup (3-bit, 6-bit with groups shorter
  // than a unit) from 257 (docs/design.md, "hand-off to expansion + cuBLASLt"). 8-bit codes
  // with group scales hand off from 385, where the tile falls behind; int8/channel keeps the
  // tile. Other architectures keep a boundary not tuned on them.
  if (p.device.arch() != "sm_90a") return 512;
  const int words = mma_layout::unit_words(p.weight.type.bits);
  // NOTE: float zero points with groups shorter than the ws stage shrink the stage to one group
  // and hold 64 tokens (mma_config_for), so the hand-off overtakes the tile sooner
  // (docs/design.md, "float zero points after the MMA").
  const MmaTile large_tile = wgmma_large_tile();
  const auto large = mma_config_for(large_tile, p.weight, p.act, p.out, p.device);
  if (p.weight.zero_point == ZeroPointKind::kFloat && words <= 8 && large.ok() &&
      large->warp_specialized && large->stage_k() < 128)
    return 193;
  // NOTE: with TMA stage copies the 256-token prescaled tile beats the hand-off at every M
  // tried with 4-bit codes, and to 2048 tokens with 8-bit ones (docs/design.md, "TMA stage
  // copies").
  // 6-bit codes (one 128-K unit a stage in two batches, two stages in shared memory) run it at
  // ~550 TFLOPS on an H100, and the hand-off catches up at ~1024 tokens (docs/design.md,
  // "256-token tile for 2- and 6-bit codes"); 2-bit codes run it at cuBLAS's rate.
  if (wgmma_wide_token_config(p).ok())
    return words == 8 ? 2049 : p.weight.type.bits == 6 ? 1025 : INT64_MAX;
  // The 128-token tile with TMA copies (fp16 layers) beats the hand-off to 1024 tokens; tried
  // with 4-bit codes and integer zero points or none only.
  if (with_tma_if_it_pays(large_tile, p).tma && p.weight.type.bits == 4 &&
      p.weight.zero_point != ZeroPointKind::kFloat)
    return 1025;
  if (words > 12) return 129;
  if (words == 8 && p.weight.has_group_scales()) return 385;
  if (words <= 8) return 513;
  // NOTE: 3-bit codes (the 64-token tile) keep the tile up to 512 tokens: the expansion costs
  // ~0.5 us per MB of bf16 weight, which the tile's extra time per token overtakes only at
  // ~512 (docs/design.md, "what the hand-off costs off 8192²").
  if (p.weight.type.bits == 3) return 513;
  return large.ok() && large->frags_m >= large_tile.frags_m ? 513 : 257;
}

namespace {

class DenseExpandFamily final : public KernelFamily {
 public:
  std::string_view name() const override { return "dense_expand"; }

  Support supports(const GemmProblem& p) const override {
    if (!p.cublas) return Support::no("cuBLASLt is not loaded");
    if (!cublaslt_has_gemm(p.act, p.out))
      return Support::no(str("cuBLASLt has no GEMM for ", p.act.name(), " -> ", p.out.name()));
    if (mma_handoff_m(p.device, p.weight, p.act, p.out) == INT64_MAX)
      return Support::no("the tile kernels are faster at every M for this format");
    return Support::yes();
  }

  Expected<FamilyProposal> propose(const GemmProblem& p) const override {
    MmaGemmConfig format = MmaGemmConfig::from_format(p.weight, p.act, p.out);
    format.arch = p.device.arch();
    return FamilyProposal{mma_handoff_m(p.device, p.weight, p.act, p.out), {{INT64_MAX, format}}};
  }

  KernelSpec spec(const MmaGemmConfig& config) const override { return config.dequant_spec(); }

  bool expands() const override { return true; }
};

}  // namespace

const KernelFamily& dense_expand_family() {
  static const DenseExpandFamily family;
  return family;
}

}  // namespace qgemm
