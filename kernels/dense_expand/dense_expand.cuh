// Expands a weight packed for the mma GEMM (dense/mma_layout.cuh) into a dense fp16/bf16
// matrix [n][ldo] with every scale applied, for the large-M path that hands the product to
// cuBLAS. Uses the same codec as the GEMM, so both read one packed copy of the weight.
//
// A warp expands one (16-row tile, K unit) item at a time. It issues every load of the item at
// once (the unit's codes, one scale / zero-point entry per lane and group, the two row scales),
// then goes through the unit in slices of four k-steps (64 columns):
//
//   decode, scale in fp32          stage in shared memory            write whole rows
//   lane (g,t) holds, per k-step:  tile[16][64 + 8 pad] (fp16/bf16)  LDS.128 + STG.128:
//     r=0: row g,   k 2t, 2t+1      pair r -> row g + 8(r&1),          lane l -> row 4i + l/8,
//     r=1: row g+8, k 2t, 2t+1        word 8j + 4(r>>1) + t            columns 8(l%8)..+7;
//     r=2: row g,   k 2t+8, 2t+9    (36-word pitch: a warp's 32       one instruction writes
//     r=3: row g+8, k 2t+8, 2t+9     words hit 32 banks)              4 whole 128-byte rows
//
// The math is the GEMM's: integer zero points are subtracted in fp16/bf16 (exact), float ones in
// fp32, then (v - zero) * (row_scale * group_scale) in fp32, rounded once to the output type.
#pragma once

#include "common/base.cuh"
#include "common/static_for.cuh"
#include "dense_expand/dense_expand_params.cuh"
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
  static constexpr int kGroupK = Cfg::kGroupK;
  static constexpr bool kGroups = kGroupK > 0;
  static constexpr int kSliceSteps = mma_dequant::kSliceK / 16;
  static constexpr int kSlices = kSteps / kSliceSteps;
  static constexpr int kPitch = mma_dequant::kSliceWords;
  static constexpr bool kFp32Scales = Cfg::kScaleElem == static_cast<int>(Elem::kFp32);
  static constexpr int kZeroTable = Cfg::kZeroTable;

  // Table entries per lane and unit ("slots"): mode 0 = no groups (row scale only), 1 = the unit
  // lies inside one group, 2 = the unit holds whole groups, 3 = neither (one slot per k-step).
  static constexpr int kSlotMode = !kGroups                ? 0
                                   : kGroupK % kUnitK == 0 ? 1
                                   : kUnitK % kGroupK == 0 ? 2
                                                           : 3;
  static constexpr int kSlots = kSlotMode <= 1 ? 1 : kSlotMode == 2 ? kUnitK / kGroupK : kSteps;
  static constexpr int kScaleWords = kFp32Scales ? 2 : 1;
  static constexpr int kZeroWords = kZeroTable == 2 ? 2 : 1;

  static_assert(kSteps % kSliceSteps == 0, "a unit must hold whole 64-column slices");
  static_assert(kGroupK % 16 == 0, "groups must hold whole mma k-steps");
  static_assert(kPitch * 4 % 16 == 0, "slice rows must stay 16-byte aligned");

  /// The slot of k-step `step` of the unit.
  static constexpr int slot_of(int step) {
    return kSlotMode <= 1 ? 0 : kSlotMode == 2 ? step * 16 / kGroupK : step;
  }

  /// Everything one lane reads from global memory for a unit: its codes, the row scales of rows
  /// g and g+8, and the raw scale / zero-point table entries of every slot.
  struct Fetched {
    u32 words[kWords];
    float row_scale[2];
    u32 scale[kSlots][kScaleWords];
    u32 zero[kSlots][kZeroWords];
  };

  /// Issues every load of unit (nt, ku); nothing waits for them here.
  static QGEMM_DEVICE void fetch(const MmaDequantParams& p, int nt, int ku, int lane, Fetched& f) {
    const int g = lane / 4;
    load_unit_words<kBits>(
        p.weights + (static_cast<i64>(nt) * p.k_units + ku) * kUnitBytes + lane * 16, f.words);
    const int row = nt * 16 + g;
    f.row_scale[0] = f.row_scale[1] = 1.0f;
    if (p.row_scale != nullptr) {
      if (row < p.n) f.row_scale[0] = __ldg(p.row_scale + row);
      if (row + 8 < p.n) f.row_scale[1] = __ldg(p.row_scale + row + 8);
    }
#pragma unroll
    for (int i = 0; i < kSlots; ++i) {
#pragma unroll
      for (int w = 0; w < kScaleWords; ++w) f.scale[i][w] = 0;
#pragma unroll
      for (int w = 0; w < kZeroWords; ++w) f.zero[i][w] = 0;
      if constexpr (kGroups) {
        const int k0 = ku * kUnitK;
        const int group = kSlotMode == 1   ? k0 / kGroupK
                          : kSlotMode == 2 ? k0 / kGroupK + i
                                           : (k0 + i * 16) / kGroupK;
        const i64 at = (static_cast<i64>(nt) * p.groups + group) * 8 + g;
        if constexpr (kFp32Scales) {
          const uint2 v = __ldg(static_cast<const uint2*>(p.scales) + at);
          f.scale[i][0] = v.x;
          f.scale[i][1] = v.y;
        } else {
          f.scale[i][0] = __ldg(static_cast<const u32*>(p.scales) + at);
        }
        if constexpr (kZeroTable == 1) {
          f.zero[i][0] = __ldg(static_cast<const u32*>(p.zeros) + at);
        } else if constexpr (kZeroTable == 2) {
          const uint2 z = __ldg(static_cast<const uint2*>(p.zeros) + at);
          f.zero[i][0] = z.x;
          f.zero[i][1] = z.y;
        }
      }
    }
  }

  /// The fp32 scale of row g (g+8 when `upper`) in `slot`: the GEMM's row_scale * group_scale.
  static QGEMM_DEVICE float slot_scale(const Fetched& f, int slot, int upper) {
    float scale = f.row_scale[upper];
    if constexpr (kFp32Scales) {
      scale *= __uint_as_float(f.scale[slot][upper]);
    } else if constexpr (kGroups) {
      constexpr Elem kS =
          Cfg::kScaleElem == static_cast<int>(Elem::kBf16) ? Elem::kBf16 : Elem::kFp16;
      const u32 pair = f.scale[slot][0];
      scale *= half_to_float<kS>(static_cast<u16>(upper ? pair >> 16 : pair & 0xffffu));
    }
    return scale;
  }

  /// Writes 8 columns of one row: one 16-byte store, or element by element at the end of K.
  static QGEMM_DEVICE void store_row_chunk(u16* out, int col, int k, const uint4& x) {
    if (col + 8 <= k) {
      *reinterpret_cast<uint4*>(out) = x;
      return;
    }
    const u32 w[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
    for (int e = 0; e < 8; ++e)
      if (col + e < k) out[e] = static_cast<u16>(w[e / 2] >> (16 * (e % 2)));
  }

  static QGEMM_DEVICE void run(const MmaDequantParams& p, u32* tile) {
    const int lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;
    const i64 items = mma_dequant::items(p.n_tiles, p.k_units);
    const i64 warps = static_cast<i64>(gridDim.x) * mma_dequant::kWarps;
    for (i64 item = blockIdx.x * static_cast<i64>(mma_dequant::kWarps) + threadIdx.x / 32;
         item < items; item += warps) {
      const int nt = static_cast<int>(item / p.k_units), ku = static_cast<int>(item % p.k_units);
      Fetched f;
      fetch(p, nt, ku, lane, f);
      float scale[kSlots][2];
#pragma unroll
      for (int i = 0; i < kSlots; ++i) {
        scale[i][0] = slot_scale(f, i, 0);
        scale[i][1] = slot_scale(f, i, 1);
      }

      static_for<0, kSlices>([&](auto sl_) {
        constexpr int sl = decltype(sl_)::value;
        const int slice_k0 = ku * kUnitK + sl * mma_dequant::kSliceK;
        if (slice_k0 >= p.k) return;  // warp-uniform: past the end of K

        // Decode and scale four k-steps into the slice tile, in fragment order.
        static_for<0, kSliceSteps * 4>([&](auto jr_) {
          constexpr int j = decltype(jr_)::value / 4, r = decltype(jr_)::value % 4;
          constexpr int s = sl * kSliceSteps + j;
          constexpr int slot = slot_of(s);
          u32 v = decode_weight_pair<Cfg, s * 4 + r>(f.words);
          float zero = 0.0f;
          if constexpr (kZeroTable == 1) {
            const u32 z = f.zero[slot][0];
            v = hfma2<kAct>(r & 1 ? high_half_both(z) : low_half_both(z),
                            exact_half2_bits<kAct>(-1.0), v);
          } else if constexpr (kZeroTable == 2) {
            zero = __uint_as_float(f.zero[slot][r & 1]);
          }
          const float lo =
              (half_to_float<kAct>(static_cast<u16>(v & 0xffffu)) - zero) * scale[slot][r & 1];
          const float hi =
              (half_to_float<kAct>(static_cast<u16>(v >> 16)) - zero) * scale[slot][r & 1];
          tile[(g + 8 * (r & 1)) * kPitch + j * 8 + 4 * (r >> 1) + t] = pack_half2<kAct>(lo, hi);
        });
        __syncwarp();

        // Write the slice back as whole rows: each instruction covers 4 rows x 128 bytes.
#pragma unroll
        for (int i = 0; i < 4; ++i) {
          const int row = 4 * i + lane / 8, c = lane % 8;
          const uint4 x = *reinterpret_cast<const uint4*>(tile + row * kPitch + 4 * c);
          const int out_row = nt * 16 + row, col = slice_k0 + 8 * c;
          if (out_row < p.n && col < p.k)
            store_row_chunk(p.out + static_cast<i64>(out_row) * p.ldo + col, col, p.k, x);
        }
        __syncwarp();
      });
    }
  }
};

template <class Cfg>
__global__ void __launch_bounds__(mma_dequant::kThreads, mma_dequant::kBlocksPerSm)
    mma_dequant_kernel(const MmaDequantParams p) {
  __shared__ __align__(16) u32 tiles[mma_dequant::kWarps][16 * mma_dequant::kSliceWords];
  MmaDequant<Cfg>::run(p, tiles[threadIdx.x / 32]);
}

}  // namespace qgemm
