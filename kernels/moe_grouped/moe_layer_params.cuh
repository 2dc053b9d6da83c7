// Arguments of the MoE layer's kernels around its grouped GEMMs; plain data shared with the host.
#pragma once

#include "common/base.cuh"
#include "moe_grouped/moe_math.cuh"

namespace qgemm {

/// Threads per block of the routing, activation and reduce kernels.
constexpr int kMoeLayerThreads = 256;

/// moe_route_kernel: one warp per token, so at most 64 x 32 experts (a lane's taken mask).
constexpr int kMoeRouteMaxExperts = 2048;
struct MoeRouteParams {
  const float* logits;  ///< [tokens][routing.experts] fp32
  const float* bias;    ///< [routing.experts] correction bias, or null
  MoeRouting routing;
  i32 tokens;
  i32* ids;        ///< [tokens][top_k]
  float* weights;  ///< [tokens][top_k]
};

/// moe_activation_kernel: out[s][i] = act(gate, up) of row s of h ([rows][2 * inter]), gate and
/// up the halves of the row ([gate | up]) or its even and odd elements (interleaved).
struct MoeActivationParams {
  const u16* h;  ///< [rows][2 * inter] fp16/bf16
  u16* out;      ///< [rows][inter]
  i64 rows;
  i32 inter;
  i32 act;  ///< MoeAct
  i32 interleaved;
  float alpha, limit;
};

/// moe_reduce_kernel: out[t][n] = sum over j of weights[t][j] * y[t * top_k + j][n], in j order
/// (slots whose id is -1 or remote add nothing; their rows of y are zero).
struct MoeReduceParams {
  const u16* y;           ///< [tokens * top_k][n]
  const float* weights;   ///< [tokens][top_k]
  const i32* ids;         ///< [tokens][top_k] global ids
  const i32* expert_map;  ///< [global_experts] local expert or -1, or null
  i32 global_experts;
  i32 local_experts;
  u16* out;  ///< [tokens][n]
  i32 tokens, top_k, n;
};

}  // namespace qgemm
