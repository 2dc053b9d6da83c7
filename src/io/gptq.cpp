#include "io/gptq.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "io/tensor_views.h"
#include "util/error.h"
#include "util/parallel.h"

namespace qgemm {

namespace {

// GPTQ packs codes and zero points as one little-endian bit stream per column of qweight (along
// K) and per row of qzeros (along N) in int32 words: a 3-bit field may straddle two words.
// Bits b .. b + bits - 1 of the stream whose word i is words(i).
template <typename Words>
uint32_t field_at(const Words& words, int64_t b, int bits) {
  const int64_t i = b / 32;
  const int off = static_cast<int>(b % 32);
  uint64_t v = words(i) >> off;
  if (off + bits > 32) v |= uint64_t(words(i + 1)) << (32 - off);
  return static_cast<uint32_t>(v & ((1u << bits) - 1));
}

// The word of a stream of `bits`-bit fields (32 fields fill `bits` words) with bit `which` of
// every field set that lies in word w of the period (which = 0: the fields' lowest bits).
uint32_t field_bits_in_word(int bits, int which, int64_t w) {
  uint32_t word = 0;
  for (int j = 0; j < 32; ++j) {
    const int p = j * bits + which;
    if (p / 32 == w % bits) word |= 1u << (p % 32);
  }
  return word;
}

}  // namespace

Expected<ImportedLinear> import_gptq_linear(const SafetensorsCheckpoint& c,
                                            const std::string& prefix, const GptqConfig& config) {
  const int bits = config.bits;
  if (bits != 2 && bits != 3 && bits != 4 && bits != 8)
    return unsupported(str("GPTQ layer '", prefix, "': ", bits,
                           "-bit codes; the importer reads 2, 3, 4 and 8 bits"));
  const uint32_t mask = (1u << bits) - 1;
  auto qweight = checkpoint_tensor(c, "GPTQ", prefix + ".qweight", {"I32"}, 2);
  auto qzeros = checkpoint_tensor(c, "GPTQ", prefix + ".qzeros", {"I32"}, 2);
  auto scales = checkpoint_tensor(c, "GPTQ", prefix + ".scales", {"F16", "BF16"}, 2);
  auto g_idx = checkpoint_tensor(c, "GPTQ", prefix + ".g_idx", {"I32"}, 1, false);
  for (const auto* t : {&qweight, &qzeros, &scales, &g_idx})
    if (!*t) return t->status();
  const SafetensorsTensor& qw = **qweight;
  const SafetensorsTensor& qz = **qzeros;
  const SafetensorsTensor& sc = **scales;
  // 32 / bits codes a word; 3-bit codes come 32 to every three words.
  const int64_t n = qw.shape[1], k = qw.shape[0] * 32 / bits;
  const int64_t groups = sc.shape[0];
  const int64_t group = config.group_size > 0 ? config.group_size : k;
  const auto shape_error = [&](const std::string& name, const std::string& want) {
    return invalid_argument(str("GPTQ layer: tensor '", prefix, ".", name,
                                "' has the wrong shape; ", want, " for K=", k, ", N=", n,
                                ", group ", group));
  };
  if (n == 0 || k == 0) return shape_error("qweight", "non-empty");
  if (qw.shape[0] * 32 % bits != 0)
    return shape_error("qweight",
                       str("rows a multiple of ", bits, " (32 codes in ", bits, " words)"));
  if (k % group != 0 || groups != k / group || sc.shape[1] != n)
    return shape_error("scales", str("expected [", k / group, ", ", n, "]"));
  if (qz.shape[0] != groups || qz.shape[1] * 32 != n * bits)
    return shape_error("qzeros", str("expected [", groups, ", ", n * bits, " / 32]"));
  if (*g_idx && (**g_idx).shape[0] != k) return shape_error("g_idx", str("expected [", k, "]"));

  // The group of each column of K, and the order that makes groups contiguous.
  std::vector<int32_t> group_of(k);
  for (int64_t i = 0; i < k; ++i) {
    group_of[i] = *g_idx ? int32_t(word_at(**g_idx, i)) : int32_t(i / group);
    if (group_of[i] < 0 || group_of[i] >= groups)
      return invalid_argument(str("GPTQ layer: tensor '", prefix, ".g_idx' names group ",
                                  group_of[i], " at column ", i, "; there are ", groups));
  }
  std::vector<int32_t> order(k);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return group_of[a] < group_of[b]; });
  for (int64_t i = 0; i < k; ++i)
    if (group_of[order[i]] != i / group)
      return invalid_argument(str("GPTQ layer: tensor '", prefix, ".g_idx' gives group ",
                                  group_of[order[i]], " other than ", group,
                                  " columns; every group must hold exactly ", group));
  bool reordered = false;
  for (int64_t i = 0; i < k; ++i) reordered |= order[i] != i;

  // Zero points: v1 stores each minus one. 2-, 4- and 8-bit fields are subtracted from the
  // packed word as a whole (GPTQModel and AutoGPTQ pack them so: a zero point of 0 borrows from
  // the next field); adding a one to every field of the word undoes it exactly, as GPTQModel's
  // own loader does. 3-bit fields straddle words, so GPTQModel shifts each field by itself,
  // modulo 8; so does this.
  std::vector<int32_t> zeros(groups * n);
  bool symmetric = true;
  const bool per_field = bits == 3;
  for (int64_t g = 0; g < groups; ++g) {
    const auto word = [&](int64_t i) {
      const uint32_t stored = word_at(qz, g * qz.shape[1] + i);
      return config.v2 || per_field ? stored : stored + field_bits_in_word(bits, 0, i);
    };
    for (int64_t col = 0; col < n; ++col) {
      uint32_t z = field_at(word, col * bits, bits);
      if (per_field && !config.v2) z = (z + 1) & mask;
      zeros[g * n + col] = int32_t(z);
      symmetric &= int32_t(z) == (1 << (bits - 1));
    }
  }

  ImportedLinear out;
  WeightFormat& f = out.weight.format;
  f.type = symmetric ? DType::int_bits(bits) : DType::uint_bits(bits);
  f.scale_kind = config.group_size > 0 ? ScaleKind::kGroup : ScaleKind::kChannel;
  f.group_k = config.group_size > 0 ? config.group_size : 0;
  f.scale_type = sc.dtype == "BF16" ? DType::bf16() : DType::fp16();
  if (!symmetric) {
    f.zero_point = ZeroPointKind::kInteger;
    f.zero_type = DType::fp16();
  }
  QuantizedWeight& w = out.weight;
  w.experts = 1, w.n = n, w.k = k;
  w.codes.assign(n * w.row_bytes(), 0);
  w.scales.assign(f.scale_rows(n) * f.scale_cols(k), 0.0f);
  if (!symmetric) w.zeros.assign(w.scales.size(), 0.0f);
  // Rows in blocks, the packed words read along N (contiguous) for each word row of K: codes
  // [block rows][K] in the checkpoint's order, then each row permuted to the canonical order and
  // packed, LSB first along K.
  const uint32_t flip = symmetric ? 1u << (bits - 1) : 0u;  // intN: two's complement
  const int64_t k_words = qw.shape[0];
  constexpr int64_t kBlockRows = 64;
  parallel_for((n + kBlockRows - 1) / kBlockRows, 1, [&](int64_t block_begin, int64_t block_end) {
    std::vector<uint8_t> codes(reordered ? kBlockRows * k : 0);
    for (int64_t block = block_begin; block < block_end; ++block) {
      const int64_t row0 = block * kBlockRows, rows = std::min(kBlockRows, n - row0);
      if (!reordered) {
        // In K's own order a column's words are the canonical row's bit stream as it is (top
        // bits flipped for intN).
        for (int64_t kw = 0; kw < k_words; ++kw) {
          const uint32_t flip_word = flip ? field_bits_in_word(bits, bits - 1, kw) : 0u;
          for (int64_t r = 0; r < rows; ++r) {
            uint32_t word;
            std::memcpy(&word, qw.data + 4 * (kw * n + row0 + r), 4);
            word ^= flip_word;
            std::memcpy(&w.codes[(row0 + r) * w.row_bytes() + 4 * kw], &word, 4);
          }
        }
      } else {
        for (int64_t r = 0; r < rows; ++r) {
          const auto column = [&](int64_t i) { return word_at(qw, i * n + row0 + r); };
          for (int64_t col = 0; col < k; ++col)
            codes[r * k + col] = uint8_t(field_at(column, col * bits, bits));
        }
        for (int64_t r = 0; r < rows; ++r) {
          const uint8_t* raw = &codes[r * k];
          uint8_t* dst = &w.codes[(row0 + r) * w.row_bytes()];
          uint64_t acc = 0;
          int have = 0;
          for (int64_t col = 0; col < k; ++col) {
            acc |= uint64_t((raw[order[col]] ^ flip) & mask) << have;
            have += bits;
            for (; have >= 8; have -= 8, acc >>= 8) *dst++ = uint8_t(acc);
          }
          if (have > 0) *dst = uint8_t(acc);
        }
      }
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t row = row0 + r;
        for (int64_t g = 0; g < groups; ++g) {
          const int64_t s = w.scale_index(0, row, g * group);
          w.scales[s] = value_at(sc, g * n + row);
          if (!symmetric) w.zeros[s] = float(zeros[g * n + row]);
        }
      }
    }
  });
  if (reordered) out.k_order = order;
  QGEMM_RETURN_IF_ERROR(read_bias(c, "GPTQ", prefix, n, out.bias));
  QGEMM_RETURN_IF_ERROR(w.validate());
  return out;
}

}  // namespace qgemm
