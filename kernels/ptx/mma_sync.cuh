// Warp-level tensor-core MMA and ldmatrix (sm_80+; fp16 also on sm_75).
// PTX ISA: "Warp Level Matrix Multiply-Accumulate Instructions: mma" (m16n8k16 fragments) and
// "ldmatrix". sm_75 has m16n8k8 for fp16 only: an m16n8k16 is two of them, registers 0-1 of A
// and 0 of B holding k 0-7, registers 2-3 and 1 holding k 8-15.
#pragma once

#include "common/base.cuh"
#include "ptx/cp_async.cuh"

namespace qgemm {

/// A fragment of the 16x16 A operand: 4 registers of 2 halves (rows g and g+8, k pairs).
struct FragA {
  u32 r[4];
};
/// A fragment of the 16x8 B operand: 2 registers of 2 halves.
struct FragB {
  u32 r[2];
};
/// A fragment of the 16x8 fp32 accumulator.
struct FragC {
  float r[4];
};

/// D = A * B + D for fp16 or bf16 operands, fp32 accumulation.
template <Elem kElem>
QGEMM_DEVICE void mma_16816(FragC& d, const FragA& a, const FragB& b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  static_assert(kElem == Elem::kFp16, "sm_75 tensor cores take fp16 operands, not bf16");
#pragma unroll
  for (int h = 0; h < 2; ++h)
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(d.r[0]), "+f"(d.r[1]), "+f"(d.r[2]), "+f"(d.r[3])
        : "r"(a.r[2 * h]), "r"(a.r[2 * h + 1]), "r"(b.r[h]));
#else
  if constexpr (kElem == Elem::kBf16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d.r[0]), "+f"(d.r[1]), "+f"(d.r[2]), "+f"(d.r[3])
        : "r"(a.r[0]), "r"(a.r[1]), "r"(a.r[2]), "r"(a.r[3]), "r"(b.r[0]), "r"(b.r[1]));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d.r[0]), "+f"(d.r[1]), "+f"(d.r[2]), "+f"(d.r[3])
        : "r"(a.r[0]), "r"(a.r[1]), "r"(a.r[2]), "r"(a.r[3]), "r"(b.r[0]), "r"(b.r[1]));
  }
#endif
}

/// Loads four 8x8 16-bit matrices; lane i supplies the row address of matrix i / 8, row i % 8.
QGEMM_DEVICE void ldmatrix_x4(u32 (&r)[4], const void* smem_row) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(smem_row)));
}

}  // namespace qgemm
