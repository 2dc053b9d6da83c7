// The epilogue pieces of the warp-specialized tiles (declared in dense/mma_gemm.cuh): the
// staged tile, its global split-K fix-up, and the bf16 pair exchange of prescaled cluster pairs.
#pragma once

namespace qgemm {

template <class Cfg>
QGEMM_DEVICE void MmaGemm<Cfg>::cluster_sum_pair_bf16(const MmaGemmParams& p, const Work& w,
                                                      u8* smem, FragC (*acc)[kTN][kFM],
                                                      int warp_n, int warp_m, int lane) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // CTA r sums rows [r * kHalfRows, (r + 1) * kHalfRows) of the tile: [token][kOwnStride] fp32
  // of its own split, and [token][kTradedStride] bf16 of the other half for the other CTA.
  float* own = reinterpret_cast<float*>(smem);
  u16* traded = reinterpret_cast<u16*>(smem + kOwnBytes);
  const int rank = static_cast<int>(cluster_rank());
  if (acc != nullptr) {
    // A warp's 16 rows lie in one half.
    if ((warp_n * kTN * 16 < kHalfRows) == (rank == 0)) {
      for_each_element(0, 0, warp_n, warp_m, lane, [&](int tn, int fm, int i, int row, int token) {
        own[token * kOwnStride + row % kHalfRows] = (*acc)[tn][fm].r[i];
      });
    } else {
      for_each_element(0, 0, warp_n, warp_m, lane, [&](int tn, int fm, int i, int row, int token) {
        traded[token * kTradedStride + row % kHalfRows] =
            static_cast<u16>(pack_half2<Elem::kBf16>((*acc)[tn][fm].r[i], 0.0f));
      });
    }
  }
  cluster_sync();
  constexpr int kPieces = 2, kHalfPieces = kHalfRows / 8;
  const int pieces = min(kBlockM, p.m - w.m0) * kHalfPieces;
  const u32 other = static_cast<u32>(rank ^ 1);
  const int row0 = w.n_tile0 * 16 + rank * kHalfRows;
  const bool vec = vector_stores(p);
  for (int e0 = static_cast<int>(threadIdx.x); e0 < pieces; e0 += kPieces * kThreads) {
    float4 mine[kPieces][2];
    float4 theirs[kPieces];  // 8 bf16
#pragma unroll
    for (int j = 0; j < kPieces; ++j) {  // the loads of both pieces in flight before any add
      const int e = e0 + j * kThreads;
      if (e < pieces) {
        const int token = e / kHalfPieces, piece = e % kHalfPieces;
        const float4* at = reinterpret_cast<const float4*>(own + token * kOwnStride + piece * 8);
        mine[j][0] = at[0], mine[j][1] = at[1];
        theirs[j] = load_cluster_f32x4(
            reinterpret_cast<const float*>(traded + token * kTradedStride + piece * 8), other);
      }
    }
#pragma unroll
    for (int j = 0; j < kPieces; ++j) {
      const int e = e0 + j * kThreads;
      if (e >= pieces) continue;
      const u32 t[4] = {__float_as_uint(theirs[j].x), __float_as_uint(theirs[j].y),
                        __float_as_uint(theirs[j].z), __float_as_uint(theirs[j].w)};
      const float4 lo = mine[j][0], hi = mine[j][1];
      float v[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        v[2 * q] += half_to_float<Elem::kBf16>(static_cast<u16>(t[q] & 0xffffu));
        v[2 * q + 1] += half_to_float<Elem::kBf16>(static_cast<u16>(t[q] >> 16));
      }
      store_piece(p, row0 + (e % kHalfPieces) * 8, w.m0 + e / kHalfPieces, v, vec);
    }
  }
  cluster_sync_relaxed();  // no CTA leaves while the other still reads its shared memory
#endif
}

template <class Cfg>
QGEMM_DEVICE void MmaGemm<Cfg>::stage_tile(float* tile, const FragC (&acc)[kTN][kFM], int warp_n,
                                           int warp_m, int lane) {
  sync_compute_threads();  // every compute warp is done with the ring
  write_tile(tile, acc, warp_n, warp_m, lane);
  sync_compute_threads();
}

template <class Cfg>
QGEMM_DEVICE void MmaGemm<Cfg>::write_tile(float* tile, const FragC (&acc)[kTN][kFM], int warp_n,
                                           int warp_m, int lane) {
  if constexpr (kWarpsK == 1) {
    for_each_element(0, 0, warp_n, warp_m, lane, [&](int tn, int fm, int i, int row, int token) {
      tile[token * kTileStride + row] = acc[tn][fm].r[i];
    });
    return;
  }
  const int warp_k = static_cast<int>(threadIdx.x / 32) / (Cfg::kWarpsN * Cfg::kWarpsM);
#pragma unroll 1
  for (int part = kWarpsK - 1; part >= 0; --part) {
    if (warp_k == part)
      for_each_element(0, 0, warp_n, warp_m, lane, [&](int tn, int fm, int i, int row, int token) {
        float& at = tile[token * kTileStride + row];
        at = part == kWarpsK - 1 ? acc[tn][fm].r[i] : at + acc[tn][fm].r[i];
      });
    if (part > 0) sync_compute_threads();
  }
}

template <class Cfg>
QGEMM_DEVICE void MmaGemm<Cfg>::finish_staged(const MmaGemmParams& p, const Work& w, float* tile,
                                              const FragC (&acc)[kTN][kFM], int warp_n, int warp_m,
                                              int lane) {
  stage_tile(tile, acc, warp_n, warp_m, lane);
  const int tid = static_cast<int>(threadIdx.x);
  const int row0 = w.n_tile0 * 16;
  const bool vec = vector_stores(p);
  const auto staged = [&](int token, int row, float(&v)[8]) {
    const float4* at = reinterpret_cast<const float4*>(tile + token * kTileStride + row);
    const float4 a = at[0], b = at[1];
    v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w, v[4] = b.x, v[5] = b.y, v[6] = b.z, v[7] = b.w;
  };
  if (gridDim.z == 1) {
    for_each_piece(p, w, tid, [&](int token, int row) {
      float v[8];
      staged(token, row, v);
      store_piece(p, row0 + row, w.m0 + token, v, vec);
    });
    return;
  }
  // Split-K: publish this split's partial tile (rows below the padded N: the tile's last
  // warps may lie beyond the weight), then the last split sums all of them in split order.
  const i64 n_pad = static_cast<i64>(p.n_tiles) * 16;
  const i64 split_floats = static_cast<i64>(p.m) * n_pad;
  const int splits = static_cast<int>(gridDim.z);
  for_each_piece(p, w, tid, [&](int token, int row) {
    if (row0 + row >= n_pad) return;
    float4* out = reinterpret_cast<float4*>(p.partials + blockIdx.z * split_floats +
                                            (w.m0 + token) * n_pad + row0 + row);
    const float4* in = reinterpret_cast<const float4*>(tile + token * kTileStride + row);
    out[0] = in[0];
    out[1] = in[1];
  });
  if (!last_split_arrives(p)) return;
  constexpr int kBatch = 4;  // splits loaded before any is added: 8 loads in flight
  for_each_piece(p, w, tid, [&](int token, int row) {
    if (row0 + row >= n_pad) return;
    const float* at = p.partials + (w.m0 + token) * n_pad + row0 + row;
    float v[8] = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll 1
    for (int z0 = 0; z0 < splits; z0 += kBatch) {
      float4 part[kBatch][2];
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        const float4* src = reinterpret_cast<const float4*>(at + (z0 + b) * split_floats);
        const bool load = z0 + b < splits;
        part[b][0] = load ? __ldcg(src) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        part[b][1] = load ? __ldcg(src + 1) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      }
#pragma unroll
      for (int b = 0; b < kBatch; ++b) {
        if (z0 + b >= splits) break;
        v[0] += part[b][0].x, v[1] += part[b][0].y, v[2] += part[b][0].z, v[3] += part[b][0].w;
        v[4] += part[b][1].x, v[5] += part[b][1].y, v[6] += part[b][1].z, v[7] += part[b][1].w;
      }
    }
    store_piece(p, row0 + row, w.m0 + token, v, vec);
  });
  if (threadIdx.x == 0) reset_counter(p);
}

}  // namespace qgemm
