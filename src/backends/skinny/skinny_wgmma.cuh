// skinny backend: wgmma.mma_async m64nNk16 (N = 32, 64) for the persistent kernel's M tiles 32 and 64, with the
// accumulators in mma.sync's C layout ([N / 8][4]: n8 block j holds rows g, g + 8 and columns 8j + 2t, 8j + 2t + 1
// of the warp's 16 rows), which is also wgmma's per-warp layout, so dev::write_partials takes them unchanged.
// Why wgmma: with mma.sync each of the 8 consumer warps pulled all M X rows of a unit through ldmatrix for its 16 W
// rows (80 KB of shared-memory reads per 16 KB of W at M = 64); device call ws-3 measured those kernels at 0.4-0.85x
// cuBLASLt, slower the larger M. A warpgroup's wgmma reads X once for 64 W rows, straight from shared memory.
#pragma once

#include <cstdint>

namespace tgemm::skinny::dev {

// K-major operand rows of 128 bytes, 128-byte swizzle as TMA wrote it, 8-row groups 1024 bytes apart (the base
// must be 1024-byte aligned); leading byte offset unused for this layout.
__device__ __forceinline__ uint64_t wg_desc_sw128(uint32_t addr) {
  return uint64_t((addr & 0x3FFFF) >> 4) | (uint64_t(1) << 16) | (uint64_t(1024 >> 4) << 32) | (uint64_t(1) << 62);
}
__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wg_wait_all() { asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory"); }

// d = A(64 x 16, desc a) * B(N x 16, desc b)^T + (scale_d ? d : 0); both operands K-major in shared memory.
template <int N, bool Bf16> struct WsWgmma;

// One specialisation per (N, dtype): inline asm names every accumulator register, so the register and operand lists
// are spelled out once per N and the instruction text once (TGEMM_WS_WGMMA).
#define TGEMM_WS_R32 \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
#define TGEMM_WS_R64 \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
#define TGEMM_WS_D32 \
  "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), \
  "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3])
#define TGEMM_WS_D64 \
  "+f"(d[0][0]), "+f"(d[0][1]), "+f"(d[0][2]), "+f"(d[0][3]), "+f"(d[1][0]), "+f"(d[1][1]), "+f"(d[1][2]), "+f"(d[1][3]), \
  "+f"(d[2][0]), "+f"(d[2][1]), "+f"(d[2][2]), "+f"(d[2][3]), "+f"(d[3][0]), "+f"(d[3][1]), "+f"(d[3][2]), "+f"(d[3][3]), \
  "+f"(d[4][0]), "+f"(d[4][1]), "+f"(d[4][2]), "+f"(d[4][3]), "+f"(d[5][0]), "+f"(d[5][1]), "+f"(d[5][2]), "+f"(d[5][3]), \
  "+f"(d[6][0]), "+f"(d[6][1]), "+f"(d[6][2]), "+f"(d[6][3]), "+f"(d[7][0]), "+f"(d[7][1]), "+f"(d[7][2]), "+f"(d[7][3])
#if defined(__CUDA_ARCH__)
#define TGEMM_WS_ASM(...) asm volatile(__VA_ARGS__)
#else
#define TGEMM_WS_ASM(...)
#endif
#define TGEMM_WS_WGMMA(N, NB, BF16, TY, IA, IB, IS)                                                          \
  template <> struct WsWgmma<N, BF16> {                                                                    \
    __device__ __forceinline__ static void mma(float (&d)[NB][4], uint64_t a, uint64_t b, uint32_t scale_d) { \
      TGEMM_WS_ASM("{\n.reg .pred p;\nsetp.ne.b32 p, %" #IS ", 0;\n"                                        \
                   "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TY "." TY " {" TGEMM_WS_R##N "}, %" #IA    \
                   ", %" #IB ", p, 1, 1, 0, 0;\n}\n"                                                         \
                   : TGEMM_WS_D##N                                                                         \
                   : "l"(a), "l"(b), "r"(scale_d));                                                        \
    }                                                                                                      \
  };

TGEMM_WS_WGMMA(32, 4, true, "bf16", 16, 17, 18)
TGEMM_WS_WGMMA(32, 4, false, "f16", 16, 17, 18)
TGEMM_WS_WGMMA(64, 8, true, "bf16", 32, 33, 34)
TGEMM_WS_WGMMA(64, 8, false, "f16", 32, 33, 34)
#undef TGEMM_WS_WGMMA
#undef TGEMM_WS_ASM
#undef TGEMM_WS_D64
#undef TGEMM_WS_D32
#undef TGEMM_WS_R64
#undef TGEMM_WS_R32

}  // namespace tgemm::skinny::dev
