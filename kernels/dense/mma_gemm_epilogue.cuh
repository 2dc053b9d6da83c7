// The epilogue both dense tile families share (declared in dense/mma_gemm.cuh): C stores, the
// split-K fix-up through global partials or a cluster's shared memory. The staged tile of the
// ws kernels is dense_wgmma/ws_epilogue.cuh's, the marked partials dense_mma's.
// Included at the end of dense/mma_gemm.cuh, after the class.
#pragma once

namespace qgemm {

template <class Cfg>
QGEMM_DEVICE void MmaGemm<Cfg>::store(const MmaGemmParams& p, int row, int token, float v) {
  if (p.row_scale != nullptr) v *= p.row_scale[row];
  if constexpr (Cfg::kOut == Elem::kFp32) {
    if (p.bias != nullptr) v += static_cast<const float*>(p.bias)[row];
    static_cast<float*>(p.c)[c_row(p, token) * p.ldc + row] = v;
  } else {
    if (p.bias != nullptr) v += half_to_float<Cfg::kOut>(static_cast<const u16*>(p.bias)[row]);
    const u32 packed = pack_half2<Cfg::kOut>(v, 0.0f);
    static_cast<u16*>(p.c)[c_row(p, token) * p.ldc + row] = static_cast<u16>(packed);
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
  // Nobody reads the ring any more. In the warp-specialized tile every copy into the ring has
  // landed once the compute warps have waited for their last stage, so only they synchronize
  // here; the copy warpgroup comes from its own branch, and a CTA-wide bar.sync reached from two
  // places in the code is not allowed (PTX: the .aligned form; compute-sanitizer's synccheck
  // reports it). cluster_sync below is the first barrier of all the CTA's threads.
  if constexpr (kWs) {
    if (acc != nullptr) sync_compute_threads();
  } else {
    __syncthreads();
  }
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
        reinterpret_cast<float4*>(static_cast<float*>(p.c) + c_row(p, token) * p.ldc + row);
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
    *reinterpret_cast<uint4*>(static_cast<u16*>(p.c) + c_row(p, token) * p.ldc + row) =
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

}  // namespace qgemm
