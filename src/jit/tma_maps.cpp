#include "jit/tma_maps.h"

#include <cstring>

#include "dense/mma_layout.cuh"
#include "jit/cuda_driver.h"
#include "util/error.h"

namespace qgemm {

static_assert(sizeof(TmaMap) == sizeof(CUtensorMap) && alignof(TmaMap) == alignof(CUtensorMap),
              "TmaMap mirrors the driver's CUtensorMap");

namespace {

// A 2-D map of `rows` rows of `row_elems` elements, `pitch` bytes apart, in boxes of
// `box_elems` x `box_rows`.
Status encode_2d(const CudaDriver& driver, CUtensorMapDataType type, const void* base,
                 int64_t row_elems, int64_t rows, int64_t pitch, int box_elems, int box_rows,
                 CUtensorMapSwizzle swizzle, TmaMap* map) {
  const cuuint64_t dims[2] = {cuuint64_t(row_elems), cuuint64_t(rows)};
  const cuuint64_t strides[1] = {cuuint64_t(pitch)};
  const cuuint32_t box[2] = {cuuint32_t(box_elems), cuuint32_t(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  QGEMM_CU(&driver, cuTensorMapEncodeTiled, reinterpret_cast<CUtensorMap*>(map), type, 2,
           const_cast<void*>(base), dims, strides, box, element_strides,
           CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
           CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return Status();
}

// The codes of stages of more than 1 KB per 16-row tile (6-bit codes in 128-K units): 512-byte
// chunks along each tile's row, tile rows; a box is a stage's chunks of the CTA's tiles, so it
// lands in shared memory tile by tile as a 2-D box of a whole stage would.
Status encode_code_chunks(const CudaDriver& driver, const void* base, int64_t row_bytes,
                          int64_t rows, int stage_bytes, int box_rows, TmaMap* map) {
  const cuuint64_t dims[3] = {128, cuuint64_t(row_bytes / 512), cuuint64_t(rows)};
  const cuuint64_t strides[2] = {512, cuuint64_t(row_bytes)};
  const cuuint32_t box[3] = {128, cuuint32_t(stage_bytes / 512), cuuint32_t(box_rows)};
  const cuuint32_t element_strides[3] = {1, 1, 1};
  QGEMM_CU(&driver, cuTensorMapEncodeTiled, reinterpret_cast<CUtensorMap*>(map),
           CU_TENSOR_MAP_DATA_TYPE_UINT32, 3, const_cast<void*>(base), dims, strides, box,
           element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
           CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return Status();
}

}  // namespace

Status encode_tma_maps(const MmaGemmConfig& c, const MmaGemmParams& p, MmaGemmMaps* maps,
                       int64_t a_rows, int64_t experts) {
  std::memset(maps, 0, sizeof(*maps));
  if (!c.tma) return Status();
  if (!c.gathered) a_rows = p.m;
  if (reinterpret_cast<uintptr_t>(p.a) % 16 != 0 || p.lda % 8 != 0 || a_rows < 1 || p.k < 1 ||
      experts < 1)
    return invalid_argument(
        str("TMA activation map: needs 16-byte aligned rows (a=", static_cast<const void*>(p.a),
            ", lda=", p.lda, " elements), rows, k and experts >= 1 (rows=", a_rows, ", k=", p.k,
            ", experts=", experts, ")"));
  auto driver = cuda_driver();
  if (!driver) return driver.status();
  // Dimension 0 is K (contiguous), 1 the tokens; a box is a 64-K slab (128 bytes, the
  // swizzle's row) of the CTA's token tile (also of sorted rows), or of one gathered row.
  QGEMM_RETURN_IF_ERROR(encode_2d(
      **driver,
      c.act == DType::bf16() ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
      p.a, p.k, a_rows, int64_t(p.lda) * 2, 64, c.gathered && !c.sorted_rows ? 1 : c.block_m(),
      CU_TENSOR_MAP_SWIZZLE_128B, &maps->act));
  // In 32-bit words: a row is one 16-row tile's codes (or table pairs) along the whole K; the
  // experts of a stack follow one another.
  const int tiles = c.tiles_n * c.warps_n;
  const int64_t unit_bytes = mma_layout::unit_bytes(c.bits);
  const int64_t row_bytes = p.k_units * unit_bytes;
  const int64_t tile_rows = experts * p.n_tiles;
  const int stage_code_bytes = static_cast<int>(c.units_per_stage * unit_bytes);
  if (stage_code_bytes > 1024)
    QGEMM_RETURN_IF_ERROR(encode_code_chunks(**driver, p.weights, row_bytes, tile_rows,
                                             stage_code_bytes, tiles, &maps->weights));
  else
    QGEMM_RETURN_IF_ERROR(encode_2d(**driver, CU_TENSOR_MAP_DATA_TYPE_UINT32, p.weights,
                                    row_bytes / 4, tile_rows, row_bytes, stage_code_bytes / 4,
                                    tiles, CU_TENSOR_MAP_SWIZZLE_NONE, &maps->weights));
  if (c.group_k == 0) return Status();
  const int gps = mma_layout::groups_per_stage(c.group_k, c.stage_k());
  auto table = [&](const void* base, int pair_bytes, TmaMap* map) {
    const int64_t group_bytes = 8 * pair_bytes;
    return encode_2d(**driver, CU_TENSOR_MAP_DATA_TYPE_UINT32, base, p.groups * group_bytes / 4,
                     tile_rows, p.groups * group_bytes, static_cast<int>(gps * group_bytes / 4),
                     tiles, CU_TENSOR_MAP_SWIZZLE_NONE, map);
  };
  QGEMM_RETURN_IF_ERROR(table(p.scales, c.scale_pair_bytes(), &maps->scales));
  if (c.zero_table)
    QGEMM_RETURN_IF_ERROR(table(p.zeros, mma_layout::zero_pair_bytes(c.zero_kind()), &maps->zeros));
  return Status();
}

Status encode_tma_bytes_sw128(const void* base, int64_t row_bytes, int64_t rows, int64_t pitch,
                              int box_bytes, int box_rows, TmaMap* map) {
  if (reinterpret_cast<uintptr_t>(base) % 16 != 0 || pitch % 16 != 0 || rows < 1 || row_bytes < 1)
    return invalid_argument(str("TMA byte map: needs a 16-byte aligned base and pitch (base=", base,
                                ", pitch=", pitch, ") and a non-empty tensor (", rows, " x ",
                                row_bytes, ")"));
  auto driver = cuda_driver();
  if (!driver) return driver.status();
  return encode_2d(**driver, CU_TENSOR_MAP_DATA_TYPE_UINT8, base, row_bytes, rows, pitch, box_bytes,
                   box_rows, CU_TENSOR_MAP_SWIZZLE_128B, map);
}

}  // namespace qgemm
