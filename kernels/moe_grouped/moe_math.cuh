// The MoE layer's per-token math around its two grouped GEMMs, compiled both into the host
// library (the cpu path and the reference) and into the GPU kernels (moe_route.cuh,
// moe_activation.cuh, moe_reduce.cuh), so both choose the same experts: top-k routing of a
// token's router logits, the gated activation between the GEMMs, and the weighted sum back to
// token order.
#pragma once

#include "common/base.cuh"

#if !defined(__CUDACC_RTC__) && !defined(__CUDACC__)
#include <cmath>
#endif

namespace qgemm {

/// How a token's router logits become its top-k experts and weights.
struct MoeRouting {
  i32 experts;  ///< logits per token (global experts)
  i32 top_k;
  i32 sigmoid;      ///< 0: softmax over all experts; 1: sigmoid per expert (DeepSeek-V3)
  i32 renormalize;  ///< the k weights are divided by their sum
  i32 groups;       ///< > 1: grouped top-k (DeepSeek): experts in `groups` equal groups,
  i32 top_groups;   ///< only the `top_groups` groups with the best top-2 sums are eligible
  float scale;      ///< every weight times this (DeepSeek's routed scaling factor)
};

/// The gated activation between the GEMMs: out = act(gate) * up, per element.
enum class MoeAct : int {
  kSiluMul = 0,      ///< silu(g) * u
  kGeluMul = 1,      ///< gelu(g) * u (erf form)
  kSwigluClamp = 2,  ///< gpt-oss: g = min(g, limit), u = clamp(u, -limit, limit),
                     ///< g * sigmoid(alpha * g) * (u + 1)
};

QGEMM_HOST_DEVICE float moe_activate(float g, float u, int act, float alpha, float limit) {
  if (act == static_cast<int>(MoeAct::kGeluMul))
    return 0.5f * g * (1.0f + erff(g * 0.70710678118654752f)) * u;
  if (act == static_cast<int>(MoeAct::kSwigluClamp)) {
    g = fminf(g, limit);
    u = fmaxf(fminf(u, limit), -limit);
    return g / (1.0f + expf(-alpha * g)) * (u + 1.0f);
  }
  return g / (1.0f + expf(-g)) * u;
}

/// The sum of the two best choice(e) over experts [begin, end) (the best alone for one expert):
/// a group's rank in DeepSeek's grouped top-k.
template <class Choice>
QGEMM_HOST_DEVICE float moe_group_top2_sum(const Choice& choice, int begin, int end) {
  float a = -3.4028235e38f, b = -3.4028235e38f;  // the lowest float
  for (int e = begin; e < end; ++e) {
    // The same multiset as "if (v > a) b = a, a = v; else if (v > b) b = v;", without the
    // branches the lanes of a GPU warp would take apart.
    const float v = choice(e);
    b = fmaxf(b, fminf(a, v));
    a = fmaxf(a, v);
  }
  return a + (end - begin > 1 ? b : 0.0f);
}

/// A token's top-k experts (ids, best first; ties to the lower id) and their weights.
/// `bias` (or null) is added to the scores for the choice only (DeepSeek's correction bias).
QGEMM_HOST_DEVICE void moe_route(const float* logits, const float* bias, const MoeRouting& r,
                                 i32* ids, float* weights) {
  // Choice values: the logit itself for softmax (monotonic in the probability), else the
  // sigmoid plus the bias.
  const auto score = [&](int e) {
    return r.sigmoid ? 1.0f / (1.0f + expf(-logits[e])) : logits[e];
  };
  const auto choice = [&](int e) { return score(e) + (bias != nullptr ? bias[e] : 0.0f); };
  // Grouped top-k: a group is eligible if its top-2 choice sum is among the best top_groups.
  u32 group_ok = 0xffffffffu;  // bit g: group g eligible (at most 32 groups)
  const int per_group = r.groups > 1 ? r.experts / r.groups : r.experts;
  if (r.groups > 1) {
    // NOTE: sums recomputed per pick instead of kept in an array, which would live in local
    // memory (a stack frame) on the GPU; routing is a small part of the layer.
    const auto group_sum = [&](int g) {
      return moe_group_top2_sum(choice, g * per_group, (g + 1) * per_group);
    };
    group_ok = 0;
    for (int t = 0; t < r.top_groups; ++t) {
      int best = -1;
      float best_sum = 0.0f;
      for (int g = 0; g < r.groups; ++g) {
        if (group_ok >> g & 1u) continue;
        const float sum = group_sum(g);
        if (best < 0 || sum > best_sum) best = g, best_sum = sum;
      }
      group_ok |= 1u << best;
    }
  }
  // Top-k by repeated arg-max over the eligible experts not yet taken.
  for (int j = 0; j < r.top_k; ++j) {
    int best = -1;
    float best_v = 0.0f;
    for (int e = 0; e < r.experts; ++e) {
      if (!(group_ok >> (e / per_group) & 1u)) continue;
      bool taken = false;
      for (int i = 0; i < j; ++i) taken |= ids[i] == e;
      if (taken) continue;
      const float v = choice(e);
      if (best < 0 || v > best_v) best = e, best_v = v;
    }
    ids[j] = best;
  }
  // Weights: softmax probabilities (over all experts) or sigmoid scores, then renormalized.
  float total = 0.0f, top = 0.0f;
  if (!r.sigmoid) {
    float max_logit = logits[0];
    for (int e = 1; e < r.experts; ++e) max_logit = fmaxf(max_logit, logits[e]);
    for (int e = 0; e < r.experts; ++e) total += expf(logits[e] - max_logit);
    for (int j = 0; j < r.top_k; ++j) weights[j] = expf(logits[ids[j]] - max_logit) / total;
  } else {
    for (int j = 0; j < r.top_k; ++j) weights[j] = score(ids[j]);
  }
  for (int j = 0; j < r.top_k; ++j) top += weights[j];
  for (int j = 0; j < r.top_k; ++j)
    weights[j] = (r.renormalize ? weights[j] / top : weights[j]) * r.scale;
}

}  // namespace qgemm
