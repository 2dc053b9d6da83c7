#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "qgemm/grouped.h"
#include "qgemm/linear.h"
#include "qgemm/quantized.h"
#include "qgemm/status.h"

namespace qgemm {

/// The gated activation between an MoE layer's two GEMMs.
enum class MoeActivation {
  kSiluMul,      ///< silu(gate) * up (Mixtral, Qwen, DeepSeek)
  kGeluMul,      ///< gelu(gate) * up, erf form
  kSwigluClamp,  ///< gpt-oss: gate = min(gate, limit), up = clamp(up, -limit, limit),
                 ///< gate * sigmoid(alpha * gate) * (up + 1)
};

/// How an MoE layer is built. Its experts are w13 [E, 2 I, H] (gate and up projections) and w2
/// [E, H, I]; tokens are [T, H] in the 16-bit type linear.input, and so is the output.
struct MoeOptions {
  /// Activations, input type, backend and device of both grouped GEMMs (LinearOptions::out is
  /// ignored: the intermediate rows and the output are in the input type).
  LinearOptions linear;
  int top_k = 2;
  bool sigmoid_scoring = false;  ///< sigmoid per expert (DeepSeek-V3) instead of softmax
  bool renormalize = true;       ///< the top-k weights are divided by their sum
  /// Grouped top-k (DeepSeek-V3: 8 groups, 4 kept): only experts of the `top_groups` groups
  /// with the best sums of their two best scores are chosen. 1: plain top-k.
  int groups = 1;
  int top_groups = 1;
  float routed_scale = 1.0f;  ///< every routing weight times this
  MoeActivation activation = MoeActivation::kSiluMul;
  /// w13's rows alternate gate, up (gpt-oss) instead of all gate rows, then all up rows.
  bool interleaved_gate_up = false;
  float swiglu_alpha = 1.702f;  ///< kSwigluClamp
  float swiglu_limit = 7.0f;    ///< kSwigluClamp
};

/// One call of an MoE layer. Device pointers on a GPU layer, host pointers on a host layer.
struct MoeArgs {
  int64_t tokens = 0;
  const void* x = nullptr;  ///< [tokens, H]
  /// Router logits [tokens, global experts] fp32, routed by the layer; or null, with topk_ids
  /// and topk_weights [tokens, top_k] computed elsewhere (ids -1: no expert).
  const float* router_logits = nullptr;
  const float* correction_bias = nullptr;  ///< [global experts], added for the choice only
  const int32_t* topk_ids = nullptr;
  const float* topk_weights = nullptr;
  /// Expert parallelism: [global_experts] local expert of each global id, -1 if remote (their
  /// slots add nothing); null when every expert is local.
  const int32_t* expert_map = nullptr;
  int64_t global_experts = 0;      ///< the router's experts: with expert_map, its length
  const void* w13_bias = nullptr;  ///< optional [E, 2 I]
  const void* w2_bias = nullptr;   ///< optional [E, H]
  void* out = nullptr;             ///< [tokens, H]
  void* workspace = nullptr;       ///< at least workspace_bytes(tokens)
  size_t workspace_bytes = 0;
  Stream stream = nullptr;
};

namespace detail {
class MoeImpl;
}

/// A fused mixture-of-experts layer: routing (or given top-k), the w13 grouped GEMM, the gated
/// activation, the w2 grouped GEMM and the weighted sum back to token order (slot order, so the
/// same inputs give the same bits every time). Mirrors Linear:
///
///   auto moe = MoE::create(w13, w2, options);  // validates, packs both expert stacks
///   moe->prepare(max_tokens);                  // compiles every kernel
///   moe->run(args);                            // no compile, no allocation, graph-safe (GPU)
class MoE {
 public:
  static Expected<MoE> create(const QuantizedWeight& w13, const QuantizedWeight& w2,
                              const MoeOptions& options);
  Status prepare(int64_t max_tokens);
  size_t workspace_bytes(int64_t tokens) const;
  /// tokens = 0 returns at once.
  Status run(const MoeArgs& args) const;

  int64_t experts() const;
  int64_t hidden() const;        ///< H
  int64_t intermediate() const;  ///< I
  std::string backend() const;
  std::string explain() const;

 private:
  explicit MoE(std::shared_ptr<detail::MoeImpl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<detail::MoeImpl> impl_;
};

}  // namespace qgemm
