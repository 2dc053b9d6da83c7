// Warpgroup MMA on 8-bit operands (sm_90a): wgmma.mma_async with A and B both in shared memory
// behind descriptors, e4m3 x e4m3 -> f32 or s8 x s8 -> s32. PTX ISA: "Asynchronous Warpgroup Level
// Matrix Multiply-Accumulate Instructions" (wgmma.mma_async: the floating-point form takes
// scale-d, imm-scale-a and imm-scale-b, the integer form scale-d only; k = 32 for 8-bit types).
#pragma once

#include "common/base.cuh"
#include "ptx/wgmma.cuh"

namespace qgemm {

/// The m64nNk32 accumulator of a warpgroup: N / 2 32-bit registers per thread (f32 or s32 bits),
/// in fragments of 4 laid out as mma.m16n8's: register 4 j + i holds row lane / 4 + 8 (i / 2)
/// of the warp's 16 and token 8 j + 2 (lane % 4) + i % 2.
template <int kFrags>
struct Acc8 {
  u32 r[4 * kFrags];
};

// Operand lists of the accumulator registers of kFrags fragments ("+r": s32 or f32 bits).
#define QGEMM_W8_F(i) \
  "+r"(d.r[4 * i]), "+r"(d.r[4 * i + 1]), "+r"(d.r[4 * i + 2]), "+r"(d.r[4 * i + 3])
#define QGEMM_W8_O1 QGEMM_W8_F(0)
#define QGEMM_W8_O2 QGEMM_W8_O1, QGEMM_W8_F(1)
#define QGEMM_W8_O3 QGEMM_W8_O2, QGEMM_W8_F(2)
#define QGEMM_W8_O4 QGEMM_W8_O3, QGEMM_W8_F(3)
#define QGEMM_W8_O5 QGEMM_W8_O4, QGEMM_W8_F(4)
#define QGEMM_W8_O6 QGEMM_W8_O5, QGEMM_W8_F(5)
#define QGEMM_W8_O7 QGEMM_W8_O6, QGEMM_W8_F(6)
#define QGEMM_W8_O8 QGEMM_W8_O7, QGEMM_W8_F(7)
#define QGEMM_W8_O9 QGEMM_W8_O8, QGEMM_W8_F(8)
#define QGEMM_W8_O10 QGEMM_W8_O9, QGEMM_W8_F(9)
#define QGEMM_W8_O11 QGEMM_W8_O10, QGEMM_W8_F(10)
#define QGEMM_W8_O12 QGEMM_W8_O11, QGEMM_W8_F(11)
#define QGEMM_W8_O13 QGEMM_W8_O12, QGEMM_W8_F(12)
#define QGEMM_W8_O14 QGEMM_W8_O13, QGEMM_W8_F(13)
#define QGEMM_W8_O15 QGEMM_W8_O14, QGEMM_W8_F(14)
#define QGEMM_W8_O16 QGEMM_W8_O15, QGEMM_W8_F(15)
#define QGEMM_W8_O17 QGEMM_W8_O16, QGEMM_W8_F(16)
#define QGEMM_W8_O18 QGEMM_W8_O17, QGEMM_W8_F(17)
#define QGEMM_W8_O19 QGEMM_W8_O18, QGEMM_W8_F(18)
#define QGEMM_W8_O20 QGEMM_W8_O19, QGEMM_W8_F(19)
#define QGEMM_W8_O21 QGEMM_W8_O20, QGEMM_W8_F(20)
#define QGEMM_W8_O22 QGEMM_W8_O21, QGEMM_W8_F(21)
#define QGEMM_W8_O23 QGEMM_W8_O22, QGEMM_W8_F(22)
#define QGEMM_W8_O24 QGEMM_W8_O23, QGEMM_W8_F(23)
#define QGEMM_W8_O25 QGEMM_W8_O24, QGEMM_W8_F(24)
#define QGEMM_W8_O26 QGEMM_W8_O25, QGEMM_W8_F(25)
#define QGEMM_W8_O27 QGEMM_W8_O26, QGEMM_W8_F(26)
#define QGEMM_W8_O28 QGEMM_W8_O27, QGEMM_W8_F(27)
#define QGEMM_W8_O29 QGEMM_W8_O28, QGEMM_W8_F(28)
#define QGEMM_W8_O30 QGEMM_W8_O29, QGEMM_W8_F(29)
#define QGEMM_W8_O31 QGEMM_W8_O30, QGEMM_W8_F(30)
#define QGEMM_W8_O32 QGEMM_W8_O31, QGEMM_W8_F(31)

template <int kFrags>
struct WgmmaSs8;

#define QGEMM_WGMMA_SS8(FRAGS, N, DA, DB, SCALE_D)                                                 \
  template <>                                                                                      \
  struct WgmmaSs8<FRAGS> {                                                                         \
    template <bool kInt8, bool kAccumulate>                                                        \
    static QGEMM_DEVICE void run(Acc8<FRAGS>& d, u64 da, u64 db) {                                 \
      if constexpr (kInt8)                                                                         \
        asm volatile("wgmma.mma_async.sync.aligned.m64n" N "k32.s32.s8.s8 {" QGEMM_WG_D##FRAGS     \
                     "}, " DA ", " DB ", " SCALE_D ";\n"                                           \
                     : QGEMM_W8_O##FRAGS                                                           \
                     : "l"(da), "l"(db), "n"(kAccumulate ? 1 : 0));                                \
      else                                                                                         \
        asm volatile("wgmma.mma_async.sync.aligned.m64n" N "k32.f32.e4m3.e4m3 {" QGEMM_WG_D##FRAGS \
                     "}, " DA ", " DB ", " SCALE_D ", 1, 1;\n"                                     \
                     : QGEMM_W8_O##FRAGS                                                           \
                     : "l"(da), "l"(db), "n"(kAccumulate ? 1 : 0));                                \
    }                                                                                              \
  };
QGEMM_WGMMA_SS8(1, "8", "%4", "%5", "%6")
QGEMM_WGMMA_SS8(2, "16", "%8", "%9", "%10")
QGEMM_WGMMA_SS8(3, "24", "%12", "%13", "%14")
QGEMM_WGMMA_SS8(4, "32", "%16", "%17", "%18")
QGEMM_WGMMA_SS8(5, "40", "%20", "%21", "%22")
QGEMM_WGMMA_SS8(6, "48", "%24", "%25", "%26")
QGEMM_WGMMA_SS8(7, "56", "%28", "%29", "%30")
QGEMM_WGMMA_SS8(8, "64", "%32", "%33", "%34")
QGEMM_WGMMA_SS8(9, "72", "%36", "%37", "%38")
QGEMM_WGMMA_SS8(10, "80", "%40", "%41", "%42")
QGEMM_WGMMA_SS8(11, "88", "%44", "%45", "%46")
QGEMM_WGMMA_SS8(12, "96", "%48", "%49", "%50")
QGEMM_WGMMA_SS8(13, "104", "%52", "%53", "%54")
QGEMM_WGMMA_SS8(14, "112", "%56", "%57", "%58")
QGEMM_WGMMA_SS8(15, "120", "%60", "%61", "%62")
QGEMM_WGMMA_SS8(16, "128", "%64", "%65", "%66")
QGEMM_WGMMA_SS8(17, "136", "%68", "%69", "%70")
QGEMM_WGMMA_SS8(18, "144", "%72", "%73", "%74")
QGEMM_WGMMA_SS8(19, "152", "%76", "%77", "%78")
QGEMM_WGMMA_SS8(20, "160", "%80", "%81", "%82")
QGEMM_WGMMA_SS8(21, "168", "%84", "%85", "%86")
QGEMM_WGMMA_SS8(22, "176", "%88", "%89", "%90")
QGEMM_WGMMA_SS8(23, "184", "%92", "%93", "%94")
QGEMM_WGMMA_SS8(24, "192", "%96", "%97", "%98")
QGEMM_WGMMA_SS8(25, "200", "%100", "%101", "%102")
QGEMM_WGMMA_SS8(26, "208", "%104", "%105", "%106")
QGEMM_WGMMA_SS8(27, "216", "%108", "%109", "%110")
QGEMM_WGMMA_SS8(28, "224", "%112", "%113", "%114")
QGEMM_WGMMA_SS8(29, "232", "%116", "%117", "%118")
QGEMM_WGMMA_SS8(30, "240", "%120", "%121", "%122")
QGEMM_WGMMA_SS8(31, "248", "%124", "%125", "%126")
QGEMM_WGMMA_SS8(32, "256", "%128", "%129", "%130")

/// d (+)= A . B for one k32 step of a warpgroup: A (64 rows x 32, K-major) behind `da`, B
/// (8 kFrags tokens x 32, K-major) behind `db`; without kAccumulate d is overwritten.
template <bool kInt8, bool kAccumulate, int kFrags>
QGEMM_DEVICE void wgmma_ss8(Acc8<kFrags>& d, u64 da, u64 db) {
  static_assert(kFrags >= 1 && kFrags <= 32, "wgmma N is 8 .. 256 (1 .. 32 fragments)");
  WgmmaSs8<kFrags>::template run<kInt8, kAccumulate>(d, da, db);
}

/// NOTE: the compiler sees no data flow from wgmma_wait to the accumulators: this empty asm pins
/// them so no read moves above a wait and no write moves below a fence.
template <int kFrags>
QGEMM_DEVICE void wgmma_pin(Acc8<kFrags>& d) {
#pragma unroll
  for (int i = 0; i < 4 * kFrags; ++i) asm volatile("" : "+r"(d.r[i])::"memory");
}

}  // namespace qgemm
