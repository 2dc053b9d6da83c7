// Warpgroup-level asynchronous MMA (sm_90a): wgmma.mma_async with A in registers and B in
// shared memory behind a matrix descriptor, its fences and the async-proxy fence.
// PTX ISA: "Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions"
// (wgmma.mma_async, wgmma.fence, wgmma.commit_group, wgmma.wait_group; "Register Fragments",
// "Shared Memory Matrix Layout", "Matrix Descriptor Format", "Async Proxy") and "membar / fence"
// (fence.proxy.async).
#pragma once

#include "common/base.cuh"
#include "ptx/mma_sync.cuh"

namespace qgemm {

/// Descriptor of a K-major operand in the 128-byte swizzle layout (PTX "Matrix Descriptor
/// Format"): rows of 128 bytes whose 16-byte chunk c lies at chunk c ^ (row % 8), 8-row groups
/// 1024 bytes apart, the pattern starting on a 1024-byte boundary (base offset 0).
///
///   bits  0-13  start address >> 4        bits 32-45  stride byte offset >> 4 (1024 B)
///   bits 16-29  leading byte offset >> 4  bits 49-51  base offset (0)
///               (unused when swizzled: 1) bits 62-63  swizzle mode (1 = 128 B)
///
/// Moving the start address by 32 bytes steps 16 elements along K inside a row: the hardware
/// applies the swizzle to the address it computes, as the layout's writer did.
QGEMM_DEVICE u64 wgmma_desc_sw128(u32 smem_addr) {
  constexpr u64 kLeading = 1, kStride = 1024 >> 4, kSwizzle128 = 1;
  return static_cast<u64>((smem_addr & 0x3ffffu) >> 4) | (kLeading << 16) | (kStride << 32) |
         (kSwizzle128 << 62);
}

/// Orders register writes before the next wgmma.mma_async that reads them (A fragments, or
/// accumulators touched by other instructions); required before the first wgmma too.
QGEMM_DEVICE void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }

/// Closes a group of the wgmma.mma_async issued so far.
QGEMM_DEVICE void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

/// Waits until at most N committed wgmma groups are pending; their registers may then be read
/// and their shared memory overwritten.
template <int N>
QGEMM_DEVICE void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

/// Makes this thread's generic-proxy writes to shared memory (cp.async, st.shared) visible to
/// the async proxy wgmma reads through; a barrier then publishes them to the warpgroup.
QGEMM_DEVICE void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

/// Lowers (dec) or raises (inc) the registers per thread of this warpgroup to N; all its warps
/// execute it. Warp-specialized kernels move registers from the warpgroup that only copies to
/// those that compute.
template <int N>
QGEMM_DEVICE void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N>
QGEMM_DEVICE void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

/// NOTE: the compiler sees no data flow from wgmma_wait to the accumulators: this empty asm pins
/// the registers so no read moves above a wait and no write moves below a fence.
template <int N>
QGEMM_DEVICE void wgmma_pin(FragC (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i)
#pragma unroll
    for (int k = 0; k < 4; ++k) asm volatile("" : "+f"(d[i].r[k])::"memory");
}
QGEMM_DEVICE void wgmma_pin(FragA& a) {
#pragma unroll
  for (int k = 0; k < 4; ++k) asm volatile("" : "+r"(a.r[k])::"memory");
}

// Operand lists of wgmma.mma_async.m64n(8 F)k16 for F = 1..32 accumulator fragments: the
// placeholders {%0 .. %(4F-1)} of the fp32 accumulators, then the A registers and the descriptor.
#define QGEMM_WG_Q(a, b, c, d) "%" #a ", %" #b ", %" #c ", %" #d
#define QGEMM_WG_F(i) "+f"(d[i].r[0]), "+f"(d[i].r[1]), "+f"(d[i].r[2]), "+f"(d[i].r[3])
#define QGEMM_WG_D1 QGEMM_WG_Q(0, 1, 2, 3)
#define QGEMM_WG_D2 QGEMM_WG_D1 ", " QGEMM_WG_Q(4, 5, 6, 7)
#define QGEMM_WG_D3 QGEMM_WG_D2 ", " QGEMM_WG_Q(8, 9, 10, 11)
#define QGEMM_WG_D4 QGEMM_WG_D3 ", " QGEMM_WG_Q(12, 13, 14, 15)
#define QGEMM_WG_D5 QGEMM_WG_D4 ", " QGEMM_WG_Q(16, 17, 18, 19)
#define QGEMM_WG_D6 QGEMM_WG_D5 ", " QGEMM_WG_Q(20, 21, 22, 23)
#define QGEMM_WG_D7 QGEMM_WG_D6 ", " QGEMM_WG_Q(24, 25, 26, 27)
#define QGEMM_WG_D8 QGEMM_WG_D7 ", " QGEMM_WG_Q(28, 29, 30, 31)
#define QGEMM_WG_D9 QGEMM_WG_D8 ", " QGEMM_WG_Q(32, 33, 34, 35)
#define QGEMM_WG_D10 QGEMM_WG_D9 ", " QGEMM_WG_Q(36, 37, 38, 39)
#define QGEMM_WG_D11 QGEMM_WG_D10 ", " QGEMM_WG_Q(40, 41, 42, 43)
#define QGEMM_WG_D12 QGEMM_WG_D11 ", " QGEMM_WG_Q(44, 45, 46, 47)
#define QGEMM_WG_D13 QGEMM_WG_D12 ", " QGEMM_WG_Q(48, 49, 50, 51)
#define QGEMM_WG_D14 QGEMM_WG_D13 ", " QGEMM_WG_Q(52, 53, 54, 55)
#define QGEMM_WG_D15 QGEMM_WG_D14 ", " QGEMM_WG_Q(56, 57, 58, 59)
#define QGEMM_WG_D16 QGEMM_WG_D15 ", " QGEMM_WG_Q(60, 61, 62, 63)
#define QGEMM_WG_D17 QGEMM_WG_D16 ", " QGEMM_WG_Q(64, 65, 66, 67)
#define QGEMM_WG_D18 QGEMM_WG_D17 ", " QGEMM_WG_Q(68, 69, 70, 71)
#define QGEMM_WG_D19 QGEMM_WG_D18 ", " QGEMM_WG_Q(72, 73, 74, 75)
#define QGEMM_WG_D20 QGEMM_WG_D19 ", " QGEMM_WG_Q(76, 77, 78, 79)
#define QGEMM_WG_D21 QGEMM_WG_D20 ", " QGEMM_WG_Q(80, 81, 82, 83)
#define QGEMM_WG_D22 QGEMM_WG_D21 ", " QGEMM_WG_Q(84, 85, 86, 87)
#define QGEMM_WG_D23 QGEMM_WG_D22 ", " QGEMM_WG_Q(88, 89, 90, 91)
#define QGEMM_WG_D24 QGEMM_WG_D23 ", " QGEMM_WG_Q(92, 93, 94, 95)
#define QGEMM_WG_D25 QGEMM_WG_D24 ", " QGEMM_WG_Q(96, 97, 98, 99)
#define QGEMM_WG_D26 QGEMM_WG_D25 ", " QGEMM_WG_Q(100, 101, 102, 103)
#define QGEMM_WG_D27 QGEMM_WG_D26 ", " QGEMM_WG_Q(104, 105, 106, 107)
#define QGEMM_WG_D28 QGEMM_WG_D27 ", " QGEMM_WG_Q(108, 109, 110, 111)
#define QGEMM_WG_D29 QGEMM_WG_D28 ", " QGEMM_WG_Q(112, 113, 114, 115)
#define QGEMM_WG_D30 QGEMM_WG_D29 ", " QGEMM_WG_Q(116, 117, 118, 119)
#define QGEMM_WG_D31 QGEMM_WG_D30 ", " QGEMM_WG_Q(120, 121, 122, 123)
#define QGEMM_WG_D32 QGEMM_WG_D31 ", " QGEMM_WG_Q(124, 125, 126, 127)
#define QGEMM_WG_O1 QGEMM_WG_F(0)
#define QGEMM_WG_O2 QGEMM_WG_O1, QGEMM_WG_F(1)
#define QGEMM_WG_O3 QGEMM_WG_O2, QGEMM_WG_F(2)
#define QGEMM_WG_O4 QGEMM_WG_O3, QGEMM_WG_F(3)
#define QGEMM_WG_O5 QGEMM_WG_O4, QGEMM_WG_F(4)
#define QGEMM_WG_O6 QGEMM_WG_O5, QGEMM_WG_F(5)
#define QGEMM_WG_O7 QGEMM_WG_O6, QGEMM_WG_F(6)
#define QGEMM_WG_O8 QGEMM_WG_O7, QGEMM_WG_F(7)
#define QGEMM_WG_O9 QGEMM_WG_O8, QGEMM_WG_F(8)
#define QGEMM_WG_O10 QGEMM_WG_O9, QGEMM_WG_F(9)
#define QGEMM_WG_O11 QGEMM_WG_O10, QGEMM_WG_F(10)
#define QGEMM_WG_O12 QGEMM_WG_O11, QGEMM_WG_F(11)
#define QGEMM_WG_O13 QGEMM_WG_O12, QGEMM_WG_F(12)
#define QGEMM_WG_O14 QGEMM_WG_O13, QGEMM_WG_F(13)
#define QGEMM_WG_O15 QGEMM_WG_O14, QGEMM_WG_F(14)
#define QGEMM_WG_O16 QGEMM_WG_O15, QGEMM_WG_F(15)
#define QGEMM_WG_O17 QGEMM_WG_O16, QGEMM_WG_F(16)
#define QGEMM_WG_O18 QGEMM_WG_O17, QGEMM_WG_F(17)
#define QGEMM_WG_O19 QGEMM_WG_O18, QGEMM_WG_F(18)
#define QGEMM_WG_O20 QGEMM_WG_O19, QGEMM_WG_F(19)
#define QGEMM_WG_O21 QGEMM_WG_O20, QGEMM_WG_F(20)
#define QGEMM_WG_O22 QGEMM_WG_O21, QGEMM_WG_F(21)
#define QGEMM_WG_O23 QGEMM_WG_O22, QGEMM_WG_F(22)
#define QGEMM_WG_O24 QGEMM_WG_O23, QGEMM_WG_F(23)
#define QGEMM_WG_O25 QGEMM_WG_O24, QGEMM_WG_F(24)
#define QGEMM_WG_O26 QGEMM_WG_O25, QGEMM_WG_F(25)
#define QGEMM_WG_O27 QGEMM_WG_O26, QGEMM_WG_F(26)
#define QGEMM_WG_O28 QGEMM_WG_O27, QGEMM_WG_F(27)
#define QGEMM_WG_O29 QGEMM_WG_O28, QGEMM_WG_F(28)
#define QGEMM_WG_O30 QGEMM_WG_O29, QGEMM_WG_F(29)
#define QGEMM_WG_O31 QGEMM_WG_O30, QGEMM_WG_F(30)
#define QGEMM_WG_O32 QGEMM_WG_O31, QGEMM_WG_F(31)

/// d += A . B for one k16 step of a warpgroup: A (64 x 16) in registers, each warp holding rows
/// 16 w .. 16 w + 15 in the mma.m16n8k16 A layout; B (16 x 8F) K-major behind `desc`. Fragment i
/// of d is the m16n8 accumulator of tokens 8i .. 8i + 7 (rows g and g + 8 of the warp's 16).
template <int kFrags>
struct WgmmaRs;

#define QGEMM_WGMMA_RS_ASM(N, T, ALIST, DESC, FRAGS)                                           \
  asm volatile("wgmma.mma_async.sync.aligned.m64n" N "k16.f32." T "." T " {" QGEMM_WG_D##FRAGS \
               "}, {" ALIST "}, " DESC ", 1, 1, 1, 0;\n"                                       \
               : QGEMM_WG_O##FRAGS                                                             \
               : "r"(a.r[0]), "r"(a.r[1]), "r"(a.r[2]), "r"(a.r[3]), "l"(desc))
#define QGEMM_WGMMA_RS(FRAGS, N, ALIST, DESC)                                   \
  template <>                                                                   \
  struct WgmmaRs<FRAGS> {                                                       \
    template <Elem kElem>                                                       \
    static QGEMM_DEVICE void run(FragC (&d)[FRAGS], const FragA& a, u64 desc) { \
      if constexpr (kElem == Elem::kBf16)                                       \
        QGEMM_WGMMA_RS_ASM(N, "bf16", ALIST, DESC, FRAGS);                      \
      else                                                                      \
        QGEMM_WGMMA_RS_ASM(N, "f16", ALIST, DESC, FRAGS);                       \
    }                                                                           \
  };
QGEMM_WGMMA_RS(1, "8", QGEMM_WG_Q(4, 5, 6, 7), "%8")
QGEMM_WGMMA_RS(2, "16", QGEMM_WG_Q(8, 9, 10, 11), "%12")
QGEMM_WGMMA_RS(3, "24", QGEMM_WG_Q(12, 13, 14, 15), "%16")
QGEMM_WGMMA_RS(4, "32", QGEMM_WG_Q(16, 17, 18, 19), "%20")
QGEMM_WGMMA_RS(5, "40", QGEMM_WG_Q(20, 21, 22, 23), "%24")
QGEMM_WGMMA_RS(6, "48", QGEMM_WG_Q(24, 25, 26, 27), "%28")
QGEMM_WGMMA_RS(7, "56", QGEMM_WG_Q(28, 29, 30, 31), "%32")
QGEMM_WGMMA_RS(8, "64", QGEMM_WG_Q(32, 33, 34, 35), "%36")
QGEMM_WGMMA_RS(9, "72", QGEMM_WG_Q(36, 37, 38, 39), "%40")
QGEMM_WGMMA_RS(10, "80", QGEMM_WG_Q(40, 41, 42, 43), "%44")
QGEMM_WGMMA_RS(11, "88", QGEMM_WG_Q(44, 45, 46, 47), "%48")
QGEMM_WGMMA_RS(12, "96", QGEMM_WG_Q(48, 49, 50, 51), "%52")
QGEMM_WGMMA_RS(13, "104", QGEMM_WG_Q(52, 53, 54, 55), "%56")
QGEMM_WGMMA_RS(14, "112", QGEMM_WG_Q(56, 57, 58, 59), "%60")
QGEMM_WGMMA_RS(15, "120", QGEMM_WG_Q(60, 61, 62, 63), "%64")
QGEMM_WGMMA_RS(16, "128", QGEMM_WG_Q(64, 65, 66, 67), "%68")
QGEMM_WGMMA_RS(17, "136", QGEMM_WG_Q(68, 69, 70, 71), "%72")
QGEMM_WGMMA_RS(18, "144", QGEMM_WG_Q(72, 73, 74, 75), "%76")
QGEMM_WGMMA_RS(19, "152", QGEMM_WG_Q(76, 77, 78, 79), "%80")
QGEMM_WGMMA_RS(20, "160", QGEMM_WG_Q(80, 81, 82, 83), "%84")
QGEMM_WGMMA_RS(21, "168", QGEMM_WG_Q(84, 85, 86, 87), "%88")
QGEMM_WGMMA_RS(22, "176", QGEMM_WG_Q(88, 89, 90, 91), "%92")
QGEMM_WGMMA_RS(23, "184", QGEMM_WG_Q(92, 93, 94, 95), "%96")
QGEMM_WGMMA_RS(24, "192", QGEMM_WG_Q(96, 97, 98, 99), "%100")
QGEMM_WGMMA_RS(25, "200", QGEMM_WG_Q(100, 101, 102, 103), "%104")
QGEMM_WGMMA_RS(26, "208", QGEMM_WG_Q(104, 105, 106, 107), "%108")
QGEMM_WGMMA_RS(27, "216", QGEMM_WG_Q(108, 109, 110, 111), "%112")
QGEMM_WGMMA_RS(28, "224", QGEMM_WG_Q(112, 113, 114, 115), "%116")
QGEMM_WGMMA_RS(29, "232", QGEMM_WG_Q(116, 117, 118, 119), "%120")
QGEMM_WGMMA_RS(30, "240", QGEMM_WG_Q(120, 121, 122, 123), "%124")
QGEMM_WGMMA_RS(31, "248", QGEMM_WG_Q(124, 125, 126, 127), "%128")
QGEMM_WGMMA_RS(32, "256", QGEMM_WG_Q(128, 129, 130, 131), "%132")

/// d += A . B on wgmma (see WgmmaRs): kElem is the fp16 / bf16 type of A and B.
template <Elem kElem, int kFrags>
QGEMM_DEVICE void wgmma_rs(FragC (&d)[kFrags], const FragA& a, u64 desc) {
  static_assert(kFrags >= 1 && kFrags <= 32, "wgmma N is 8 .. 256 (1 .. 32 fragments)");
  WgmmaRs<kFrags>::template run<kElem>(d, a, desc);
}

}  // namespace qgemm
