// Packed weight layout of the mma.sync GEMM family, shared by the kernel and the host packer.
//
// Weights are cut into tiles of 16 rows (output channels n) x one "unit" of K. A unit holds
// kSteps mma k-steps of 16, so that every lane's codes for the unit fill whole 16-byte vectors:
//
//   packed[n_tile][k_unit][vector v][lane]   (16 bytes each; a warp reads 512 contiguous bytes)
//
// Lane (g = lane / 4, t = lane % 4) owns, per k-step s, the four A-fragment pairs of mma.m16n8k16:
//   pair r = 0: row g,   k 2t..2t+1      r = 1: row g+8, k 2t..2t+1
//   pair r = 2: row g,   k 2t+8..2t+9    r = 3: row g+8, k 2t+8..2t+9
// numbered q = 4 s + r. Codes are kept whole, as b-bit fields: a lane's unit words form groups
// of G = b / gcd(b, 16) words holding P = 16 G / b pairs (b = 1, 2, 4, 8: one word of 16 / b
// pairs; b = 3: 3 words, 16 pairs; 5: 5, 16; 6: 3, 8; 7: 7, 16). Word j of a group holds pairs
// F j .. F j + F - 1 (F = 16 / b fields per half-word) at bits [i b, i b + b) of each half
// (i = 0 .. F - 1): the even-k element in the low half, the odd-k element at the same place in
// the high half, so one shift and one mask give a pair in both halves, ready for the
// magic-number conversion. The S = 16 - F b spare bits at the top of each half of the group's
// words, taken word by word, hold the group's remaining P - F G pairs, b bits each, lowest bits
// first (b = 3: the 16th pair's bit j in bit 15 of word j). Whole fields cost one mask and one
// fma per pair, where bit planes (2+1, 4+1, 4+2, 4+2+1) cost one of each per plane (the integer
// pipe is what wide-code decode is short of: int3 decode spends longer computing than copying;
// docs/design.md, "whole fields").
//
// Codes are stored unsigned: intN as code + 2^(N-1) (offset binary), uintN as is, floats as
// their raw bits.
#pragma once

#include "common/base.cuh"

namespace qgemm {
namespace mma_layout {

/// K extent of the single scale group per row that channel and tensor scales take when the
/// format has zero points: zero points live in the group tables, so such a layer runs as one
/// group spanning the whole row (a power of two, so every stage size divides it; K up to it).
inline constexpr int kWholeRowGroupK = 1 << 20;

/// Mma k-steps per unit: the fewest (at least 4) that fill whole 16-byte vectors per lane.
QGEMM_HOST_DEVICE constexpr int unit_steps(int bits) {
  return (bits == 4 || bits == 8) ? 4 : (bits == 2 || bits == 6) ? 8 : 16;
}
QGEMM_HOST_DEVICE constexpr int unit_k(int bits) { return 16 * unit_steps(bits); }
/// 32-bit words per lane per unit.
QGEMM_HOST_DEVICE constexpr int unit_words(int bits) { return unit_steps(bits) * bits / 4; }
/// 16-byte vectors per lane per unit.
QGEMM_HOST_DEVICE constexpr int unit_vectors(int bits) { return unit_words(bits) / 4; }
/// Bytes of one 16-row tile for one unit.
QGEMM_HOST_DEVICE constexpr int unit_bytes(int bits) { return unit_vectors(bits) * 512; }

/// Field layout of b-bit codes (see above): words per group, pairs per group, fields per
/// half-word and the spare bits at the top of each half.
QGEMM_HOST_DEVICE constexpr int group_words(int bits) { return bits / (bits & -bits); }
QGEMM_HOST_DEVICE constexpr int group_pairs(int bits) { return 16 * group_words(bits) / bits; }
QGEMM_HOST_DEVICE constexpr int fields_per_half(int bits) { return 16 / bits; }
QGEMM_HOST_DEVICE constexpr int spare_bits(int bits) { return 16 - fields_per_half(bits) * bits; }

/// Where code bits b .. b + run - 1 of pair `pair` lie in a lane's unit data: word `word`, from
/// bit `bit` of each half on. A field holds all bits of its pair (run = bits - b); a pair in the
/// spare bits spreads over several words.
struct CodeBits {
  int word, bit, run;
};
QGEMM_HOST_DEVICE constexpr CodeBits code_bits(int bits, int pair, int b) {
  const int base = group_words(bits) * (pair / group_pairs(bits)), i = pair % group_pairs(bits);
  const int per_half = fields_per_half(bits), in_fields = per_half * group_words(bits);
  if (i < in_fields) return {base + i / per_half, bits * (i % per_half) + b, bits - b};
  const int spare = spare_bits(bits), at = (i - in_fields) * bits + b;
  const int run = spare - at % spare < bits - b ? spare - at % spare : bits - b;
  return {base + at / spare, per_half * bits + at % spare, run};
}

}  // namespace mma_layout
}  // namespace qgemm

namespace qgemm {
namespace mma_layout {

/// Bytes of one (row g, row g+8) scale pair in a table of element type `scale_elem` (an Elem).
QGEMM_HOST_DEVICE constexpr int scale_pair_bytes(int scale_elem) { return scale_elem == 2 ? 8 : 4; }

/// Bytes of one zero-point pair: kind 0 none, 1 integer zero points (fp16/bf16 pairs, exact),
/// 2 float zero points (fp32 pairs, subtracted in fp32 so they are not rounded to half).
QGEMM_HOST_DEVICE constexpr int zero_pair_bytes(int zero_kind) {
  return zero_kind == 0 ? 0 : zero_kind == 1 ? 4 : 8;
}

/// Shared-memory bytes of one pipeline stage of the mma GEMM: weights, activations, then the
/// scale table and the zero-point table; the kernel and the host launcher both use this.
QGEMM_HOST_DEVICE constexpr int stage_bytes(int bits, int tiles_cta, int units, int block_m,
                                            int groups_per_stage, int scale_elem, int zero_kind) {
  return tiles_cta * units * unit_bytes(bits) + block_m * units * unit_k(bits) * 2 +
         tiles_cta * groups_per_stage * 8 *
             (scale_pair_bytes(scale_elem) + zero_pair_bytes(zero_kind));
}

/// The wgmma variant's alignment: its activation tiles use the 128-byte swizzle, whose pattern
/// repeats every 1024 bytes and must start on a 1024-byte boundary.
constexpr int kWgmmaAlign = 1024;

/// Stage bytes of the wgmma variant: `stage_bytes` rounded up so every stage starts aligned.
QGEMM_HOST_DEVICE constexpr int wgmma_stage_bytes(int stage_bytes) {
  return (stage_bytes + kWgmmaAlign - 1) / kWgmmaAlign * kWgmmaAlign;
}

/// Dynamic shared memory of a kernel: the stage ring, plus for wgmma the slack that lets the
/// kernel round its base up to kWgmmaAlign (the launch guarantees less).
QGEMM_HOST_DEVICE constexpr int ring_bytes(int stage_bytes, int stages, bool wgmma) {
  return wgmma ? stages * wgmma_stage_bytes(stage_bytes) + kWgmmaAlign : stages * stage_bytes;
}

/// The warp-specialized kernel's mbarriers after the ring: `full` and `empty` per stage.
QGEMM_HOST_DEVICE constexpr int barrier_bytes(int stages, bool warp_specialized) {
  return warp_specialized ? 16 * stages : 0;
}

/// Scale groups whose tables one stage holds: one when the stage lies inside a group.
QGEMM_HOST_DEVICE constexpr int groups_per_stage(int group_k, int stage_k) {
  return group_k <= 0 ? 0 : (group_k >= stage_k ? 1 : stage_k / group_k);
}

}  // namespace mma_layout
}  // namespace qgemm
