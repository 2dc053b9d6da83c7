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
// numbered q = 4 s + r. A code of b bits is split into bit planes of 8, 4, 2 or 1 bits
// (b = 5 -> 4+1, 6 -> 4+2, 7 -> 4+2+1), lowest bits first. Plane p of width w stores
// 16 / w pairs per 32-bit word: pair i of the word puts the even-k element's bits at
// [i*w, i*w + w) of the low half and the odd-k element's at the same place in the high half, so
// one shift and one mask give a pair in both halves (the magic-number conversion then needs no
// further moves). Per lane and unit, plane p occupies kSteps * w / 4 consecutive words.
//
// 3-bit codes are kept whole instead ("triples"): each three consecutive words of a lane hold 16
// pairs, word j (0..2) pairs 5j .. 5j+4 of them as 3-bit fields at bits 3i of each half
// (i = 0..4), and bit 15 of each half of word j holds bit j of the 16th pair. A pair then costs
// one mask and one fma like a 4-bit one, where 2+1 planes cost two of each (the integer pipe is
// what wide-code decode is short of: int3/g128 N = 28672 M = 1 spent 36 us computing against
// 27 us copying, bench/NOTES.md).
//
// Codes are stored unsigned: intN as code + 2^(N-1) (offset binary), uintN as is, floats as
// their raw bits.
#pragma once

#include "common/base.cuh"

namespace qgemm {
namespace mma_layout {

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

/// Whether codes of this width are packed as triples (see above) rather than in planes.
QGEMM_HOST_DEVICE constexpr bool packs_triples(int bits) { return bits == 3; }

/// Bit planes of a code (triples count as one plane of 3 bits: a pair is one field).
QGEMM_HOST_DEVICE constexpr int plane_count(int bits) {
  return bits == 5 || bits == 6 ? 2 : bits == 7 ? 3 : 1;
}
/// Width of plane p (lowest bits first).
QGEMM_HOST_DEVICE constexpr int plane_bits(int bits, int p) {
  return bits == 5   ? (p == 0 ? 4 : 1)
         : bits == 6 ? (p == 0 ? 4 : 2)
         : bits == 7 ? (p == 0   ? 4
                        : p == 1 ? 2
                                 : 1)
                     : bits;
}
/// Lowest code bit held by plane p.
QGEMM_HOST_DEVICE constexpr int plane_shift(int bits, int p) {
  return p == 0 ? 0 : plane_shift(bits, p - 1) + plane_bits(bits, p - 1);
}
/// First word of plane p in a lane's unit data.
QGEMM_HOST_DEVICE constexpr int plane_word(int bits, int p) {
  return p == 0 ? 0 : plane_word(bits, p - 1) + unit_steps(bits) * plane_bits(bits, p - 1) / 4;
}
/// Pairs per 32-bit word in a plane of width w.
QGEMM_HOST_DEVICE constexpr int pairs_per_word(int w) { return 16 / w; }

/// Where code bits b .. b + run - 1 of pair `pair` lie in a lane's unit data: word `word`, from
/// bit `bit` of each half on.
struct CodeBits {
  int word, bit, run;
};
QGEMM_HOST_DEVICE constexpr CodeBits code_bits(int bits, int pair, int b) {
  if (packs_triples(bits)) {
    const int base = 3 * (pair / 16), i = pair % 16;
    return i < 15 ? CodeBits{base + i / 5, 3 * (i % 5) + b, 3 - b} : CodeBits{base + b, 15, 1};
  }
  int p = 0;
  while (p + 1 < plane_count(bits) && plane_shift(bits, p + 1) <= b) ++p;
  const int width = plane_bits(bits, p), within = b - plane_shift(bits, p);
  return {plane_word(bits, p) + pair / pairs_per_word(width),
          (pair % pairs_per_word(width)) * width + within, width - within};
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
