#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "jit/kernel_spec.h"
#include "qgemm/device.h"
#include "qgemm/format.h"

namespace qgemm {

/// One kernel of the 8-bit-activation family (kernels/dense_act8/): e4m3 x e4m3 or int8 x int8
/// on sm_90a wgmma, both operands by TMA.
struct DenseAct8Config {
  bool int8 = false;
  int block_n = 128;     ///< tokens per CTA (8 .. 256, by 8)
  int stages = 6;        ///< 128-K stages in the ring
  int cluster_y = 1;     ///< 2: neighbouring token tiles share the weight tile (TMA multicast)
  int weight_scale = 1;  ///< 0 tensor, 1 channel, 2 blocks of 128 x 128
  int act_scale = 1;     ///< 0 tensor, 1 token, 2 groups of 128
  DType out = DType::bf16();
  std::string arch = "sm_90a";
  /// The grouped MoE family's tile (moe_grouped_act8_kernel): token rows gathered through a
  /// position list, one CTA per cluster, no K split.
  bool gathered = false;
  /// A gathered tile whose rows the layer copied in position order first (the quantizer writes
  /// them so), loaded by TMA as the dense tiles load theirs.
  bool sorted_rows = false;

  /// The config for an n x k layer of these formats at m tokens on a GPU of `sms` SMs.
  static DenseAct8Config for_layer(const WeightFormat& weight, const ActFormat& act, DType out,
                                   const std::string& arch, int64_t m, int64_t n, int64_t k,
                                   int sms);
  /// Every config for_layer gives for 1 <= m <= max_m (what a layer compiles up front).
  static std::vector<DenseAct8Config> all_for_layer(const WeightFormat& weight,
                                                    const ActFormat& act, DType out,
                                                    const std::string& arch, int64_t max_m,
                                                    int64_t n, int64_t k, int sms);
  std::string to_string() const;
  KernelSpec spec() const;
  int smem_bytes() const;
  friend bool operator==(const DenseAct8Config&, const DenseAct8Config&) = default;
};

/// Whether the family runs this layer; why not.
Support dense_act8_supports(const WeightFormat& weight, const ActFormat& act, DType out,
                            const DeviceInfo& device);

/// Tokens per CTA for m tokens of an n x k layer: the smallest tile that holds them, up to 128;
/// above, the tile of 128, 160 or 192 tokens dense_act8_time_ns estimates fastest
/// (QGEMM_ACT8_BLOCK_N=128, 160 or 192 forces one).
int dense_act8_block_n(bool int8, bool block_scales, int64_t m, int64_t n, int64_t k, int sms);

/// The cost model behind the choice: waves of CTAs times one CTA's time, from per-stage and
/// per-tile costs measured on an H200 (the constants in dense_act8.cpp).
double dense_act8_time_ns(bool int8, bool block_scales, int64_t m, int64_t n, int64_t k,
                          int block_n, int sms);

/// 128-K stages in the ring of a tile of `block_n` tokens.
int dense_act8_stages(int block_n);

/// K splits of an n x k layer at m tokens on `sms` SMs: enough CTAs for one wave (one CTA per
/// SM), each split keeping at least four stages.
int dense_act8_splits(int64_t n, int64_t m, int64_t k, int block_n, int sms);

/// CTAs per cluster along the tokens: 2 (sharing the weight tile) for unsplit tiles of at least
/// 128 tokens and at least two token tiles, else 1.
int dense_act8_cluster_y(int64_t n, int64_t m, int64_t k, int block_n, int sms);

/// A layer with quantized activations on the family's kernels (backend "jit").
Expected<std::unique_ptr<PreparedLayer>> build_dense_act8_layer(const QuantizedWeight& weight,
                                                                const LayerProblem& problem);

}  // namespace qgemm
