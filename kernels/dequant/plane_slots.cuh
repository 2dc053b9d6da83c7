// Where the bits of a pair of codes lie in a lane's packed unit words, and how the integer
// decoder reaches them: plain constants, shared by the kernels and the host tests.
#pragma once

#include "common/base.cuh"
#include "dense/mma_layout.cuh"

namespace qgemm {

/// Where pair Q of plane P lies in a lane's unit words, and how to reach it with one shift.
///
/// NOTE: a pair at bit position `pos` of each half is masked in place at offset r = pos - shift
/// and ORed into the magic constant M (fp16 1024 = 2^10, bf16 128 = 2^7, both with ulp 1), giving
/// exactly M + c * 2^r as long as c * 2^r < M. So one shift serves every position up to r_max =
/// log2(M) - width, and for fp16 int4 a word's four pairs need a single shift by 8.
///
/// With kMinR > 0 the offsets run kMinR, kMinR + width, ... up to r_max instead (a shift can then
/// be to the left, kShift < 0): PlaneFold uses that to keep its sums small.
template <Elem kElem, int kBits, int P, int Q, int kMinR = 0>
struct PlaneSlot {
  static constexpr int kWidth = mma_layout::plane_bits(kBits, P);
  static constexpr int kPerWord = mma_layout::pairs_per_word(kWidth);
  static constexpr int kWord = mma_layout::plane_word(kBits, P) + Q / kPerWord;
  static constexpr int kPos = (Q % kPerWord) * kWidth;
  static constexpr int kReach = (kElem == Elem::kBf16 ? 7 : 10) - kWidth;
  static constexpr int kBlock =
      (kReach > kMinR ? (kReach - kMinR) / kWidth : 0) * kWidth + kWidth;
  static constexpr int kShift = kPos - kPos % kBlock - kMinR;
  static constexpr int kR = kPos - kShift;
  static constexpr u32 kMask = ((1u << kWidth) - 1) * 0x10001u;
};

/// Where pair Q of 3-bit codes lies in the triple layout (mma_layout::packs_triples), as
/// PlaneSlot for a plane of width 3: one shift serves fields up to r_max = log2(M) - 3 above it
/// (bf16: fields at 0, 3 | 6, 9 | 12 take shifts 0, 6, 12; fp16: 0, 3, 6 | 9, 12 take 0, 9). The
/// 16th pair of each group (kSplit) has bit j in bit 15 of word kWord + j of each half instead.
template <Elem kElem, int Q>
struct TripleSlot {
  static constexpr mma_layout::CodeBits kAt = mma_layout::code_bits(3, Q, 0);
  static constexpr bool kSplit = kAt.run == 1;
  static constexpr int kWord = kAt.word;
  static constexpr int kPos = kAt.bit;
  static constexpr int kBlock = ((kElem == Elem::kBf16 ? 7 : 10) - 3) / 3 * 3 + 3;
  static constexpr int kShift = kSplit ? 0 : kPos - kPos % kBlock;
  static constexpr int kR = kSplit ? 0 : kPos - kShift;
  static constexpr u32 kMask = 7u * 0x10001u;
};

/// Codes of several bit planes (5, 6, 7 bits) decode with one fma per plane instead of two
/// when the higher planes' magic offsets M 2^(shift_P - r_P) are subtracted up front, in plane
/// 0's addend: v = fma(M + c_0 2^r_0, 2^-r_0, -M 2^-r_0 - zero - sum_P M 2^(s_P - r_P)), then
/// v = fma(M + c_P 2^r_P, 2^(s_P - r_P), v) for each higher plane. Every intermediate is an
/// integer, exact while its magnitude stays within the half type's 2^(mantissa + 1); small r
/// make the offsets large, so each plane gets the lowest offset kMinR[P] that keeps the worst
/// case in range (fewest extra shifts). kOk is false where no choice works (then decode adds
/// planes the two-fma way); the host model tests check every code at every position.
template <Elem kElem, int kBits, int kConstZero>
struct PlaneFold {
  static constexpr int kPlanes = mma_layout::plane_count(kBits);
  static constexpr int kMantissa = kElem == Elem::kBf16 ? 7 : 10;
  static constexpr long long kLimit = 1LL << (kMantissa + 1);

  struct Choice {
    bool ok = false;
    int min_r[3] = {0, 0, 0};
  };

  /// The largest offset sum for minimum offsets r (reached at r = min_r of each plane).
  static constexpr long long worst(const int (&r)[3]) {
    long long sum = kConstZero + ((1LL << kMantissa) >> r[0]);
    for (int p = 1; p < kPlanes; ++p) {
      const int e = kMantissa + mma_layout::plane_shift(kBits, p) - r[p];
      sum += e >= 0 ? (1LL << e) : 0;
    }
    return sum;
  }

  /// Shifts per pair that plane p needs with offsets from min_r (distinct non-zero shifts of a
  /// word's pairs, per pair): what folding costs on the integer pipe.
  static constexpr double shifts_per_pair(int p, int min_r) {
    const int w = mma_layout::plane_bits(kBits, p), reach = kMantissa - w;
    const int block = (reach > min_r ? (reach - min_r) / w : 0) * w + w;
    int shifts = 0;
    for (int start = 0; start < 16; start += block) shifts += (start - min_r) != 0 ? 1 : 0;
    return double(shifts) / double(16 / w);
  }

  static constexpr Choice choose() {
    Choice best;
    double best_cost = 1e9;
    const int reach0 = kMantissa - mma_layout::plane_bits(kBits, 0);
    const int reach1 = kPlanes > 1 ? kMantissa - mma_layout::plane_bits(kBits, 1) : 0;
    const int reach2 = kPlanes > 2 ? kMantissa - mma_layout::plane_bits(kBits, 2) : 0;
    for (int a = 0; a <= reach0; ++a)
      for (int b = 0; b <= reach1; ++b)
        for (int c = 0; c <= reach2; ++c) {
          const int r[3] = {a, b, c};
          if (worst(r) > kLimit) continue;
          double cost = 0;
          for (int p = 0; p < kPlanes; ++p) cost += shifts_per_pair(p, r[p]) - shifts_per_pair(p, 0);
          if (cost >= best_cost) continue;
          best.ok = true;
          best.min_r[0] = a, best.min_r[1] = b, best.min_r[2] = c;
          best_cost = cost;
        }
    // NOTE: folding saves one fma per higher plane and pair; it is worth it only while the extra
    // shifts (integer pipe, which decode is short of) stay at half of that or less.
    best.ok = best.ok && best_cost <= 0.5 * (kPlanes - 1);
    return best;
  }

  static constexpr Choice kChoice = choose();
  // bf16's 8-bit plane goes as two nibbles (IntDecoder::plane_value): not folded.
  static constexpr bool kOk =
      kPlanes > 1 && kChoice.ok && !(kElem == Elem::kBf16 && mma_layout::plane_bits(kBits, 0) == 8);
  static constexpr int min_r(int p) { return kChoice.min_r[p]; }
};

}  // namespace qgemm
