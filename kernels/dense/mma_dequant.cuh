// Expands a weight packed for the mma GEMM (dense/mma_layout.cuh) into a dense fp16/bf16
// matrix [n][ldo] with every scale applied, for the large-M path that hands the product to
// cuBLAS. Uses the same codec as the GEMM, so both read one packed copy of the weight.
//
// One warp expands one (16-row tile, K unit) at a time: it reads the unit with 16-byte loads,
// decodes each lane's fragment pairs, scales them in fp32 and writes them as 4-byte pairs.
#pragma once

#include "common/base.cuh"
#include "common/static_for.cuh"
#include "dense/mma_dequant_params.cuh"
#include "dense/mma_layout.cuh"
#include "dequant/weight_codec.cuh"
#include "ptx/half2.cuh"

namespace qgemm {

template <class Cfg>
struct MmaDequant {
  static constexpr Elem kAct = Cfg::kAct;
  static constexpr int kBits = Cfg::kBits;
  static constexpr int kSteps = mma_layout::unit_steps(kBits);
  static constexpr int kUnitK = mma_layout::unit_k(kBits);
  static constexpr int kWords = mma_layout::unit_words(kBits);
  static constexpr int kUnitBytes = mma_layout::unit_bytes(kBits);
  static constexpr bool kGroups = Cfg::kGroupK > 0;

  /// The group scale of `row` (g or g+8 of the tile, by `upper`) for table entry `at`.
  static QGEMM_DEVICE float group_scale(const MmaDequantParams& p, i64 at, bool upper) {
    if constexpr (Cfg::kScaleElem == static_cast<int>(Elem::kFp32)) {
      return static_cast<const float*>(p.scales)[2 * at + (upper ? 1 : 0)];
    } else {
      constexpr Elem kS =
          Cfg::kScaleElem == static_cast<int>(Elem::kBf16) ? Elem::kBf16 : Elem::kFp16;
      const u32 s = static_cast<const u32*>(p.scales)[at];
      return half_to_float<kS>(static_cast<u16>(upper ? s >> 16 : s & 0xffffu));
    }
  }

  static QGEMM_DEVICE void run(const MmaDequantParams& p) {
    const int lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;
    const i64 warps = static_cast<i64>(gridDim.x) * (blockDim.x / 32);
    const i64 units = static_cast<i64>(p.n_tiles) * p.k_units;
    for (i64 w = blockIdx.x * static_cast<i64>(blockDim.x / 32) + threadIdx.x / 32; w < units;
         w += warps) {
      const int nt = static_cast<int>(w / p.k_units), ku = static_cast<int>(w % p.k_units);
      u32 words[kWords];
      load_unit_words<kBits>(p.weights + w * kUnitBytes + lane * 16, words);
      static_for<0, kSteps>([&](auto s_) {
        constexpr int s = decltype(s_)::value;
        static_for<0, 4>([&](auto r_) {
          constexpr int r = decltype(r_)::value;
          const int row = nt * 16 + g + 8 * (r & 1);
          const int col = ku * kUnitK + s * 16 + 2 * t + 8 * (r >> 1);
          if (row >= p.n || col >= p.k) return;
          u32 v = decode_weight_pair<Cfg, s * 4 + r>(words);
          float scale = p.row_scale != nullptr ? p.row_scale[row] : 1.0f;
          float zero = 0.0f;
          if constexpr (kGroups) {
            const i64 at = (static_cast<i64>(nt) * p.groups + col / Cfg::kGroupK) * 8 + g;
            if constexpr (Cfg::kZeroTable == 1) {
              const u32 z = static_cast<const u32*>(p.zeros)[at];
              v = hfma2<kAct>(r & 1 ? high_half_both(z) : low_half_both(z),
                              exact_half2_bits<kAct>(-1.0), v);
            } else if constexpr (Cfg::kZeroTable == 2) {
              zero = static_cast<const float*>(p.zeros)[2 * at + (r & 1)];
            }
            scale *= group_scale(p, at, r & 1);
          }
          const float lo = (half_to_float<kAct>(static_cast<u16>(v & 0xffffu)) - zero) * scale;
          const float hi = (half_to_float<kAct>(static_cast<u16>(v >> 16)) - zero) * scale;
          u16* out = p.out + static_cast<i64>(row) * p.ldo + col;
          if (col + 1 < p.k) {
            *reinterpret_cast<u32*>(out) = pack_half2<kAct>(lo, hi);
          } else {
            *out = static_cast<u16>(pack_half2<kAct>(lo, 0.0f));
          }
        });
      });
    }
  }
};

template <class Cfg>
__global__ void __launch_bounds__(256) mma_dequant_kernel(const MmaDequantParams p) {
  MmaDequant<Cfg>::run(p);
}

}  // namespace qgemm
