// Where the bits of a pair of codes lie in a lane's packed unit words, and how the integer
// decoder reaches them: plain constants, shared by the kernels and the host tests.
#pragma once

#include "common/base.cuh"
#include "dense/mma_layout.cuh"

namespace qgemm {

/// Where pair Q of kBits-bit codes lies in a lane's unit words (mma_layout::code_bits), and how
/// to reach it with one shift.
///
/// NOTE: a field at bit position `pos` of each half is masked in place at offset r = pos - shift
/// and ORed into the magic constant M (fp16 1024 = 2^10, bf16 128 = 2^7, both with ulp 1),
/// giving exactly M + c * 2^r as long as c * 2^r < M. So one shift serves every field up to
/// r_max = log2(M) - kBits above it: for fp16 int4 a word's four pairs need a single shift by 8,
/// for bf16 int3 the fields at 0, 3 | 6, 9 | 12 take shifts 0, 6 and 12. A pair in the spare bits
/// (kSpread) is gathered piece by piece instead, at r = 0.
template <Elem kElem, int kBits, int Q>
struct FieldSlot {
  static constexpr mma_layout::CodeBits kAt = mma_layout::code_bits(kBits, Q, 0);
  static constexpr bool kSpread = kAt.run < kBits;
  static constexpr int kWord = kAt.word;
  static constexpr int kPos = kAt.bit;
  static constexpr int kReach = (kElem == Elem::kBf16 ? 7 : 10) - kBits;
  static constexpr int kBlock = (kReach > 0 ? kReach / kBits : 0) * kBits + kBits;
  static constexpr int kShift = kSpread ? 0 : kPos - kPos % kBlock;
  static constexpr int kR = kSpread ? 0 : kPos - kShift;
  static constexpr u32 kMask = ((1u << kBits) - 1) * 0x10001u;
};

}  // namespace qgemm
