// What a plain streaming kernel gets at the decode layers' sizes: the context of issue 4's "85% of the copy
// bandwidth" target, which divides a layer's bytes by its time and compares with a 2 GB device-to-device copy.
// For each size S: (a) a read-only kernel summing S bytes with 16-byte loads, (b) cudaMemcpyAsync of S / 2 bytes
// (S bytes moved), both as CUDA graphs of back-to-back launches over buffers rotated past the L2, as `tgemm bench
// --timing graph` does. Prints GB/s and the % of the 2 GB copy's rate.
// The read kernel also runs under programmatic dependent launch (PDL), as the skinny kernels launch, in three ways:
// every read after griddepcontrol.wait (what a GEMM may do with X, and with W unless told W is constant), the first
// chunk prefetched into L2 before the wait (what the skinny kernels do, safe), and every read before the wait (safe
// only where the previous kernel does not write W: the upper bound of overlap across launches).
// Then the skinny ws kernels' load path taken apart under PDL, one block per SM (docs/benchmarks.md runs 288-294):
// plain loads in one block per SM, a TMA ring of 1D bulk copies (read_ring), the same ring fed by the ws kernels' 3D
// tensor boxes with their work added piece by piece (read_ring_3d), and a GEMV that streams whole rows (gemv_ring).
// Then the ws stage geometry fetched with one 1D bulk copy per row piece (read_ring_rows; session 35, run 307).
// The _pct columns are against this probe's own in-graph 2 GB copy; docs/benchmarks.md rescales them to the decode
// bench's copy ceiling (pct x copy_GBps of the 2048 row / that ceiling).
// `stream_probe rs`: the library's row-stream kernel (skinny_rs_kernel.cuh) beside gemv_groups<4, 4, 2> in this harness;
// `stream_probe rstrace` (built with -DRS_TRACE): both kernels' timelines per launch.
//   nvcc -O3 -std=c++20 --expt-relaxed-constexpr -Isrc -Iinclude -gencode=arch=compute_90a,code=sm_90a scripts/dev/stream_probe.cu -o stream_probe
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <type_traits>
#include <utility>
#include <string>
#include <vector>

#define CK(x)                                                                          \
  do {                                                                                 \
    cudaError_t e_ = (x);                                                              \
    if (e_ != cudaSuccess) {                                                           \
      std::fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      return 1;                                                                        \
    }                                                                                  \
  } while (0)

// The trace build (-DRS_TRACE, `stream_probe rstrace`) stamps the row-stream kernel's and gemv_groups' timelines with
// plain stores (atomics stalled the stamping warp for a round trip each: runs 333-334): every launch writes the
// same [block][event] slots, so what a replay leaves is its last launch's (a steady one: the launches before it
// overlap its start as any other's). %globaltimer ticks every 256 ns on the H200 (run 333): events 0-15 get it, for
// the launch-wide timeline; every event gets clock64, for a block's own timeline (stage by stage).
#ifdef RS_TRACE
#include "core/ptx.cuh"  // nvcc -Isrc
constexpr int kTraceBlocks = 132, kTraceEvents = 16, kClkEvents = 160;
__device__ unsigned long long g_trace[kTraceBlocks * kTraceEvents];
__device__ long long g_clk[kTraceBlocks * kClkEvents];
__device__ __forceinline__ void rs_stamp(int e) {
  const unsigned long long t = tgemm::ptx::globaltimer();
  g_clk[blockIdx.x * kClkEvents + e] = clock64();
  if (e < kTraceEvents) g_trace[blockIdx.x * kTraceEvents + e] = t;
}
#define TGEMM_RS_STAMP(e) rs_stamp(e)
#endif
#include "backends/skinny/skinny_rs_kernel.cuh"  // nvcc -Isrc; defines TGEMM_RS_STAMP empty unless above

enum class Pdl { off, wait_first, prefetch_first, read_first };

// Four independent 16-byte loads in flight per thread per iteration; the xor keeps them live.
template <Pdl kPdl>
__global__ void __launch_bounds__(512) read_all(const uint4* __restrict__ p, size_t n, unsigned* out) {
  if constexpr (kPdl != Pdl::off) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  if constexpr (kPdl == Pdl::prefetch_first) {
    // The block's first iteration (4 loads per thread, 32 KB per block) warmed in L2: one 128-byte line per 8 threads.
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (threadIdx.x % 8 == 0)
      for (int j = 0; j < 4; ++j)
        if (i + j * stride < n) asm volatile("prefetch.global.L2 [%0];" ::"l"(p + i + j * stride));
  }
  if constexpr (kPdl == Pdl::wait_first || kPdl == Pdl::prefetch_first) asm volatile("griddepcontrol.wait;" ::: "memory");
  unsigned acc = 0;
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < n; i += 4 * stride) {
    const uint4 a = __ldcs(p + i), b = __ldcs(p + i + stride), c = __ldcs(p + i + 2 * stride), d = __ldcs(p + i + 3 * stride);
    acc ^= a.x ^ b.y ^ c.z ^ d.w;
  }
  for (; i < n; i += stride) acc ^= __ldcs(p + i).x;
  if constexpr (kPdl == Pdl::read_first) asm volatile("griddepcontrol.wait;" ::: "memory");
  if (acc == 0x12345678u) out[blockIdx.x] = acc;  // practically never: no store traffic
}

// The skinny ws kernels' shape of the same read, under PDL with every read after the wait: one block of 1024 threads
// per SM (the shared memory request keeps a second one off), eight 16-byte loads in flight per thread (128 KB per SM,
// the ws ring's order of bytes in flight), and either the grid-strided order above or a contiguous share of the
// buffer per block, as the ws kernels' row tiles are.
template <bool kContiguous, int kLoads = 8>
__global__ void __launch_bounds__(1024, 1) read_blocked(const uint4* __restrict__ p, size_t n, unsigned* out) {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
  size_t i, end, stride;
  if constexpr (kContiguous) {
    const size_t share = (n + gridDim.x - 1) / gridDim.x;
    i = blockIdx.x * share + threadIdx.x;
    end = (blockIdx.x + 1) * share < n ? (blockIdx.x + 1) * share : n;
    stride = blockDim.x;
  } else {
    i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    end = n;
    stride = size_t(gridDim.x) * blockDim.x;
  }
  unsigned acc = 0;
  for (; i + (kLoads - 1) * stride < end; i += kLoads * stride) {
    uint4 v[kLoads];
#pragma unroll
    for (int j = 0; j < kLoads; ++j) v[j] = __ldcs(p + i + j * stride);
#pragma unroll
    for (int j = 0; j < kLoads; ++j) acc ^= v[j].x ^ v[j].w;
  }
  for (; i < end; i += stride) acc ^= __ldcs(p + i).x;
  if (acc == 0x12345678u) out[blockIdx.x] = acc;
}

// The ring the TMA variants share: kStages slots of kStageBytes with full barriers (the producer's arrival and the
// copies' bytes) and empty ones (one arrival per consumer warp). Warps 0-7 consume; warp 8's first thread produces.
namespace ring {
constexpr int kStageBytes = 16 << 10, kConsumerWarps = 8, kThreads = 32 * (kConsumerWarps + 1);
__device__ __forceinline__ uint32_t sa(const void* q) { return uint32_t(__cvta_generic_to_shared(q)); }
__device__ __forceinline__ void wait(uint64_t* bar, uint32_t parity) {
  asm volatile("{ .reg .pred p; W: mbarrier.try_wait.parity.shared.b64 p, [%0], %1; @!p bra W; }" ::"r"(sa(bar)), "r"(parity)
               : "memory");
}
__device__ __forceinline__ void expect(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" ::"r"(sa(bar)), "r"(bytes) : "memory");
}
// A 1D bulk copy (TMA) of n bytes (a multiple of 16) that completes on bar.
__device__ __forceinline__ void bulk(void* dst, const void* src, uint32_t n, uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(sa(dst)), "l"(src),
               "r"(n), "r"(sa(bar))
               : "memory");
}
__device__ __forceinline__ void init_bar(uint64_t* bar, int count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(sa(bar)), "r"(count));
}

template <int kStages>
struct Ring {
  uint64_t full[kStages], empty[kStages];
  // Thread 0 initialises the barriers (and `extra`, a one-arrival barrier, if given); then the block barrier, the PDL
  // trigger and wait: every read of the kernel comes after it.
  __device__ void start(uint64_t* extra = nullptr) {
    if (threadIdx.x == 0) {
      for (int s = 0; s < kStages; ++s) {
        init_bar(&full[s], 1);
        init_bar(&empty[s], kConsumerWarps);
      }
      if (extra) init_bar(extra, 1);
      asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
    asm volatile("griddepcontrol.wait;" ::: "memory");
  }
  // The producer: for each step, wait until its slot is free, then issue(step, slot) (which arms full[slot]).
  template <class F>
  __device__ void produce(int steps, F&& issue) {
    for (int i = 0; i < steps; ++i) {
      const int s = i % kStages;
      if (i >= kStages) wait(&empty[s], ((i / kStages) - 1) & 1);
      issue(i, s);
    }
  }
  // A consumer warp: for each step, wait for its slot, use(step, slot), and free the slot.
  template <class F>
  __device__ void consume(int steps, F&& use) {
    for (int i = 0; i < steps; ++i) {
      const int s = i % kStages;
      wait(&full[s], (i / kStages) & 1);
      use(i, s);
      __syncwarp();
      if (threadIdx.x % 32 == 0) asm volatile("mbarrier.arrive.shared.b64 _, [%0];" ::"r"(sa(&empty[s])) : "memory");
    }
  }
};

// The GEMV probes' start: thread 0 initialises n full barriers (one arrival: the producer's), n empty ones (`consumers`
// arrivals: a group's warps) and X's; then the block barrier, the PDL trigger and wait: every read comes after it.
__device__ __forceinline__ void start_groups(uint64_t* full, uint64_t* empty, int n, int consumers, uint64_t* xbar) {
  if (threadIdx.x == 0) {
    for (int i = 0; i < n; ++i) {
      init_bar(&full[i], 1);
      init_bar(&empty[i], consumers);
    }
    init_bar(xbar, 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
  asm volatile("griddepcontrol.wait;" ::: "memory");
}

// A block's contiguous share of `bytes`, in whole stages, and the 1D copy of its step i into slot s.
struct Share {
  size_t b0, b1;
  int steps;
  __device__ explicit Share(size_t bytes) {
    const size_t share = (bytes / gridDim.x + kStageBytes - 1) / kStageBytes * kStageBytes;
    b0 = blockIdx.x * share;
    b1 = b0 + share < bytes ? b0 + share : bytes;
    steps = b1 > b0 ? int((b1 - b0 + kStageBytes - 1) / kStageBytes) : 0;
  }
  __device__ void copy(const char* p, int i, unsigned char* slot, uint64_t* full) const {
    const size_t off = b0 + size_t(i) * kStageBytes;
    const uint32_t n = uint32_t(off + kStageBytes <= b1 ? kStageBytes : b1 - off);
    expect(full, n);
    bulk(slot, p + off, n, full);
  }
};
}  // namespace ring

// The ws kernels' load path without their math: one thread issues 1D bulk copies (TMA) of 16 KB into a ring of
// kStages slots; the eight consumer warps wait for each stage, read one 16-byte word per thread of it, and free the
// slot. A contiguous share per block, as read_blocked<true>.
template <int kStages>
__global__ void __launch_bounds__(ring::kThreads, 1) read_ring(const char* __restrict__ p, size_t bytes, unsigned* out) {
  using namespace ring;
  extern __shared__ __align__(1024) unsigned char buf[];
  __shared__ __align__(8) Ring<kStages> r;
  const Share sh(bytes);
  r.start();
  if (threadIdx.x / 32 == kConsumerWarps) {
    if (threadIdx.x == 32 * kConsumerWarps)
      r.produce(sh.steps, [&](int i, int s) { sh.copy(p, i, buf + size_t(s) * kStageBytes, &r.full[s]); });
    return;
  }
  unsigned acc = 0;
  r.consume(sh.steps, [&](int, int s) {
    acc ^= reinterpret_cast<const uint4*>(buf + size_t(s) * kStageBytes)[threadIdx.x % (kStageBytes / 16)].x;
  });
  if (acc == 0x12345678u) out[blockIdx.x] = acc;
}

// The ring fed by 1D bulk copies of whole-row pieces, the ws kernels' stage geometry without a tensor map: a stage
// is R rows x (16 KB / R) contiguous bytes of each, one copy per row, issued by one thread or by lanes 0..R-1 of the
// producer warp. Block b takes W rows [32b, 32b + 32) of [rows][8 KB], each group of R rows in K order (a ws tile's).
template <int kStages>
__global__ void __launch_bounds__(ring::kThreads, 1) read_ring_rows(const char* __restrict__ w, int R, int warp_issue, unsigned* out) {
  using namespace ring;
  constexpr int kRowBytes = 8192, kBlockRows = 32;
  extern __shared__ __align__(1024) unsigned char buf[];
  __shared__ __align__(8) Ring<kStages> r;
  const int C = kStageBytes / R, per_group = kRowBytes / C, steps = (kBlockRows / R) * per_group;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  r.start();
  if (warp == kConsumerWarps) {
    for (int i = 0; i < steps; ++i) {
      const int s = i % kStages;
      if (i >= kStages) wait(&r.empty[s], ((i / kStages) - 1) & 1);
      const size_t row0 = size_t(blockIdx.x) * kBlockRows + (i / per_group) * R, c0 = size_t(i % per_group) * C;
      unsigned char* slot = buf + size_t(s) * kStageBytes;
      if (lane == 0) expect(&r.full[s], kStageBytes);
      __syncwarp();
      if (warp_issue) {
        if (lane < R) bulk(slot + lane * C, w + (row0 + lane) * kRowBytes + c0, C, &r.full[s]);
      } else if (lane == 0) {
        for (int q = 0; q < R; ++q) bulk(slot + q * C, w + (row0 + q) * kRowBytes + c0, C, &r.full[s]);
      }
    }
    return;
  }
  unsigned acc = 0;
  r.consume(steps, [&](int, int s) {
    acc ^= reinterpret_cast<const uint4*>(buf + size_t(s) * kStageBytes)[threadIdx.x % (kStageBytes / 16)].x;
  });
  if (acc == 0x12345678u) out[blockIdx.x] = acc;
}

// The same ring fed the way the ws kernels fetch W: 3D tensor copies of a [U units][R rows][64 elements] box with the
// 128-byte swizzle (U x R x 128 = 16 KB a stage), so that a stage holds U x 128 contiguous bytes of each of R rows.
// Block b takes W rows [32b, 32b + 32): for each group of R rows, the K units in steps of U (a ws tile's order).
// W is [rows][k] bf16 with k = 4096 (the map's units dimension is k / 64).
// flags, each a piece of the ws kernels' work added to the bare ring: kStore, a write of 32 words per block at the end
// (a GEMV's tile of Y: the grid then has stores to drain before the next launch's release); kX, a 512-byte bulk copy
// of X (L2-resident, as M = 1's four units) into each stage beside W; kMma, each consumer warp's ldmatrix + four
// mma.m16n8k16 per stage on its 16 rows (the ws kernels' M = 1 work); kEpilogue, the tile's partials through shared
// memory, a barrier of the 256 consumers and the fixed-order sum before the store.
enum : int { kStore = 1, kX = 2, kMma = 4, kEpilogue = 8 };
__global__ void __launch_bounds__(ring::kThreads, 1) read_ring_3d(const __grid_constant__ CUtensorMap map, int U, int R, int units,
                                                                 unsigned* out, int flags, const char* x) {
  using namespace ring;
  constexpr int kStages = 4;
  extern __shared__ __align__(1024) unsigned char ring_raw[];
  unsigned char* buf = reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(ring_raw) + 1023) & ~uintptr_t(1023));
  __shared__ __align__(8) Ring<kStages> r;
  __shared__ __align__(1024) unsigned char xring[kStages * 1024];
  __shared__ float part[8 * 16];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int per_group = units / U, steps = (32 / R) * per_group;
  if (tid == 0) asm volatile("prefetch.tensormap [%0];" ::"l"(&map) : "memory");
  r.start();
  if (warp == kConsumerWarps) {
    if (tid == 32 * kConsumerWarps)
      r.produce(steps, [&](int i, int s) {
        const int row = blockIdx.x * 32 + (i / per_group) * R, u0 = (i % per_group) * U;
        expect(&r.full[s], kStageBytes + ((flags & kX) ? 512u : 0u));
        if (flags & kX) bulk(xring + s * 1024, x + u0 * 128, 512, &r.full[s]);
        asm volatile(
            "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];"
            ::"r"(sa(buf + size_t(s) * kStageBytes)), "l"(&map), "r"(0), "r"(row), "r"(u0), "r"(sa(&r.full[s]))
            : "memory");
      });
    return;
  }
  unsigned acc = 0;
  float d[4] = {0.f, 0.f, 0.f, 0.f};
  r.consume(steps, [&](int, int s) {
    if (flags & kMma) {
      // Warp w: 16 rows of the stage's 128 row-units (its unit and row block), four k16 steps of 128 swizzled bytes.
      const uint32_t base = sa(buf + size_t(s) * kStageBytes) + uint32_t(warp * 16 + (lane & 15)) * 128;
      const uint32_t xw = *reinterpret_cast<const uint32_t*>(xring + s * 1024 + (lane & 3) * 4);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        uint32_t a0, a1, a2, a3;
        const uint32_t addr = base + ((uint32_t(kk * 2 + (lane >> 4)) ^ uint32_t(lane & 7)) * 16);
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                     : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3) : "r"(addr));
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(xw), "r"(xw));
      }
    } else {
      acc ^= reinterpret_cast<const uint4*>(buf + size_t(s) * kStageBytes)[tid % (kStageBytes / 16)].x;
    }
  });
  acc ^= __float_as_uint(d[0] + d[1] + d[2] + d[3]);
  if (flags & kEpilogue) {
    if (lane % 4 == 0) part[warp * 16 + lane / 4] = __uint_as_float(acc);
    asm volatile("bar.sync 1, 256;" ::: "memory");
    if (tid < 32) acc = __float_as_uint(part[tid % 16] + part[16 + tid % 16] + part[32 + tid % 16] + part[48 + tid % 16]);
    asm volatile("bar.sync 1, 256;" ::: "memory");
  }
  if ((flags & kStore) && tid < 32) out[blockIdx.x * 32 + tid] = acc;
  else if (acc == 0x12345678u) out[blockIdx.x] = acc;
}

// W = [rows][4096] bf16 at p as the ws kernels' 3D view; box [U][R][64].
bool make_map_3d(CUtensorMap* m, const void* p, int rows, int U, int R) {
  using Encode = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*, const cuuint64_t*,
                              const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave, CUtensorMapSwizzle,
                              CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
  static Encode encode = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q;
    cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q);
    return reinterpret_cast<Encode>(f);
  }();
  const cuuint64_t dims[3] = {64, cuuint64_t(rows), 4096 / 64};
  const cuuint64_t strides[2] = {4096 * 2, 128};
  const cuuint32_t box[3] = {64, cuuint32_t(R), cuuint32_t(U)}, es[3] = {1, 1, 1};
  return encode && encode(m, CU_TENSOR_MAP_DATA_TYPE_UINT16, 3, const_cast<void*>(p), dims, strides, box, es,
                          CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                          CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// A GEMV of M = 1 on the 1D ring: X (k = 4096 bf16, 8 KB) copied into shared memory once after the wait; each stage
// is 16 KB of whole W rows (two rows of 8 KB), and each consumer thread takes 16-byte words of it (consecutive threads,
// consecutive words: no bank conflicts without a swizzle), multiplies them with X's matching eight elements in fp32,
// and at the end the block's sums go through warp shuffles and shared memory to a store of 32 words, as a tile's Y.
__global__ void __launch_bounds__(ring::kThreads, 1) gemv_ring(const char* __restrict__ w, size_t bytes, const char* x, unsigned* out) {
  using namespace ring;
  constexpr int kStages = 4, kK = 4096;
  extern __shared__ __align__(1024) unsigned char buf[];
  __shared__ __align__(8) Ring<kStages> r;
  __shared__ __align__(8) uint64_t xbar;
  __shared__ __align__(128) unsigned char xs[kK * 2];
  __shared__ float red[kConsumerWarps];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const Share sh(bytes);
  r.start(&xbar);
  if (warp == kConsumerWarps) {
    if (tid == 32 * kConsumerWarps) {
      expect(&xbar, kK * 2);
      bulk(xs, x, kK * 2, &xbar);
      r.produce(sh.steps, [&](int i, int s) { sh.copy(w, i, buf + size_t(s) * kStageBytes, &r.full[s]); });
    }
    return;
  }
  wait(&xbar, 0);
  float acc = 0.f;
  r.consume(sh.steps, [&](int, int s) {
#pragma unroll
    for (int pass = 0; pass < kStageBytes / 16 / 256; ++pass) {
      const int word = pass * 256 + tid;  // 16-byte word of the stage; its k is word * 8 mod kK
      const uint4 wv = reinterpret_cast<const uint4*>(buf + size_t(s) * kStageBytes)[word];
      const uint4 xv = reinterpret_cast<const uint4*>(xs)[word % (kK / 8)];
      const __nv_bfloat162* wp = reinterpret_cast<const __nv_bfloat162*>(&wv);
      const __nv_bfloat162* xp = reinterpret_cast<const __nv_bfloat162*>(&xv);
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const float2 a = __bfloat1622float2(wp[j]), b = __bfloat1622float2(xp[j]);
        acc = fmaf(a.x, b.x, fmaf(a.y, b.y, acc));
      }
    }
  });
#pragma unroll
  for (int o = 16; o; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  if (lane == 0) red[warp] = acc;
  asm volatile("bar.sync 1, 256;" ::: "memory");
  if (tid < 32) out[blockIdx.x * 32 + tid] = __float_as_uint(red[tid % 8] + red[(tid + 1) % 8]);
}

// One 16 KB stage of whole W rows of K = kK (bf16) against X [kK] in shared memory, as the GEMV probes multiply it:
// thread gt of a group's W warps takes words gt, gt + 32 W, ... (every word of the stage once); its fp32 sums per row
// of the stage, even and odd elements apart.
template <int W, int kK_>
struct GemvStage {
  static constexpr int kK = kK_, kRowWords = kK / 8, kRows = ring::kStageBytes / (kK * 2);
  static constexpr int kPasses = ring::kStageBytes / 16 / (32 * W), kPassesPerRow = kPasses / kRows;
  static_assert(kPasses * 32 * W * 16 == ring::kStageBytes && kPassesPerRow >= 1, "whole passes per row");
  __device__ static void dot(const uint4* st, const unsigned char* xs, int gt, float (&acc)[kRows][2]) {
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) {
      const int word = pass * 32 * W + gt;
      const uint4 wv = st[word];
      const uint4 xv = reinterpret_cast<const uint4*>(xs)[word % kRowWords];
      const uint32_t wa[4] = {wv.x, wv.y, wv.z, wv.w}, xa[4] = {xv.x, xv.y, xv.z, xv.w};
      float* a = acc[pass / kPassesPerRow];
#pragma unroll
      for (int q = 0; q < 4; ++q) {
        a[0] = fmaf(__uint_as_float(wa[q] << 16), __uint_as_float(xa[q] << 16), a[0]);
        a[1] = fmaf(__uint_as_float(wa[q] & 0xffff0000u), __uint_as_float(xa[q] & 0xffff0000u), a[1]);
      }
    }
  }
};

// gemv_ring made a real GEMV of M = 1 (K = 4096), a piece at a time towards the row-stream kernel
// (skinny_rs_kernel.cuh; session 37): each stage's two rows summed apart (per-lane sums, the slot handed back, then a
// warp butterfly per row and one shared-memory slot per row and warp), the block's rows summed in warp order at the
// end and stored as fp32. Block b takes rows [N b / B, N (b + 1) / B) (B = 128 at N = 4096: 32 rows, the probe's
// 256 KB shares; B = 132: 31 or 32 rows, the row-stream kernel's split). X is whichever buffer the launch passes.
// G groups of W consumer warps, each group its own ring of SG slots, stage s going to group s % G (session 38): G = 1,
// W = 8 is session 37's gemv_rows, G = 4, W = 4, SG = 2 the row-stream kernel's structure with this fully unrolled math.
template <int G, int W, int SG>
__global__ void __launch_bounds__(32 * (G * W + 1), 1) gemv_groups(const char* __restrict__ w, int n, const char* x, float* y) {
  using ring::bulk;
  using ring::expect;
  using ring::sa;
  using ring::wait;
  using ring::kStageBytes;
  using Stage = GemvStage<W, 4096>;
  constexpr int kK = Stage::kK, kRowsPerStage = Stage::kRows, kMaxRows = 128;
  extern __shared__ __align__(1024) unsigned char buf[];
  __shared__ __align__(8) uint64_t full[G * SG], empty[G * SG], xbar;
  __shared__ __align__(128) unsigned char xs[kK * 2];
  __shared__ float red[kMaxRows][W];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int r0 = int(int64_t(n) * blockIdx.x / gridDim.x), r1 = int(int64_t(n) * (blockIdx.x + 1) / gridDim.x);
  const int rows = r1 - r0 < kMaxRows ? r1 - r0 : kMaxRows, steps = (rows + kRowsPerStage - 1) / kRowsPerStage;
  if (tid == 0) TGEMM_RS_STAMP(0);
  ring::start_groups(full, empty, G * SG, W, &xbar);
  if (tid == 0) TGEMM_RS_STAMP(1);
  if (warp == G * W) {
    if (lane == 0) {
      expect(&xbar, kK * 2);
      bulk(xs, x, kK * 2, &xbar);
      for (int i = 0; i < steps; ++i) {
        const int g = i % G, j = i / G, slot = g * SG + j % SG;
        if (j >= SG) wait(&empty[slot], ((j / SG) - 1) & 1);
        const int nr = rows - i * kRowsPerStage < kRowsPerStage ? rows - i * kRowsPerStage : kRowsPerStage;
        expect(&full[slot], uint32_t(nr) * kK * 2);
        bulk(buf + size_t(slot) * kStageBytes, w + (size_t(r0) + size_t(i) * kRowsPerStage) * kK * 2, uint32_t(nr) * kK * 2,
             &full[slot]);
        if (i == 0) TGEMM_RS_STAMP(2);
        if (i < 32) TGEMM_RS_STAMP(80 + i);
      }
      TGEMM_RS_STAMP(3);
    }
    return;
  }
  const int g = warp / W, wg = warp % W, gt = wg * 32 + lane;
  wait(&xbar, 0);
  if (tid == 0) TGEMM_RS_STAMP(4);
  for (int j = 0, i = g; i < steps; ++j, i += G) {
    const int slot = g * SG + j % SG;
    wait(&full[slot], (j / SG) & 1);
    if (j < 8 && wg == 0 && lane == 0) TGEMM_RS_STAMP(16 + 8 * g + j);
    const uint4* st = reinterpret_cast<const uint4*>(buf + size_t(slot) * kStageBytes);
    float acc[kRowsPerStage][2] = {};
    Stage::dot(st, xs, gt, acc);
    __syncwarp();
    if (lane == 0) asm volatile("mbarrier.arrive.shared.b64 _, [%0];" ::"r"(sa(&empty[slot])) : "memory");
    if (j < 8 && wg == 0 && lane == 0) TGEMM_RS_STAMP(48 + 8 * g + j);
    if (lane == 0 && j == 1) TGEMM_RS_STAMP(128 + warp);
    if (lane == 0 && i + G >= steps) TGEMM_RS_STAMP(112 + warp);
#pragma unroll
    for (int q = 0; q < kRowsPerStage; ++q) {
      float v = acc[q][0] + acc[q][1];
#pragma unroll
      for (int o = 16; o; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
      if (lane == 0 && i * kRowsPerStage + q < rows) red[i * kRowsPerStage + q][wg] = v;
    }
    if (lane == 0 && i + G >= steps) TGEMM_RS_STAMP(144 + warp);
  }
  if (wg == 0 && lane == 0) TGEMM_RS_STAMP(8 + g);
  __syncwarp();  // bar.sync is .aligned: whole warps (as rs_consumer_sync)
  asm volatile("bar.sync 1, %0;" ::"n"(32 * G * W) : "memory");
  if (tid == 0) TGEMM_RS_STAMP(5);
  if (tid < rows) {
    float v = red[tid][0];
#pragma unroll
    for (int q = 1; q < W; ++q) v += red[tid][q];
    y[r0 + tid] = v;
  }
  if (tid == 0) TGEMM_RS_STAMP(6);
  if (tid == 0) TGEMM_RS_STAMP(7);
}

// gemv_groups<G, W, SG> with the stages handed out at run time (session 40): a stage (two rows of K = 4096) is a unit;
// block b takes units b, b + B, ... for its first kStatic units (no atomics), then claims the rest one at a time from
// ctr[0] (one claim in flight ahead of its use), so that a block on a fast SM takes more of the tail. A group sums its
// stage's rows at once (named barrier 2 + g over its W warps) and stores them; the last block's producer to find no unit
// left resets ctr[0..1] for the next launch. run 339's trace: the blocks' exits spread over 3.5 us, the launch ends at
// the slowest. Run 344: slower at every size (32 MiB: 10.04 us with every unit claimed, 9.28 with 8 static units a block,
// against 9.20 for gemv_groups; the same bits as gemv_groups). The spread is mostly noise from launch to launch (per
// block: 250 ns systematic, 550 ns launch to launch), which claims cannot balance, and a claim's round trip delays the
// stage it names.
template <int G, int W, int SG, int kStatic>
__global__ void __launch_bounds__(32 * (G * W + 1), 1) gemv_dyn(const char* __restrict__ w, int n, const char* x, float* y,
                                                                 unsigned* ctr) {
  using ring::bulk;
  using ring::expect;
  using ring::sa;
  using ring::wait;
  using ring::kStageBytes;
  using Stage = GemvStage<W, 4096>;
  constexpr int kK = Stage::kK, kR = Stage::kRows;
  extern __shared__ __align__(1024) unsigned char buf[];
  __shared__ __align__(8) uint64_t full[G * SG], empty[G * SG], xbar;
  __shared__ __align__(128) unsigned char xs[kK * 2];
  __shared__ int unit_of[G * SG];
  __shared__ float red[G][2][kR][W];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int U = n / kR, B = gridDim.x, ks = U / B < kStatic ? U / B : kStatic;
  ring::start_groups(full, empty, G * SG, W, &xbar);
  if (warp == G * W) {
    if (lane == 0) {
      expect(&xbar, kK * 2);
      bulk(xs, x, kK * 2, &xbar);
      int next = ks > 0 ? -1 : B * ks + int(atomicAdd(ctr, 1u));
      for (int j = 0;; ++j) {
        int u;
        if (j < ks) {
          u = int(blockIdx.x) + B * j;
          if (j == ks - 1) next = B * ks + int(atomicAdd(ctr, 1u));
        } else {
          u = next;
          if (u < U) next = B * ks + int(atomicAdd(ctr, 1u));
        }
        const int g = j % G, q = j / G, slot = g * SG + q % SG;
        if (q >= SG) wait(&empty[slot], ((q / SG) - 1) & 1);
        if (u >= U) {  // no unit left: every group's next slot gets the end mark
          for (int e = 0; e < G; ++e) {
            const int je = j + e, ge = je % G, qe = je / G, se = ge * SG + qe % SG;
            if (e > 0 && qe >= SG) wait(&empty[se], ((qe / SG) - 1) & 1);
            unit_of[se] = -1;
            asm volatile("mbarrier.arrive.shared.b64 _, [%0];" ::"r"(sa(&full[se])) : "memory");
          }
          if (atomicAdd(ctr + 1, 1u) == unsigned(B - 1)) {
            ctr[0] = 0;
            ctr[1] = 0;
          }
          break;
        }
        unit_of[slot] = u;
        expect(&full[slot], kStageBytes);
        bulk(buf + size_t(slot) * kStageBytes, w + size_t(u) * kStageBytes, kStageBytes, &full[slot]);
      }
    }
    return;
  }
  const int g = warp / W, wg = warp % W, gt = wg * 32 + lane;
  wait(&xbar, 0);
  for (int q = 0;; ++q) {
    const int slot = g * SG + q % SG;
    wait(&full[slot], (q / SG) & 1);
    const int u = unit_of[slot];
    if (u < 0) break;
    const uint4* st = reinterpret_cast<const uint4*>(buf + size_t(slot) * kStageBytes);
    float acc[kR][2] = {};
    Stage::dot(st, xs, gt, acc);
    __syncwarp();
    if (lane == 0) asm volatile("mbarrier.arrive.shared.b64 _, [%0];" ::"r"(sa(&empty[slot])) : "memory");
#pragma unroll
    for (int r = 0; r < kR; ++r) {
      float v = acc[r][0] + acc[r][1];
#pragma unroll
      for (int o = 16; o; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
      if (lane == 0) red[g][q & 1][r][wg] = v;
    }
    __syncwarp();
    asm volatile("bar.sync %0, %1;" ::"r"(2 + g), "n"(32 * W) : "memory");
    if (gt < kR) {
      float v = red[g][q & 1][gt][0];
#pragma unroll
      for (int c = 1; c < W; ++c) v += red[g][q & 1][gt][c];
      y[size_t(u) * kR + gt] = v;
    }
  }
}

// Dynamic shared memory of the one-block-per-SM variants: a second block does not fit beside it (kWsSoloSmemBytes).
constexpr size_t kSoloSmem = 150 << 10;

// One launch of `kernel`, with the programmatic-serialization attribute where `pdl` (a graph's launches then overlap as
// the skinny kernels' do) and `smem` bytes of dynamic shared memory.
template <class... P, class... A>
void launch(void (*kernel)(P...), int blocks, int threads, size_t smem, bool pdl, cudaStream_t s, A... args) {
  if (smem) cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
  cudaLaunchConfig_t cfg = {};
  cudaLaunchAttribute attr = {};
  cfg.gridDim = dim3(blocks);
  cfg.blockDim = dim3(threads);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = s;
  if (pdl) {
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
  }
  cudaLaunchKernelEx(&cfg, kernel, P(args)...);
}

template <class F>
float graph_us(F&& enqueue, int launches, cudaStream_t s) {
  cudaGraph_t g;
  cudaGraphExec_t ge;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  for (int i = 0; i < launches; ++i) enqueue(i, s);
  cudaStreamEndCapture(s, &g);
  cudaGraphInstantiate(&ge, g, 0);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  cudaGraphLaunch(ge, s);  // warm-up and upload
  std::vector<float> t;
  for (int r = 0; r < 15; ++r) {
    cudaEventRecord(e0, s);
    cudaGraphLaunch(ge, s);
    cudaEventRecord(e1, s);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    t.push_back(ms * 1e3f / launches);
  }
  cudaGraphExecDestroy(ge);
  cudaGraphDestroy(g);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

int main(int argc, char** argv) {
  const bool gemv_only = argc > 1 && std::string(argv[1]) == "gemv";
  const bool groups_only = argc > 1 && std::string(argv[1]) == "groups";
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const size_t pool = size_t(4) << 30;  // rotated through: every size's buffers together exceed the 60 MB L2
  char *src = nullptr, *dst = nullptr;
  unsigned* out = nullptr;
  CK(cudaMalloc(&src, pool));
  CK(cudaMalloc(&dst, pool));
  CK(cudaMalloc(&out, 1 << 20));
  CK(cudaMemset(src, 1, pool));
  void* xbuf = nullptr;  // X of the GEMV variants: [1][4096] bf16 (L2-resident)
  CK(cudaMalloc(&xbuf, 8192));
  CK(cudaMemset(xbuf, 0, 8192));
  const double mb = 1 << 20;
  // Per size: the operand sets rotated through (past the L2) and the launches per graph, a multiple of the sets.
  auto rotation = [&](size_t bytes) {
    const int sets = int(std::max<size_t>(2, std::min<size_t>(pool / bytes, (size_t(256) << 20) / bytes + 2)));
    return std::pair<int, int>(sets, std::max(sets, int(std::min<size_t>(512, (size_t(2) << 30) / bytes)) / sets * sets));
  };
  // A device-to-device copy moving `bytes` (bytes / 2 read, bytes / 2 written), per launch of such a graph.
  auto copy_us = [&](size_t bytes, int sets, int launches) {
    return graph_us([&](int i, cudaStream_t st) {
      cudaMemcpyAsync(dst + size_t(i % sets) * (bytes / 2), src + size_t(i % sets) * (bytes / 2), bytes / 2,
                      cudaMemcpyDeviceToDevice, st);
    }, launches, s);
  };
  // The modes' size loop: the 2 GB copy first (each list starts with it: the % of copy reference, cref), then per size
  // its operand sets rotated past the L2 and the launches per graph; body returns nonzero to stop (a CUDA error).
  auto for_sizes = [&](std::initializer_list<size_t> sizes, auto&& body) {
    double cref = 0;
    for (size_t bytes : sizes) {
      const std::pair<int, int> rot = rotation(bytes);
      const float cp = copy_us(bytes, rot.first, rot.second);
      if (cref == 0) cref = bytes / (cp * 1e-6) / 1e9;
      if (bytes > (size_t(1) << 30)) continue;
      if (const int rc = body(bytes, rot.first, rot.second, cref)) return rc;
    }
    return 0;
  };
  double ref = 0;
  // The library's m1 row-stream kernel over W [n][4096] bf16 at src + set * bytes, X [1][4096] (xbuf, or rotated: dst +
  // set * bytes + 1 MiB), Y [1][n] bf16 at dst + set * bytes; `blocks` as TGEMM_SKINNY_RS_BLOCKS would set them.
  using tgemm::skinny::RsParams;
  auto rs_params = [&](size_t bytes, int set, int blocks, bool xrot, int hint) {
    RsParams rp;
    const int n = int(bytes / 8192);
    rp.op.w = src + size_t(set) * bytes;
    rp.op.x = xrot ? static_cast<const void*>(dst + size_t(set) * bytes + (1 << 20)) : xbuf;
    rp.op.y = dst + size_t(set) * bytes;
    rp.op.ldx = rp.op.ldw = rp.op.k = 4096;
    rp.op.ldy = rp.op.n = n;
    rp.op.m = 1;
    rp.plan = tgemm::skinny::rs_plan(4096, 1);
    rp.blocks = tgemm::skinny::rs_blocks(n, blocks);
    rp.w_evict_first = hint;
    return rp;
  };
  const size_t rs_smem = size_t(std::max<int64_t>(tgemm::skinny::rs_smem_bytes(tgemm::skinny::rs_plan(4096, 1), 1, 1),
                                                  tgemm::skinny::kWsSoloSmemBytes));
  auto rs_launch = [&](size_t bytes, int set, int blocks, bool xrot, int hint, cudaStream_t st) {
    const RsParams rp = rs_params(bytes, set, blocks, xrot, hint);
    launch(tgemm::skinny::skinny_rs_kernel<__nv_bfloat16, 1>, int(rp.blocks), tgemm::skinny::rs_threads(1), rs_smem, true, st, rp);
  };
  auto probe_launch = [&](size_t bytes, int set, int blocks, cudaStream_t st) {
    launch(gemv_groups<4, 4, 2>, blocks, 32 * 17, kSoloSmem, true, st, static_cast<const char*>(src + size_t(set) * bytes),
           int(bytes / 8192), static_cast<const char*>(xbuf), reinterpret_cast<float*>(dst + size_t(set) * bytes));
  };
#ifdef RS_TRACE
  // `stream_probe rstrace`: 64-launch graphs of each kernel at 32 and 48 MiB, replayed 16 times; the stamps of each
  // replay's last launch to rsclk_<kernel>_<MB>.csv: per (replay, block) the globaltimer of events 0-15 (ns) and clock64 of
  // every event, both after the block's release (event 1), -1 where the event did not happen.
  if (argc > 1 && std::string(argv[1]) == "rstrace") {
    for (size_t bytes : {size_t(32) << 20, size_t(48) << 20}) {
      const std::pair<int, int> rot = rotation(bytes);
      const int sets = rot.first, blocks = 128, launches = 64;
      for (int kind = 0; kind < 2; ++kind) {
        cudaGraph_t g;
        cudaGraphExec_t ge;
        CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
        for (int i = 0; i < launches; ++i) {
          if (kind == 0) probe_launch(bytes, i % sets, blocks, s);
          else rs_launch(bytes, i % sets, blocks, false, 1, s);
        }
        CK(cudaStreamEndCapture(s, &g));
        CK(cudaGraphInstantiate(&ge, g, 0));
        CK(cudaGraphLaunch(ge, s));
        CK(cudaStreamSynchronize(s));
        const char* name = kind == 0 ? "g4w4s2" : "m1_rs_b128";
        FILE* f = std::fopen((std::string("rsclk_") + name + "_" + std::to_string(bytes >> 20) + ".csv").c_str(), "w");
        if (!f) return 1;
        std::fprintf(f, "replay,block");
        for (int e = 0; e < kTraceEvents; ++e) std::fprintf(f, ",t%d", e);
        for (int e = 0; e < kClkEvents; ++e) std::fprintf(f, ",c%d", e);
        std::fprintf(f, "\n");
        void *tr0 = nullptr, *clk0 = nullptr;
        CK(cudaGetSymbolAddress(&tr0, g_trace));
        CK(cudaGetSymbolAddress(&clk0, g_clk));
        std::vector<unsigned long long> tr(size_t(kTraceBlocks) * kTraceEvents);
        std::vector<long long> clk(size_t(kTraceBlocks) * kClkEvents);
        for (int r = 0; r < 16; ++r) {
          CK(cudaMemsetAsync(tr0, 0, tr.size() * sizeof(tr[0]), s));
          CK(cudaMemsetAsync(clk0, 0, clk.size() * sizeof(clk[0]), s));
          CK(cudaGraphLaunch(ge, s));
          CK(cudaStreamSynchronize(s));
          CK(cudaMemcpyFromSymbol(tr.data(), g_trace, tr.size() * sizeof(tr[0])));
          CK(cudaMemcpyFromSymbol(clk.data(), g_clk, clk.size() * sizeof(clk[0])));
          for (int b = 0; b < blocks; ++b) {
            const unsigned long long* t = &tr[size_t(b) * kTraceEvents];
            const long long* c = &clk[size_t(b) * kClkEvents];
            std::fprintf(f, "%d,%d", r, b);
            for (int e = 0; e < kTraceEvents; ++e) std::fprintf(f, ",%lld", t[e] ? (long long)(t[e] - t[1]) : -1);
            for (int e = 0; e < kClkEvents; ++e) std::fprintf(f, ",%lld", c[e] ? c[e] - c[1] : -1);
            std::fprintf(f, "\n");
          }
        }
        std::fclose(f);
        cudaGraphExecDestroy(ge);
        cudaGraphDestroy(g);
        std::printf("%s %zu MiB traced\n", name, bytes >> 20);
      }
    }
    return 0;
  }
#endif
  // `stream_probe rs`: us per launch at 16-64 MiB of gemv_groups<4, 4, 2> (128 blocks) and the library's m1 row-stream
  // kernel (128 blocks; 132; X rotated past the L2 with W; W without its evict_first hint), and at 32 MiB the kernel in
  // graphs of 30 (the bench's length there) and 320 launches instead of 64.
  if (argc > 1 && std::string(argv[1]) == "rs") {
    std::printf("size_MB,launches,copy_GBps,probe_us,rs128_us,rs132_us,rs128_xrot_us,rs128_nohint_us,rs128_L30_us,rs128_L320_us\n");
    const std::initializer_list<size_t> sizes = {size_t(2) << 30, size_t(16) << 20, size_t(32) << 20, size_t(48) << 20, size_t(64) << 20};
    return for_sizes(sizes, [&](size_t bytes, int sets, int launches, double cref) {
      auto rs_us = [&](int blocks, bool xrot, int hint, int len) {
        return graph_us([&](int i, cudaStream_t st) { rs_launch(bytes, i % sets, blocks, xrot, hint, st); }, len, s);
      };
      const float a = graph_us([&](int i, cudaStream_t st) { probe_launch(bytes, i % sets, 128, st); }, launches, s);
      const float b = rs_us(128, false, 1, launches), c = rs_us(sms, false, 1, launches), d = rs_us(128, true, 1, launches),
                  e = rs_us(128, false, 0, launches);
      const bool at32 = bytes == (size_t(32) << 20);
      const float f = at32 ? rs_us(128, false, 1, 30) : 0.f, g = at32 ? rs_us(128, false, 1, 320) : 0.f;
      CK(cudaGetLastError());
      std::printf("%zu,%d,%.0f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f\n", bytes >> 20, launches, cref, a, b, c, d, e, f, g);
      return 0;
    });
  }
  // `stream_probe dyn`: gemv_dyn<4, 4, 2, S> (units claimed at run time after S static ones; S = 0, 2, 4, 8) beside
  // gemv_groups<4, 4, 2>, 128 and 132 blocks, 16-64 MiB; first a check that each writes the same bits as gemv_groups
  // on set 0 filled with a pattern.
  if (argc > 1 && std::string(argv[1]) == "dyn") {
    unsigned* ctr = nullptr;
    CK(cudaMalloc(&ctr, 64));
    CK(cudaMemset(ctr, 0, 64));
    {
      const size_t bytes = size_t(32) << 20;
      const int n = int(bytes / 8192);
      std::vector<uint16_t> hw(bytes / 2), hx(4096);
      for (size_t i = 0; i < hw.size(); ++i) hw[i] = uint16_t(0x3c00 + (((i * 2654435761u) >> 7) & 0x3ff)) ^ (i & 1 ? 0x8000 : 0);
      for (size_t i = 0; i < hx.size(); ++i) hx[i] = uint16_t(0x3a00 + ((i * 40503u) & 0x1ff));
      char* xchk = dst + pool - (1 << 20);
      CK(cudaMemcpy(src, hw.data(), bytes, cudaMemcpyHostToDevice));
      CK(cudaMemcpy(xchk, hx.data(), 8192, cudaMemcpyHostToDevice));
      float *y0 = reinterpret_cast<float*>(dst), *y1 = reinterpret_cast<float*>(dst + (size_t(64) << 20));
      launch(gemv_groups<4, 4, 2>, 128, 32 * 17, kSoloSmem, false, s, static_cast<const char*>(src), n,
             static_cast<const char*>(xchk), y0);
      std::vector<float> a(n), b(n);
      CK(cudaMemcpyAsync(a.data(), y0, n * 4, cudaMemcpyDeviceToHost, s));
      auto check = [&](const char* name, auto kernel, int blocks) {
        CK(cudaMemsetAsync(y1, 0xff, n * 4, s));
        for (int rep = 0; rep < 3; ++rep)
          launch(kernel, blocks, 32 * 17, kSoloSmem, true, s, static_cast<const char*>(src), n, static_cast<const char*>(xchk), y1, ctr);
        CK(cudaMemcpyAsync(b.data(), y1, n * 4, cudaMemcpyDeviceToHost, s));
        unsigned c[2];
        CK(cudaMemcpyAsync(c, ctr, 8, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        std::printf("check %s blocks %d: %s, y[0] %g, counters left %u %u\n", name, blocks,
                    std::memcmp(a.data(), b.data(), n * 4) == 0 ? "same bits" : "DIFFERENT", a[0], c[0], c[1]);
        return 0;
      };
      check("dyn0", gemv_dyn<4, 4, 2, 0>, 128);
      check("dyn4", gemv_dyn<4, 4, 2, 4>, 128);
      check("dyn4", gemv_dyn<4, 4, 2, 4>, 132);
      check("dyn8", gemv_dyn<4, 4, 2, 8>, 100);
      CK(cudaMemset(src, 1, bytes));
    }
    std::printf("size_MB,copy_GBps,groups_us,dyn0_us,dyn2_us,dyn4_us,dyn8_us,dyn4_b132_us,groups_pct,dyn0_pct,dyn2_pct,dyn4_pct,dyn8_pct,dyn4_b132_pct\n");
    const std::initializer_list<size_t> sizes = {size_t(2) << 30, size_t(16) << 20, size_t(32) << 20, size_t(48) << 20, size_t(64) << 20};
    return for_sizes(sizes, [&](size_t bytes, int sets, int launches, double cref) {
      auto pct = [&](float us) { return 100 * (bytes / (us * 1e-6) / 1e9) / cref; };
      const int n = int(bytes / 8192);
      auto run = [&](auto kernel, int blocks, auto... extra) {
        return graph_us([&](int i, cudaStream_t st) {
          launch(kernel, blocks, 32 * 17, kSoloSmem, true, st, static_cast<const char*>(src + size_t(i % sets) * bytes), n,
                 static_cast<const char*>(xbuf), reinterpret_cast<float*>(dst + size_t(i % sets) * bytes), extra...);
        }, launches, s);
      };
      const float a = run(gemv_groups<4, 4, 2>, 128), b = run(gemv_dyn<4, 4, 2, 0>, 128, ctr), c = run(gemv_dyn<4, 4, 2, 2>, 128, ctr),
                  d = run(gemv_dyn<4, 4, 2, 4>, 128, ctr), e = run(gemv_dyn<4, 4, 2, 8>, 128, ctr),
                  f = run(gemv_dyn<4, 4, 2, 4>, sms, ctr);
      CK(cudaGetLastError());
      std::printf("%zu,%.0f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f\n", bytes >> 20, cref, a, b, c, d, e, f,
                  pct(a), pct(b), pct(c), pct(d), pct(e), pct(f));
      return 0;
    });
  }
  // The GEMV layouts' modes (groups3, inflight): each variant (a gemv_groups instance, its threads and shared memory)
  // in 128 blocks per size, then us and % of copy per variant.
  struct GemvVariant {
    void (*kernel)(const char*, int, const char*, float*);
    int threads;
    size_t smem;
    const char* name;
  };
  auto gemv_layouts = [&](std::initializer_list<size_t> sizes, const std::vector<GemvVariant>& vs) {
    std::printf("size_MB,copy_GBps");
    for (const char* unit : {"us", "pct"})
      for (const GemvVariant& v : vs) std::printf(",%s_%s", v.name, unit);
    std::printf("\n");
    return for_sizes(sizes, [&](size_t bytes, int sets, int launches, double cref) {
      const int n = int(bytes / 8192);
      std::vector<float> us;
      for (const GemvVariant& v : vs)
        us.push_back(graph_us([&](int i, cudaStream_t st) {
          launch(v.kernel, 128, v.threads, v.smem, true, st, static_cast<const char*>(src + size_t(i % sets) * bytes), n,
                 static_cast<const char*>(xbuf), reinterpret_cast<float*>(dst + size_t(i % sets) * bytes));
        }, launches, s));
      CK(cudaGetLastError());
      std::printf("%zu,%.0f", bytes >> 20, cref);
      for (float u : us) std::printf(",%.3f", u);
      for (float u : us) std::printf(",%.1f", 100 * (bytes / (u * 1e-6) / 1e9) / cref);
      std::printf("\n");
      return 0;
    });
  };
  constexpr size_t kDeepSmem = 200 << 10;  // 12 stages of 16 KB
  // `stream_probe groups3`: three groups of 4 consumer warps (13 warps: at most 4 on a scheduler, so 128 registers a
  // thread instead of the 17-warp kernel's 96) against gemv_groups<4, 4, 2>, 16-64 MiB.
  if (argc > 1 && std::string(argv[1]) == "groups3")
    return gemv_layouts({size_t(2) << 30, size_t(16) << 20, size_t(32) << 20, size_t(48) << 20, size_t(64) << 20},
                        {{gemv_groups<4, 4, 2>, 32 * 17, kSoloSmem, "g4w4s2"}, {gemv_groups<3, 4, 2>, 32 * 13, kSoloSmem, "g3w4s2"},
                         {gemv_groups<3, 4, 3>, 32 * 13, kSoloSmem, "g3w4s3"}, {gemv_groups<3, 4, 4>, 32 * 13, kDeepSmem, "g3w4s4"}});
  // `stream_probe inflight`: gemv_groups<4, 4, SG> at SG = 1, 2, 3 (64, 128, 192 KB of W in flight per SM) and
  // <2, 8, 3> (96 KB), at 32 and 48 MiB: whether a deeper ring than the row-stream kernel's 2 per group pays.
  if (argc > 1 && std::string(argv[1]) == "inflight")
    return gemv_layouts({size_t(2) << 30, size_t(32) << 20, size_t(48) << 20},
                        {{gemv_groups<4, 4, 1>, 32 * 17, kSoloSmem, "g4w4s1"}, {gemv_groups<4, 4, 2>, 32 * 17, kSoloSmem, "g4w4s2"},
                         {gemv_groups<4, 4, 3>, 32 * 17, kDeepSmem, "g4w4s3"}, {gemv_groups<2, 8, 3>, 32 * 17, kSoloSmem, "g2w8s3"}});
  // `stream_probe scale`: gemv_groups<4, 4, 2> and <1, 8, 4> at 128 blocks over 16-128 MiB (N = MiB * 128 rows of K =
  // 4096): us per launch, for a fit of a fixed cost and a per-byte rate beside the row-stream kernel's at the same sizes.
  if (argc > 1 && std::string(argv[1]) == "scale") {
    std::printf("size_MB,n,copy_GBps,g4w4s2_us,g1w8s4_us\n");
    const std::initializer_list<size_t> sizes = {size_t(2) << 30, size_t(16) << 20, size_t(32) << 20, size_t(64) << 20, size_t(128) << 20};
    return for_sizes(sizes, [&](size_t bytes, int sets, int launches, double cref) {
      const int n = int(bytes / 8192);
      auto run = [&](auto kernel, int threads) {
        return graph_us([&](int i, cudaStream_t st) {
          launch(kernel, 128, threads, kSoloSmem, true, st, static_cast<const char*>(src + size_t(i % sets) * bytes), n,
                 static_cast<const char*>(dst + size_t(i % sets) * bytes), reinterpret_cast<float*>(out));
        }, launches, s);
      };
      const float a = run(gemv_groups<4, 4, 2>, 32 * 17), b = run(gemv_groups<1, 8, 4>, 32 * 9);
      CK(cudaGetLastError());
      std::printf("%.0f,%d,%.0f,%.3f,%.3f\n", bytes / mb, n, cref, a, b);
      return 0;
    });
  }
  // `stream_probe groups`: gemv_groups<G, W, SG> (1, 8, 4: gemv_rows; 4, 4, 2: the row-stream kernel's structure) at
  // 32 and 48 MiB, 128 and one block per SM.
  if (groups_only) {
    std::printf("size_MB,blocks,copy_GBps,g1w8s4_pct,g4w4s2_pct,g4w4s1_pct,g2w8s2_pct,g2w4s2_pct,g4w2s2_pct,"
                "g2w8s1_pct,g8w2s1_pct\n");
    const std::initializer_list<size_t> sizes = {size_t(2) << 30, size_t(32) << 20, size_t(48) << 20};
    return for_sizes(sizes, [&](size_t bytes, int sets, int launches, double cref) {
      auto pct = [&](float us) { return 100 * (bytes / (us * 1e-6) / 1e9) / cref; };
      const int n = int(bytes / 8192);
      for (int blocks : {128, sms}) {
        auto run = [&](auto kernel, int threads) {
          return graph_us([&](int i, cudaStream_t st) {
            launch(kernel, blocks, threads, kSoloSmem, true, st, static_cast<const char*>(src + size_t(i % sets) * bytes), n,
                   static_cast<const char*>(dst + size_t(i % sets) * bytes), reinterpret_cast<float*>(out));
          }, launches, s);
        };
        const float b = run(gemv_groups<1, 8, 4>, 32 * 9),
                    c = run(gemv_groups<4, 4, 2>, 32 * 17), d = run(gemv_groups<4, 4, 1>, 32 * 17),
                    e = run(gemv_groups<2, 8, 2>, 32 * 17), f = run(gemv_groups<2, 4, 2>, 32 * 9),
                    g = run(gemv_groups<4, 2, 2>, 32 * 9), h = run(gemv_groups<2, 8, 1>, 32 * 17),
                    k = run(gemv_groups<8, 2, 1>, 32 * 17);
        CK(cudaGetLastError());
        std::printf("%.0f,%d,%.0f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f\n", bytes / mb, blocks, cref, pct(b),
                    pct(c), pct(d), pct(e), pct(f), pct(g), pct(h), pct(k));
      }
      return 0;
    });
  }
  // `stream_probe gemv`: only the GEMV variants (gemv_ring, gemv_rows) and the ring they ride, at 32 and 48 MiB.
  if (gemv_only) {
    std::printf("size_MB,copy_us,copy_GBps,ring4_128_pct,gemv_ring_128_pct,rows4_128_pct,rows4_128_xrot_pct,rows4_132_pct,"
                "rows4_132_xrot_pct,rows8_132_xrot_pct,rows2_132_xrot_pct\n");
    for (size_t bytes : {size_t(2) << 30, size_t(32) << 20, size_t(48) << 20}) {
      const std::pair<int, int> rot = rotation(bytes);
      const int sets = rot.first, launches = rot.second;
      const float cp = copy_us(bytes, sets, launches);
      const double cgb = bytes / (cp * 1e-6) / 1e9;
      if (ref == 0) ref = cgb;
      auto pct = [&](float us) { return 100 * (bytes / (us * 1e-6) / 1e9) / ref; };
      if (bytes > (size_t(1) << 30)) {
        std::printf("%.0f,%.2f,%.0f\n", bytes / mb, cp, cgb);
        continue;
      }
      const int n = int(bytes / 8192);
      auto rows_us = [&](auto stages, int blocks, bool xrot) {
        return graph_us([&](int i, cudaStream_t st) {
          const char* x = xrot ? static_cast<const char*>(dst + size_t(i % sets) * bytes) : static_cast<const char*>(xbuf);
          launch(gemv_groups<1, ring::kConsumerWarps, decltype(stages)::value>, blocks, ring::kThreads, kSoloSmem, true, st,
                 static_cast<const char*>(src + size_t(i % sets) * bytes), n, x, reinterpret_cast<float*>(out));
        }, launches, s);
      };
      const float r4 = graph_us([&](int i, cudaStream_t st) {
        launch(read_ring<4>, 128, ring::kThreads, kSoloSmem, true, st, static_cast<const char*>(src + size_t(i % sets) * bytes), bytes, out);
      }, launches, s);
      const float g0 = graph_us([&](int i, cudaStream_t st) {
        launch(gemv_ring, 128, ring::kThreads, kSoloSmem, true, st, static_cast<const char*>(src + size_t(i % sets) * bytes), bytes,
               static_cast<const char*>(xbuf), out);
      }, launches, s);
      using S2 = std::integral_constant<int, 2>;
      using S4 = std::integral_constant<int, 4>;
      using S8 = std::integral_constant<int, 8>;
      const float a = rows_us(S4{}, 128, false), b = rows_us(S4{}, 128, true), c = rows_us(S4{}, sms, false),
                  d = rows_us(S4{}, sms, true), e = rows_us(S8{}, sms, true), f = rows_us(S2{}, sms, true);
      CK(cudaGetLastError());
      std::printf("%.0f,%.2f,%.0f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f\n", bytes / mb, cp, cgb, pct(r4), pct(g0), pct(a), pct(b),
                  pct(c), pct(d), pct(e), pct(f));
    }
    return 0;
  }
  std::printf("size_MB,read_us,read_GBps,read_pct_copy2G,copy_us,copy_GBps,copy_pct_copy2G,"
              "pdl_wait_pct,pdl_prefetch_pct,pdl_read_first_pct,sm1_strided_pct,sm1_contig132_pct,sm1_contig128_pct,"
              "sm1_contig128_64k_pct,ring4_128_pct,ring8_128_pct,ring4_132_pct,tma3d_u4r32_pct,tma3d_u8r16_pct,"
              "tma3d_u16r8_pct,tma3d_u64r2_pct,tma3d_u4r32_store_pct,tma3d_u16r8_store_pct,"
              "u4r32_store_x_pct,u4r32_store_x_mma_pct,u4r32_all_pct,u16r8_all_pct,gemv_ring_128_pct,gemv_ring_132_pct,"
              "rows1d_r8_pct,rows1d_r16_pct,rows1d_r32_pct,rows1d_r16_warp_pct,rows1d_r32_warp_pct\n");
  for (size_t bytes : {size_t(2) << 30, size_t(16) << 20, size_t(21) << 20, size_t(28) << 20, size_t(32) << 20,
                       size_t(48) << 20, size_t(56) << 20, size_t(64) << 20, size_t(112) << 20, size_t(136) << 20,
                       size_t(224) << 20, size_t(272) << 20}) {
    const std::pair<int, int> rot = rotation(bytes);
    const int sets = rot.first, launches = rot.second;
    auto read_us = [&](auto mode) {
      return graph_us([&](int i, cudaStream_t st) {
        constexpr Pdl kMode = decltype(mode)::value;
        launch(read_all<kMode>, sms * 4, 512, 0, kMode != Pdl::off, st, reinterpret_cast<const uint4*>(src + size_t(i % sets) * bytes),
               bytes / 16, out);
      }, launches, s);
    };
    const float rd = read_us(std::integral_constant<Pdl, Pdl::off>{});
    const float pw = read_us(std::integral_constant<Pdl, Pdl::wait_first>{});
    const float pp = read_us(std::integral_constant<Pdl, Pdl::prefetch_first>{});
    const float pr = read_us(std::integral_constant<Pdl, Pdl::read_first>{});
    auto blocked_us = [&](auto contiguous, int blocks) {
      return graph_us([&](int i, cudaStream_t st) {
        launch(read_blocked<decltype(contiguous)::value>, blocks, 1024, kSoloSmem, true, st,
               reinterpret_cast<const uint4*>(src + size_t(i % sets) * bytes), bytes / 16, out);
      }, launches, s);
    };
    const float b1 = blocked_us(std::false_type{}, sms), b2 = blocked_us(std::true_type{}, sms), b3 = blocked_us(std::true_type{}, 128);
    const float b4 = graph_us([&](int i, cudaStream_t st) {
      launch(read_blocked<true, 4>, 128, 1024, kSoloSmem, true, st, reinterpret_cast<const uint4*>(src + size_t(i % sets) * bytes),
             bytes / 16, out);
    }, launches, s);
    auto ring_us = [&](auto stages, int blocks) {
      return graph_us([&](int i, cudaStream_t st) {
        static_assert(decltype(stages)::value * (16 << 10) <= int(kSoloSmem), "ring");
        launch(read_ring<decltype(stages)::value>, blocks, ring::kThreads, kSoloSmem, true, st,
               static_cast<const char*>(src + size_t(i % sets) * bytes), bytes, out);
      }, launches, s);
    };
    const float r4 = ring_us(std::integral_constant<int, 4>{}, 128), r8 = ring_us(std::integral_constant<int, 8>{}, 128),
                r4b = ring_us(std::integral_constant<int, 4>{}, sms);
    // W as [rows][4096] bf16: bytes / 8192 rows, in 32-row blocks.
    const int rows = int(bytes / 8192), blocks3 = rows / 32;
    auto tma3d_us = [&](int U, int R, int flags = 0) {
      std::vector<CUtensorMap> maps(sets);
      for (int i = 0; i < sets; ++i)
        if (!make_map_3d(&maps[i], src + size_t(i) * bytes, rows, U, R)) std::fprintf(stderr, "tensor map failed\n");
      return graph_us([&](int i, cudaStream_t st) {
        launch(read_ring_3d, blocks3, ring::kThreads, kSoloSmem, true, st, maps[i % sets], U, R, 64, out, flags, static_cast<const char*>(xbuf));
      }, launches, s);
    };
    const bool fits3 = blocks3 <= 4 * sms;  // the 2 GB size has too many blocks to mean anything here
    const float t1 = fits3 ? tma3d_us(4, 32) : 1e9f, t2 = fits3 ? tma3d_us(8, 16) : 1e9f, t3 = fits3 ? tma3d_us(16, 8) : 1e9f,
                t4 = fits3 ? tma3d_us(64, 2) : 1e9f, t5 = fits3 ? tma3d_us(4, 32, kStore) : 1e9f,
                t6 = fits3 ? tma3d_us(16, 8, kStore) : 1e9f, t7 = fits3 ? tma3d_us(4, 32, kStore | kX) : 1e9f,
                t8 = fits3 ? tma3d_us(4, 32, kStore | kX | kMma) : 1e9f,
                t9 = fits3 ? tma3d_us(4, 32, kStore | kX | kMma | kEpilogue) : 1e9f,
                t10 = fits3 ? tma3d_us(16, 8, kStore | kX | kMma | kEpilogue) : 1e9f;
    auto gemv_us = [&](int blocks) {
      return graph_us([&](int i, cudaStream_t st) {
        launch(gemv_ring, blocks, ring::kThreads, kSoloSmem, true, st, static_cast<const char*>(src + size_t(i % sets) * bytes), bytes,
               static_cast<const char*>(xbuf), out);
      }, launches, s);
    };
    const float g1 = gemv_us(128), g2 = gemv_us(sms);
    auto rows_us = [&](int R, int warp_issue) {
      return graph_us([&](int i, cudaStream_t st) {
        launch(read_ring_rows<4>, blocks3, ring::kThreads, kSoloSmem, true, st, static_cast<const char*>(src + size_t(i % sets) * bytes),
               R, warp_issue, out);
      }, launches, s);
    };
    const float q1 = fits3 ? rows_us(8, 0) : 1e9f, q2 = fits3 ? rows_us(16, 0) : 1e9f, q3 = fits3 ? rows_us(32, 0) : 1e9f,
                q4 = fits3 ? rows_us(16, 1) : 1e9f, q5 = fits3 ? rows_us(32, 1) : 1e9f;
    const float cp = graph_us([&](int i, cudaStream_t st) {
      cudaMemcpyAsync(dst + size_t(i % sets) * (bytes / 2), src + size_t(i % sets) * (bytes / 2), bytes / 2,
                      cudaMemcpyDeviceToDevice, st);
    }, launches, s);
    CK(cudaGetLastError());
    const double rgb = bytes / (rd * 1e-6) / 1e9, cgb = bytes / (cp * 1e-6) / 1e9;
    if (ref == 0) ref = cgb;  // the 2 GB copy (read + write), as `tgemm bench`'s ceiling
    auto pct = [&](float us) { return 100 * (bytes / (us * 1e-6) / 1e9) / ref; };
    std::printf("%.0f,%.2f,%.0f,%.1f,%.2f,%.0f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f\n",
                bytes / mb, rd, rgb, 100 * rgb / ref, cp, cgb, 100 * cgb / ref, pct(pw), pct(pp), pct(pr), pct(b1), pct(b2),
                pct(b3), pct(b4), pct(r4), pct(r8), pct(r4b), pct(t1), pct(t2), pct(t3), pct(t4), pct(t5), pct(t6), pct(t7), pct(t8), pct(t9), pct(t10), pct(g1), pct(g2), pct(q1),
                pct(q2), pct(q3), pct(q4), pct(q5));
  }
  return 0;
}
