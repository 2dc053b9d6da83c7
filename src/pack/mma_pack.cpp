#include "pack/mma_pack.h"

#include <cmath>
#include <cstring>
#include <vector>

#include "dense/mma_layout.cuh"
#include "util/parallel.h"
#include "util/error.h"

namespace qgemm {
namespace {

// Where one element's bits go: the lane and pair of its A fragment (see mma_layout.cuh).
struct Slot {
  int64_t unit;  // k unit
  int lane;
  int pair;  // q = 4 * step + r
  int half;  // 0 = even k (low half), 1 = odd k
};

Slot slot_of(int bits, int64_t row, int64_t col) {
  const int unit_k = mma_layout::unit_k(bits);
  const int r16 = static_cast<int>(row % 16);
  const int kk = static_cast<int>(col % unit_k);
  const int step = kk / 16, k16 = kk % 16;
  const int g = r16 % 8, row_hi = r16 / 8;
  const int k_hi = k16 / 8, kl = k16 % 8;
  return {col / unit_k, g * 4 + kl / 2, step * 4 + row_hi + 2 * k_hi, kl % 2};
}

// Where code bits b .. b + run - 1 of a slot lie: the 32-bit word of the packed array, the bit
// offset inside it, and the run length.
struct Place {
  int64_t word;
  int bit, run;
};

Place code_place(int bits, int64_t n_tile, int k_units, const Slot& s, int b) {
  const mma_layout::CodeBits c = mma_layout::code_bits(bits, s.pair, b);
  const int64_t unit_words = mma_layout::unit_bytes(bits) / 4;
  // Vector v of the unit is 512 bytes: 32 lanes x 4 words.
  return {(n_tile * k_units + s.unit) * unit_words + (c.word / 4) * 128 + s.lane * 4 + c.word % 4,
          s.half * 16 + c.bit, c.run};
}

// The code as stored: offset binary for signed integers, raw bits otherwise.
uint32_t stored_code(const WeightFormat& f, uint32_t code) {
  if (f.type.type_class != TypeClass::kSignedInt) return code;
  return (code + (1u << (f.type.bits - 1))) & ((1u << f.type.bits) - 1);
}

uint32_t canonical_code(const WeightFormat& f, uint32_t stored) {
  if (f.type.type_class != TypeClass::kSignedInt) return stored;
  return (stored - (1u << (f.type.bits - 1))) & ((1u << f.type.bits) - 1);
}

// A half-precision table value, or an error when it would not be a normal number.
Expected<uint16_t> to_half(DType half_type, double v, const char* what) {
  const uint32_t code = encode(half_type, v);
  const double back = decode(half_type, code);
  const double min_normal = std::ldexp(1.0, 1 - half_type.exponent_bias());
  if (v != 0 && (!std::isfinite(back) || std::fabs(back) < min_normal))
    return unsupported(str(what, " ", v, " is outside the normal range of ", half_type.name(),
                           ", the jit kernels' compute type"));
  return static_cast<uint16_t>(code);
}

}  // namespace

Expected<MmaPackedWeight> pack_mma(const QuantizedWeight& w, int64_t expert, DType half_type) {
  if (expert < 0 || expert >= w.experts)
    return invalid_argument(str("pack_mma: expert ", expert, " is outside 0..", w.experts - 1));
  QGEMM_RETURN_IF_ERROR(w.validate_expert(expert));
  if (!(half_type == DType::fp16() || half_type == DType::bf16()))
    return invalid_argument(str("pack_mma: tables are fp16 or bf16, not ", half_type.name()));
  const WeightFormat& f = w.format;
  MmaPackedWeight p;
  p.bits = f.type.bits;
  p.n = w.n;
  p.k = w.k;
  p.half_type = half_type;
  p.n_tiles = static_cast<int>((w.n + 15) / 16);
  const int unit_k = mma_layout::unit_k(p.bits);
  p.k_units = static_cast<int>((w.k + unit_k - 1) / unit_k);
  // Zero points live in the group tables: channel and tensor scales with zero points become
  // one group spanning the row (mma_layout::kWholeRowGroupK).
  const bool whole_row = f.has_zero_points() && !f.has_group_scales();
  const bool grouped = f.has_group_scales() || whole_row;
  if (whole_row && int64_t(p.k_units) * unit_k > mma_layout::kWholeRowGroupK)
    return unsupported(str("pack_mma: ", f.to_string(), ": K=", w.k,
                           " is longer than the mma layout's whole-row group (",
                           mma_layout::kWholeRowGroupK, ") that holds its zero points"));
  if (grouped) {
    p.group_k = mma_table_group_k(f);
    p.groups = static_cast<int>((int64_t(p.k_units) * unit_k + p.group_k - 1) / p.group_k);
  }
  p.codes.assign(int64_t(p.n_tiles) * p.k_units * mma_layout::unit_bytes(p.bits) / 4, 0u);

  // Codes. Every unit of every tile packs alike: the pieces of the code at (row r of the
  // 16-row tile, k of the unit) are looked up, not recomputed per element. Tiles are
  // independent, so they are packed in parallel.
  struct Piece {
    int32_t word;      // in the unit
    uint8_t bit, run;  // where in the word, how many code bits
    uint8_t b;         // the first of them
  };
  const int64_t unit_words = mma_layout::unit_bytes(p.bits) / 4;
  std::vector<Piece> pieces;
  std::vector<int32_t> first(16 * unit_k + 1, 0);  // pieces of element (r, kk): first[i] ..
  for (int r = 0; r < 16; ++r)
    for (int kk = 0; kk < unit_k; ++kk) {
      const Slot s = slot_of(p.bits, r, kk);
      for (int b = 0; b < p.bits;) {
        const Place at = code_place(p.bits, 0, 1, s, b);
        pieces.push_back({static_cast<int32_t>(at.word), static_cast<uint8_t>(at.bit),
                          static_cast<uint8_t>(at.run), static_cast<uint8_t>(b)});
        b += at.run;
      }
      first[r * unit_k + kk + 1] = static_cast<int32_t>(pieces.size());
    }
  uint32_t stored[256];
  for (uint32_t c = 0; c < (1u << p.bits); ++c) stored[c] = stored_code(f, c);
  // Row `row`'s codes as stored, one byte each, from QuantizedWeight's little-endian bit stream.
  auto unpack_row = [&](int64_t row, uint8_t* out) {
    const uint8_t* src = w.codes.data() + (expert * w.n + row) * w.row_bytes();
    int64_t col = 0;
    if (p.bits == 8) {
      for (; col < w.k; ++col) out[col] = static_cast<uint8_t>(stored[src[col]]);
    } else if (p.bits == 4) {  // two codes a byte, the first in the low nibble
      for (; col + 1 < w.k; col += 2, ++src) {
        out[col] = static_cast<uint8_t>(stored[*src & 15u]);
        out[col + 1] = static_cast<uint8_t>(stored[*src >> 4]);
      }
    }
    uint64_t acc = 0;
    int have = 0;
    for (; col < w.k; ++col) {
      if (have < p.bits) {
        acc |= uint64_t(*src++) << have;
        have += 8;
      }
      out[col] = static_cast<uint8_t>(stored[acc & ((1u << p.bits) - 1)]);
      acc >>= p.bits;
      have -= p.bits;
    }
  };
  // Codes that never split across words (2-, 4- and 8-bit): each word of a unit gathers whole
  // codes and is written once. Which (row, k) of the unit each of its codes comes from:
  bool single_piece = int64_t(pieces.size()) == 16 * unit_k;
  const int codes_per_word = 32 / p.bits;
  struct WordCode {
    int32_t at;   // r * unit_k + kk: the code's place in the unit's codes
    int32_t bit;  // where it goes in the word
  };
  std::vector<WordCode> word_codes;
  if (single_piece) {
    word_codes.resize(unit_words * codes_per_word);
    std::vector<int> filled(unit_words, 0);
    for (int r = 0; r < 16; ++r)
      for (int kk = 0; kk < unit_k; ++kk) {
        const Piece& e = pieces[r * unit_k + kk];
        if (filled[e.word] < codes_per_word)
          word_codes[e.word * codes_per_word + filled[e.word]] = {r * unit_k + kk, e.bit};
        ++filled[e.word];
      }
    // Every word full, with whole codes in each byte: otherwise the element-wise path.
    for (int n_codes : filled) single_piece = single_piece && n_codes == codes_per_word;
    single_piece = single_piece && (p.bits == 2 || p.bits == 4 || p.bits == 8);
  }
  parallel_for(p.n_tiles, 4, [&](int64_t begin, int64_t end) {
    if (single_piece) {
      // A unit's 16 x unit_k codes at a time (they stay in L1), zero past K and past N:
      // padding packs as zero bits.
      std::vector<uint8_t> unit_codes(16 * unit_k);
      auto pack_tiles = [&]<int kBits>() {
        constexpr int kPerByte = 8 / kBits, kCodes = 32 / kBits;
        // A byte of the row's bit stream as its kPerByte stored codes, one per byte.
        uint32_t byte_codes[256];
        for (uint32_t b = 0; b < 256; ++b) {
          byte_codes[b] = 0;
          for (int j = 0; j < kPerByte; ++j)
            byte_codes[b] |= stored[(b >> (j * kBits)) & ((1u << kBits) - 1)] << (8 * j);
        }
        for (int64_t nt = begin; nt < end; ++nt) {
          uint32_t* words = p.codes.data() + nt * p.k_units * unit_words;
          const int rows = static_cast<int>(std::min<int64_t>(16, w.n - nt * 16));
          for (int64_t unit = 0; unit < p.k_units; ++unit, words += unit_words) {
            const int64_t col0 = unit * unit_k;
            const int64_t count = std::min<int64_t>(unit_k, w.k - col0);
            if (rows < 16 || count < unit_k)
              std::fill(unit_codes.begin(), unit_codes.end(), uint8_t{0});
            for (int r = 0; r < rows; ++r) {
              const uint8_t* src =
                  w.codes.data() + (expert * w.n + nt * 16 + r) * w.row_bytes() + col0 / kPerByte;
              uint8_t* out = unit_codes.data() + r * unit_k;
              const int64_t bytes = (count + kPerByte - 1) / kPerByte;
              for (int64_t i = 0; i < bytes; ++i)
                std::memcpy(out + i * kPerByte, &byte_codes[src[i]], kPerByte);
              // The last byte's codes past K are not the weight's.
              std::fill(out + count, out + unit_k, uint8_t{0});
            }
            const WordCode* wc = word_codes.data();
            for (int64_t i = 0; i < unit_words; ++i, wc += kCodes) {
              uint32_t word = 0;
#pragma GCC unroll 16
              for (int j = 0; j < kCodes; ++j) word |= uint32_t(unit_codes[wc[j].at]) << wc[j].bit;
              words[i] = word;
            }
          }
        }
      };
      if (p.bits == 2)
        pack_tiles.template operator()<2>();
      else if (p.bits == 4)
        pack_tiles.template operator()<4>();
      else
        pack_tiles.template operator()<8>();
      return;
    }
    std::vector<uint8_t> row_codes(w.k);
    for (int64_t nt = begin; nt < end; ++nt)
      for (int64_t row = nt * 16; row < std::min<int64_t>(w.n, nt * 16 + 16); ++row) {
        unpack_row(row, row_codes.data());
        const int r = static_cast<int>(row % 16);
        uint32_t* tile_words = p.codes.data() + nt * p.k_units * unit_words;
        for (int64_t unit = 0, col = 0; col < w.k; ++unit) {
          uint32_t* words = tile_words + unit * unit_words;
          const Piece* e = pieces.data();
          for (int kk = 0; kk < unit_k && col < w.k; ++kk, ++col) {
            const uint32_t u = row_codes[col];
            for (int i = first[r * unit_k + kk]; i < first[r * unit_k + kk + 1]; ++i)
              words[e[i].word] |= ((u >> e[i].b) & ((1u << e[i].run) - 1)) << e[i].bit;
          }
        }
      }
  });

  // Group / block scale and zero-point tables, padded groups and rows hold zeros. Scales keep
  // their exact value (the table type holds the scale type). Integer zero points are subtracted
  // before the MMA in the activation type (exact); float ones are kept as fp32 and subtracted
  // in fp32.
  if (grouped) {
    p.scale_type = mma_scale_table_type(f.scale_type);
    const int words_per_pair = p.scale_type == DType::fp32() ? 2 : 1;
    p.scales.assign(int64_t(p.n_tiles) * p.groups * 8 * words_per_pair, 0u);
    const bool float_zero = f.zero_point == ZeroPointKind::kFloat;
    if (f.has_zero_points())
      p.zeros.assign(int64_t(p.n_tiles) * p.groups * 8 * (float_zero ? 2 : 1), 0u);
    // Table groups lie inside one format group each (K is a multiple of both). Rows r and r + 8
    // of a 16-row tile share words, so tiles are the unit of parallel work; a zero point outside
    // the half type's range is reported for the first tile that has one.
    const int64_t real_groups = whole_row ? 1 : w.k / p.group_k;
    std::vector<Status> tile_errors(p.n_tiles);
    parallel_for(p.n_tiles, 16, [&](int64_t begin, int64_t end) {
      for (int64_t nt = begin; nt < end; ++nt)
        for (int64_t row = nt * 16; row < std::min<int64_t>(w.n, nt * 16 + 16); ++row)
          for (int64_t gi = 0; gi < real_groups; ++gi) {
            const int64_t si = w.scale_index(expert, row, whole_row ? 0 : gi * p.group_k);
            const int64_t at = (row / 16 * p.groups + gi) * 8 + row % 8;
            const bool upper = (row % 16) >= 8;
            if (words_per_pair == 2) {
              std::memcpy(&p.scales[2 * at + (upper ? 1 : 0)], &w.scales[si], 4);
            } else {
              p.scales[at] |= encode(p.scale_type, w.scales[si]) << (upper ? 16 : 0);
            }
            if (float_zero) {
              std::memcpy(&p.zeros[2 * at + (upper ? 1 : 0)], &w.zeros[si], 4);
            } else if (f.has_zero_points()) {
              auto z = to_half(half_type, w.zeros[si], "zero point");
              if (!z) {
                tile_errors[nt] = z.status();
                return;
              }
              p.zeros[at] |= uint32_t(*z) << (upper ? 16 : 0);
            }
          }
    });
    for (const Status& e : tile_errors) QGEMM_RETURN_IF_ERROR(e);
  }
  // Channel, tensor (without zero points) and global scales: one fp32 factor per row, applied
  // after the MMA.
  const bool row_scales =
      (f.scale_kind == ScaleKind::kChannel || f.scale_kind == ScaleKind::kTensor) && !whole_row;
  if (row_scales || f.global_scale) {
    p.row_scale.assign(w.n, 1.0f);
    for (int64_t row = 0; row < w.n; ++row) {
      double factor = 1;
      if (row_scales) factor *= w.scales[w.scale_index(expert, row, 0)];
      if (f.global_scale) factor *= w.global[expert];
      p.row_scale[row] = static_cast<float>(factor);
    }
  }
  return p;
}

std::vector<uint32_t> unpack_mma_codes(const MmaPackedWeight& p, const WeightFormat& f) {
  std::vector<uint32_t> out(p.n * p.k);
  for (int64_t row = 0; row < p.n; ++row)
    for (int64_t col = 0; col < p.k; ++col) {
      const Slot s = slot_of(p.bits, row, col);
      uint32_t u = 0;
      for (int b = 0; b < p.bits;) {
        const Place at = code_place(p.bits, row / 16, p.k_units, s, b);
        u |= ((p.codes[at.word] >> at.bit) & ((1u << at.run) - 1)) << b;
        b += at.run;
      }
      out[row * p.k + col] = canonical_code(f, u);
    }
  return out;
}

double unpack_mma_scale(const MmaPackedWeight& p, int64_t row, int64_t col) {
  if (p.groups == 0) return 1.0;
  const int64_t at = (row / 16 * p.groups + col / p.group_k) * 8 + row % 8;
  const bool upper = (row % 16) >= 8;
  if (p.scale_type == DType::fp32()) {
    float v;
    std::memcpy(&v, &p.scales[2 * at + (upper ? 1 : 0)], 4);
    return v;
  }
  const uint32_t pair = p.scales[at];
  return decode(p.scale_type, upper ? pair >> 16 : pair & 0xffff);
}

double unpack_mma_zero(const MmaPackedWeight& p, int64_t row, int64_t col) {
  if (p.zeros.empty()) return 0.0;
  const int64_t at = (row / 16 * p.groups + col / p.group_k) * 8 + row % 8;
  const bool upper = (row % 16) >= 8;
  if (p.zeros.size() == size_t(p.n_tiles) * p.groups * 16) {  // fp32 pairs: float zero points
    float v;
    std::memcpy(&v, &p.zeros[2 * at + (upper ? 1 : 0)], 4);
    return v;
  }
  const uint32_t pair = p.zeros[at];
  return decode(p.half_type, upper ? pair >> 16 : pair & 0xffff);
}

int mma_table_group_k(const WeightFormat& f) {
  if (f.has_group_scales()) {
    const int g = f.group_k;
    const int pow2 = g & -g;
    return g % 16 == 0 && pow2 != g ? pow2 : g;
  }
  return f.has_zero_points() ? mma_layout::kWholeRowGroupK : 0;
}

DType mma_scale_table_type(DType scale_type) {
  // NOTE: e4m3 and e5m2 (subnormals included) are exact in fp16; ue8m0 needs bf16's range.
  if (scale_type == DType::bf16() || scale_type == DType::ue8m0()) return DType::bf16();
  if (scale_type == DType::fp32()) return DType::fp32();
  return DType::fp16();
}

}  // namespace qgemm
