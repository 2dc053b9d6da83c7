// The epilogue of MmaGemm (declared in dense/mma_gemm.cuh): C stores, the split-K fix-up
// through global partials or a cluster's shared memory, and the staged tile of the ws kernels.
// Included at the end of dense/mma_gemm.cuh, after the class.
#pragma once

namespace qgemm {

template <class Cfg>
QGEMM_DEVICE void MmaGemm<Cfg>::store(const MmaGemmParams& p, int row, int token, float v) {
  if (p.row_scale != nullptr) v *= p.row_scale[row];
  if constexpr (Cfg::kOut == Elem::kFp32) {
    if (p.bias != nullptr) v += static_cast<const float*>(p.bias)[row];
    static_cast<float*>(p.c)[static_cast<i64>(token) * p.ldc + row] = v;
  } else {
    if (p.bias != nullptr) v += half_to_float<Cfg::kOut>(static_cast<const u16*>(p.bias)[row]);
    const u32 packed = pack_half2<Cfg::kOut>(v, 0.0f);
    static_cast<u16*>(p.c)[static_cast<i64>(token) * p.ldc + row] = static_cast<u16>(packed);
  }
}

template <class Cfg>
template <typename Fn>
QGEMM_DEVICE void MmaGemm<Cfg>::for_each_element(int n_tile0, int m0, int warp_n, int warp_m,
                                                 int lane, Fn&& fn) {
#pragma unroll
  for (int tn = 0; tn < kTN; ++tn)
#pragma unroll
    for (int fm = 0; fm < kFM; ++fm)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        fn(tn, fm, i, element_row(n_tile0, warp_n, tn, lane, i),
           element_token(m0, warp_m, fm, lane, i));
      }
}

template <class Cfg>
QGEMM_DEVICE void MmaGemm<Cfg>::sum_partials(const MmaGemmParams& p, const Work& w,
                                             FragC (&acc)[kTN][kFM], int warp_n, int warp_m,
                                             int lane) {
  const i64 n_pad = static_cast<i64>(p.n_tiles) * 16;
  const int splits = static_cast<int>(gridDim.z);
  zero(acc);
  static_for<0, kFM, kFragsPerLoad>([&](auto f0_) {
    constexpr int f0 = decltype(f0_)::value;
    constexpr int kFrags = kFM - f0 < kFragsPerLoad ? kFM - f0 : kFragsPerLoad;
    for (int z0 = 0; z0 < splits; z0 += kSplitBatch) {
      float part[kSplitBatch][kTN][kFrags][4];
#pragma unroll
      for (int b = 0; b < kSplitBatch; ++b) {
        const int z = z0 + b;
        const float* split = p.partials + z * static_cast<i64>(p.m) * n_pad;
#pragma unroll
        for (int tn = 0; tn < kTN; ++tn)
#pragma unroll
          for (int f = 0; f < kFrags; ++f)
#pragma unroll
            for (int i = 0; i < 4; ++i) {
              const int row = element_row(w.n_tile0, warp_n, tn, lane, i);
              const int token = element_token(w.m0, warp_m, f0 + f, lane, i);
              const bool load = z < splits && token < p.m && row < n_pad;
              part[b][tn][f][i] = load ? __ldcg(split + token * n_pad + row) : 0.0f;
            }
      }
#pragma unroll
      for (int b = 0; b < kSplitBatch; ++b)
#pragma unroll
        for (int tn = 0; tn < kTN; ++tn)
#pragma unroll
          for (int f = 0; f < kFrags; ++f)
#pragma unroll
            for (int i = 0; i < 4; ++i) acc[tn][f0 + f].r[i] += part[b][tn][f][i];
    }
  });
}

template <class Cfg>
QGEMM_DEVICE bool MmaGemm<Cfg>::sums_in_cluster() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  return kClusterSum && cluster_ctas() > 1;
#else
  return false;
#endif
}

template <class Cfg>
QGEMM_DEVICE void MmaGemm<Cfg>::cluster_sum_and_store(const MmaGemmParams& p, const Work& w,
                                                      u8* smem, FragC (*acc)[kTN][kFM], int warp_n,
                                                      int warp_m, int lane) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // NOTE: only the warp-specialized tiles launch as clusters (mma_split_cluster). The others
  // keep the element-by-element sum: the decode tiles' main loop schedule depends on what else
  // compiles into the kernel, and the piece-wise sum compiled in slows their decode
  // (docs/design.md, "cluster sum by pieces").
  constexpr int kStride = kWs ? kTileStride : kRedRows;
  float* red = reinterpret_cast<float*>(smem);  // [token][kStride] partial tile
  __syncthreads();                              // nobody reads the ring any more
  if constexpr (kBf16PairSum) {
    if (cluster_ctas() == 2) {
      cluster_sum_pair_bf16(p, w, smem, acc, warp_n, warp_m, lane);
      return;
    }
  }
  if constexpr (kWs) {
    if (acc != nullptr) write_tile(red, *acc, warp_n, warp_m, lane);
  } else {
    for_each_element(0, 0, warp_n, warp_m, lane, [&](int tn, int fm, int i, int row, int token) {
      red[token * kStride + row] = (*acc)[tn][fm].r[i];
    });
  }
  cluster_sync();
  const int ranks = static_cast<int>(cluster_ctas()), rank = static_cast<int>(cluster_rank());
  if constexpr (!kWs) {
    const int total = min(kBlockM, p.m - w.m0) * kRedRows;
    const int per = (total + ranks - 1) / ranks;
    const int end = min(total, (rank + 1) * per);
#pragma unroll 2
    for (int e = rank * per + static_cast<int>(threadIdx.x); e < end; e += kThreads) {
      float part[kMaxClusterSplits];
#pragma unroll
      for (int z = 0; z < kMaxClusterSplits; ++z)
        part[z] = z < ranks ? load_cluster_f32(red + e, static_cast<u32>(z)) : 0.0f;
      float sum = 0.0f;
#pragma unroll
      for (int z = 0; z < kMaxClusterSplits; ++z)
        if (z < ranks) sum += part[z];
      const int row = w.n_tile0 * 16 + e % kRedRows;
      if (row < p.n) store(p, row, w.m0 + e / kRedRows, sum);
    }
  } else {
    // NOTE: each CTA sums one slice of the tile's 8-row pieces: two 16-byte loads per piece and
    // split, the loads of two pieces and two splits in flight before any is added (one DSMEM
    // round trip per pass), its own split read locally, 16-byte stores of C. Element by element
    // (one 4-byte remote load each, about 6 round trips per thread) the sum spends its time
    // waiting on DSMEM round trips (docs/design.md, "cluster sum by pieces").
    constexpr int kPieces = 2, kSplitsInFlight = 2;
    const int pieces = min(kBlockM, p.m - w.m0) * kPiecesPerToken;
    const int per = (pieces + ranks - 1) / ranks;
    const int end = min(pieces, (rank + 1) * per);
    const bool vec = vector_stores(p);
    const auto offset = [](int e) {
      return (e / kPiecesPerToken) * kTileStride + (e % kPiecesPerToken) * 8;
    };
    for (int e0 = rank * per + static_cast<int>(threadIdx.x); e0 < end; e0 += kPieces * kThreads) {
      float v[kPieces][8] = {};
#pragma unroll 1
      for (int z0 = 0; z0 < ranks; z0 += kSplitsInFlight) {
        float4 part[kSplitsInFlight][kPieces][2];
#pragma unroll
        for (int b = 0; b < kSplitsInFlight; ++b)
#pragma unroll
          for (int j = 0; j < kPieces; ++j) {
            const int z = z0 + b, e = e0 + j * kThreads;
            const float* at = red + offset(e);
            if (z >= ranks || e >= end) {
              part[b][j][0] = part[b][j][1] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            } else if (z == rank) {
              part[b][j][0] = reinterpret_cast<const float4*>(at)[0];
              part[b][j][1] = reinterpret_cast<const float4*>(at)[1];
            } else {
              part[b][j][0] = load_cluster_f32x4(at, static_cast<u32>(z));
              part[b][j][1] = load_cluster_f32x4(at + 4, static_cast<u32>(z));
            }
          }
#pragma unroll
        for (int b = 0; b < kSplitsInFlight; ++b)  // split order: the global fix-up's sum
#pragma unroll
          for (int j = 0; j < kPieces; ++j) {
            float* x = v[j];
            const float4 lo = part[b][j][0], hi = part[b][j][1];
            x[0] += lo.x, x[1] += lo.y, x[2] += lo.z, x[3] += lo.w;
            x[4] += hi.x, x[5] += hi.y, x[6] += hi.z, x[7] += hi.w;
          }
      }
#pragma unroll
      for (int j = 0; j < kPieces; ++j) {
        const int e = e0 + j * kThreads;
        if (e < end)
          store_piece(p, w.n_tile0 * 16 + (e % kPiecesPerToken) * 8, w.m0 + e / kPiecesPerToken,
                      v[j], vec);
      }
    }
  }
  cluster_sync_relaxed();  // no CTA leaves while another still reads its shared memory
#endif
}

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
QGEMM_DEVICE bool MmaGemm<Cfg>::vector_stores(const MmaGemmParams& p) {
  constexpr int kOutBytes = Cfg::kOut == Elem::kFp32 ? 4 : 2;
  const auto misaligned = [](const void* ptr) { return reinterpret_cast<u64>(ptr) % 16; };
  return misaligned(p.c) == 0 && (p.ldc * kOutBytes) % 16 == 0 && misaligned(p.bias) == 0 &&
         misaligned(p.row_scale) == 0;
}

template <class Cfg>
QGEMM_DEVICE void MmaGemm<Cfg>::store_piece(const MmaGemmParams& p, int row, int token,
                                            float (&v)[8], bool vec) {
  if (!vec || row + 8 > p.n) {
#pragma unroll
    for (int j = 0; j < 8; ++j)
      if (row + j < p.n) store(p, row + j, token, v[j]);
    return;
  }
  if (p.row_scale != nullptr) {
    const float4* rs = reinterpret_cast<const float4*>(p.row_scale + row);
    const float4 s0 = __ldg(rs), s1 = __ldg(rs + 1);
    const float s[8] = {s0.x, s0.y, s0.z, s0.w, s1.x, s1.y, s1.z, s1.w};
#pragma unroll
    for (int j = 0; j < 8; ++j) v[j] *= s[j];
  }
  if constexpr (Cfg::kOut == Elem::kFp32) {
    if (p.bias != nullptr) {
      const float4* b = reinterpret_cast<const float4*>(static_cast<const float*>(p.bias) + row);
      const float4 b0 = __ldg(b), b1 = __ldg(b + 1);
      const float bs[8] = {b0.x, b0.y, b0.z, b0.w, b1.x, b1.y, b1.z, b1.w};
#pragma unroll
      for (int j = 0; j < 8; ++j) v[j] += bs[j];
    }
    float4* out =
        reinterpret_cast<float4*>(static_cast<float*>(p.c) + static_cast<i64>(token) * p.ldc + row);
    out[0] = make_float4(v[0], v[1], v[2], v[3]);
    out[1] = make_float4(v[4], v[5], v[6], v[7]);
  } else {
    if (p.bias != nullptr) {
      const uint4 b = __ldg(reinterpret_cast<const uint4*>(static_cast<const u16*>(p.bias) + row));
      const u32 bw[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        v[2 * j] += half_to_float<Cfg::kOut>(static_cast<u16>(bw[j] & 0xffffu));
        v[2 * j + 1] += half_to_float<Cfg::kOut>(static_cast<u16>(bw[j] >> 16));
      }
    }
    *reinterpret_cast<uint4*>(static_cast<u16*>(p.c) + static_cast<i64>(token) * p.ldc + row) =
        make_uint4(pack_half2<Cfg::kOut>(v[0], v[1]), pack_half2<Cfg::kOut>(v[2], v[3]),
                   pack_half2<Cfg::kOut>(v[4], v[5]), pack_half2<Cfg::kOut>(v[6], v[7]));
  }
}

template <class Cfg>
template <typename Fn>
QGEMM_DEVICE void MmaGemm<Cfg>::for_each_piece(const MmaGemmParams& p, const Work& w, int tid,
                                               Fn&& fn) {
  const int pieces = min(kBlockM, p.m - w.m0) * kPiecesPerToken;
#pragma unroll 1
  for (int e = tid; e < pieces; e += kConsumerThreads)
    fn(e / kPiecesPerToken, (e % kPiecesPerToken) * 8);
}

template <class Cfg>
QGEMM_DEVICE void MmaGemm<Cfg>::finish(const MmaGemmParams& p, const Work& w, u8* smem,
                                       FragC (&acc)[kTN][kFM], int warp_n, int warp_m, int lane) {
  if (sums_in_cluster()) {
    cluster_sum_and_store(p, w, smem, &acc, warp_n, warp_m, lane);
    return;
  }
  if constexpr (kStagedTile) {
    finish_staged(p, w, reinterpret_cast<float*>(smem), acc, warp_n, warp_m, lane);
    return;
  }
  if constexpr (kMarkedPartials) {
    if (gridDim.z > 1 && !sum_marked_partials(p, acc)) return;
  } else if (gridDim.z > 1) {
    // NOTE: split-K fix-up. Every CTA publishes its partial tile; the last one to arrive (or,
    // with kLastSplitSums, the last split) sums all partials in split order, so the result does
    // not depend on arrival order.
    const i64 n_pad = static_cast<i64>(p.n_tiles) * 16;
    float* mine = p.partials + blockIdx.z * static_cast<i64>(p.m) * n_pad;
    for_each_element(w.n_tile0, w.m0, warp_n, warp_m, lane,
                     [&](int tn, int fm, int i, int row, int token) {
                       if (token < p.m && row < n_pad) mine[token * n_pad + row] = acc[tn][fm].r[i];
                     });
    // NOTE: the barrier orders the CTA's partial stores before thread 0's arrival, whose
    // release (cumulative) publishes them. No full fences.
    sync_compute_threads();
    i32* counter = p.counters + blockIdx.y * gridDim.x + blockIdx.x;
    {  // NOTE: a block of its own: without it four 8-token kernels compile to other code
       // (int3/g128, int7, e4m3, uint4/zp/row).
      // The summing split's acquire (the last split's wait, or the last arrival's atomic) makes
      // the others' partials visible; the barrier after it hands that on to the CTA.
      // (last_split_arrives() is the atomic protocol; written out here because calling it
      // changes the decode kernels' register allocation away from the benchmarked one.)
      __shared__ int is_last;
      if (threadIdx.x == 0) {
        if constexpr (kLastSplitSums) {
          const int last = static_cast<int>(gridDim.z) - 1;
          if (static_cast<int>(blockIdx.z) == last)
            wait_until_acquire_gpu(counter, last);
          else
            red_add_release_gpu(counter, 1);
          is_last = static_cast<int>(blockIdx.z) == last;
        } else {
          is_last = atomic_add_acq_rel_gpu(counter, 1) == static_cast<int>(gridDim.z) - 1;
        }
      }
      sync_compute_threads();
      if (!is_last) return;
    }
    sum_partials(p, w, acc, warp_n, warp_m, lane);
    if (threadIdx.x == 0) *counter = 0;  // ready for the next launch (or graph replay)
  }
  for_each_element(w.n_tile0, w.m0, warp_n, warp_m, lane,
                   [&](int tn, int fm, int i, int row, int token) {
                     if (token < p.m && row < p.n) store(p, row, token, acc[tn][fm].r[i]);
                   });
}

template <class Cfg>
QGEMM_DEVICE bool MmaGemm<Cfg>::sum_marked_partials(const MmaGemmParams& p,
                                                    FragC (&acc)[kTN][kFM]) {
  // Layout: [CTA tile][split 0 .. last - 1][thread][value]; every thread reads back exactly
  // what the same thread of another split wrote, 16 contiguous bytes at a time.
  constexpr int kVec = kMarkedValues / 4;
  constexpr int kPerSplit = kThreads * kMarkedValues;
  const int last = static_cast<int>(gridDim.z) - 1;
  const i64 tile = static_cast<i64>(blockIdx.y) * gridDim.x + blockIdx.x;
  float* base = p.partials + tile * last * kPerSplit + threadIdx.x * kMarkedValues;
  // NOTE: nothing passes between this CTA's threads here; the barrier stays because without it
  // the two-stage tile's main loop compiles to other registers than the benchmarked build's.
  sync_compute_threads();
  float own[kMarkedValues];
#pragma unroll
  for (int tn = 0; tn < kTN; ++tn)
#pragma unroll
    for (int fm = 0; fm < kFM; ++fm)
#pragma unroll
      for (int i = 0; i < 4; ++i) own[(tn * kFM + fm) * 4 + i] = acc[tn][fm].r[i];
  if (static_cast<int>(blockIdx.z) != last) {
    float* mine = base + blockIdx.z * static_cast<i64>(kPerSplit);
#pragma unroll
    for (int q = 0; q < kVec; ++q)
      store_relaxed_gpu_f32x4(mine + 4 * q, make_float4(own[4 * q], own[4 * q + 1],
                                                         own[4 * q + 2], own[4 * q + 3]));
    return false;
  }
  constexpr int kBatch = 32 / kMarkedValues > 0 ? 32 / kMarkedValues : 1;  // splits in flight
  const auto marked = [](float4 v) {
    return __float_as_uint(v.x) == kPartialMark || __float_as_uint(v.y) == kPartialMark ||
           __float_as_uint(v.z) == kPartialMark || __float_as_uint(v.w) == kPartialMark;
  };
  float sum[kMarkedValues] = {};
#pragma unroll 1
  for (int z0 = 0; z0 < last; z0 += kBatch) {
    float4 part[kBatch][kVec];
#pragma unroll
    for (int b = 0; b < kBatch; ++b)
#pragma unroll
      for (int q = 0; q < kVec; ++q)
        part[b][q] =
            z0 + b < last
                ? load_relaxed_gpu_f32x4(base + (z0 + b) * static_cast<i64>(kPerSplit) + 4 * q)
                : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    // A split still computing leaves its pieces marked: read again every marked piece at once
    // (one round trip for all of them), then wait on each in turn.
#pragma unroll
    for (int b = 0; b < kBatch; ++b)
#pragma unroll
      for (int q = 0; q < kVec; ++q)
        if (z0 + b < last && marked(part[b][q]))
          part[b][q] =
              load_relaxed_gpu_f32x4(base + (z0 + b) * static_cast<i64>(kPerSplit) + 4 * q);
    const float mark = __uint_as_float(kPartialMark);
#pragma unroll
    for (int b = 0; b < kBatch; ++b)
#pragma unroll
      for (int q = 0; q < kVec; ++q) {
        if (z0 + b >= last) continue;
        float* at = base + (z0 + b) * static_cast<i64>(kPerSplit) + 4 * q;
        while (marked(part[b][q])) part[b][q] = load_relaxed_gpu_f32x4(at);
        const float4 v = part[b][q];
        sum[4 * q] += v.x, sum[4 * q + 1] += v.y, sum[4 * q + 2] += v.z, sum[4 * q + 3] += v.w;
        store_relaxed_gpu_f32x4(at, make_float4(mark, mark, mark, mark));
      }
  }
#pragma unroll
  for (int tn = 0; tn < kTN; ++tn)
#pragma unroll
    for (int fm = 0; fm < kFM; ++fm)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int v = (tn * kFM + fm) * 4 + i;
        acc[tn][fm].r[i] = sum[v] + own[v];
      }
  return true;
}

template <class Cfg>
QGEMM_DEVICE bool MmaGemm<Cfg>::last_split_arrives(const MmaGemmParams& p) {
  // Ordering as in finish()'s fragment path.
  sync_compute_threads();
  __shared__ int is_last;
  if (threadIdx.x == 0)
    is_last = atomic_add_acq_rel_gpu(p.counters + blockIdx.y * gridDim.x + blockIdx.x, 1) ==
              static_cast<int>(gridDim.z) - 1;
  sync_compute_threads();
  return is_last != 0;
}

template <class Cfg>
QGEMM_DEVICE void MmaGemm<Cfg>::reset_counter(const MmaGemmParams& p) {
  p.counters[blockIdx.y * gridDim.x + blockIdx.x] = 0;
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
