// The split-K fix-up of the 16-token decode tile through marked partials
// (MmaGemm::sum_marked_partials, declared in dense/mma_gemm.cuh).
#pragma once

namespace qgemm {

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

}  // namespace qgemm
