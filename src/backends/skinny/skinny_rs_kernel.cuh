// skinny backend: the row-stream kernels (M <= 4). Included by the per-dtype instantiation files only.
//
// The plan (which rows, stages, warps and words) is skinny_rs.h, shared with the CPU tests; this file only walks it.
// One block per SM (grid rs_blocks), rs_consumer_warps(MT) consumer warps in rs_groups(MT) groups, and a producer warp
// whose lane 0 issues 1D bulk copies: X (M rows of K) once into shared memory, then the block's stages of W into the
// groups' rings of 1 << RsParams::group_stages_log2 stages of 16 KB each. Everything is read after the PDL wait:
// stream_probe.cu's L2 prefetch of 32 KB per block before the wait lost 9 points (session 33).
#pragma once

#include <type_traits>

#include "backends/skinny/skinny_kernel.cuh"
#include "backends/skinny/skinny_rs.h"
#include "core/pdl.cuh"
#include "core/ptx.cuh"

// A timeline hook for scripts/dev/stream_probe.cu's trace build, which defines it to write clock64 and %globaltimer
// stamps. Events: 0 entry, 1 PDL release, 2 / 3 the producer's first / last W copy issued, 4 X in shared memory,
// 5 / 6 a tile's barrier reached / stored (BAR.SYNC defers its wait to a later instruction, so the stamp right after
// it may run before the barrier completes), 7 the block's last store, 8 + g group g's last stage done,
// 16 + 8 g + k / 48 + 8 g + k group g's k-th stage full / read by its first warp (k < 8), 80 + s stage s issued
// (s < 32), 112 + w / 128 + w warp w's last / second stage read, 144 + w its last butterfly done (where rows take one
// stage). Empty here: the library's code does not change.
#ifndef TGEMM_RS_STAMP
#define TGEMM_RS_STAMP(event) ((void)0)
#endif

namespace tgemm::skinny {

enum class RsRole : int { consumer, producer };

namespace dev {

// Eight products of 16-bit pairs added to acc in a fixed order, in fp32: the even elements to acc[0], the odd ones to
// acc[1].
template <class T>
__device__ __forceinline__ void dot8(uint4 w, uint4 x, float (&acc)[2]) {
  const uint32_t wv[4] = {w.x, w.y, w.z, w.w}, xv[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    if constexpr (std::is_same_v<T, __nv_bfloat16>) {
      // bf16 -> fp32 is the top half of the fp32 word: a shift or a mask, no conversion instruction.
      acc[0] = fmaf(__uint_as_float(wv[i] << 16), __uint_as_float(xv[i] << 16), acc[0]);
      acc[1] = fmaf(__uint_as_float(wv[i] & 0xffff0000u), __uint_as_float(xv[i] & 0xffff0000u), acc[1]);
    } else {
      const float2 a = __half22float2(*reinterpret_cast<const __half2*>(&wv[i]));
      const float2 b = __half22float2(*reinterpret_cast<const __half2*>(&xv[i]));
      acc[0] = fmaf(a.x, b.x, acc[0]);
      acc[1] = fmaf(a.y, b.y, acc[1]);
    }
  }
}

// Barrier over the consumer warps only (id 1; the producer warp never arrives at it). bar.sync is .aligned: all threads
// of a warp must execute it together, and after the lane-0 branches before it the __syncwarp makes that explicit (one
// WARPSYNC per tile).
template <int kThreads>
__device__ __forceinline__ void rs_consumer_sync() {
  __syncwarp();
  asm volatile("bar.sync 1, %0;" ::"n"(kThreads) : "memory");
}

}  // namespace dev

// Dynamic shared memory: rs_smem_bytes(plan, MT, m) (ring, then X, then two slot buffers), at least the solo floor.
template <class T, int MT>
__global__ void __launch_bounds__(rs_threads(MT), 1) skinny_rs_kernel(const __grid_constant__ RsParams rp) {
  static_assert(MT >= 1 && MT <= kRsMaxTileM, "M tile");
  static_assert(kRsStageBytes % 16 == 0 && kRsOutputsPerTile % MT == 0, "stage and tile");
  constexpr int kG = rs_groups(MT), kConsumerWarps = rs_consumer_warps(MT);
  const int sgl = rp.group_stages_log2, SG = 1 << sgl;  // group g's slot j is ring slot g * SG + j
  const Params& p = rp.op;
  const RsPlan& pl = rp.plan;
  extern __shared__ __align__(16) unsigned char smem_raw[];
  __shared__ uint64_t bars[2 * kRsMaxStages + 1];  // full[0..G SG), empty[kRsMaxStages..), X

  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const RsRole role = warp == kConsumerWarps ? RsRole::producer : RsRole::consumer;
  const int group = warp / kRsStageWarps, wg = warp % kRsStageWarps;
  const int m = p.m;
  const int64_t r0 = rs_block_row(p.n, rp.blocks, blockIdx.x);
  const int rows = int(rs_block_row(p.n, rp.blocks, blockIdx.x + 1) - r0);
  const int stages = rs_block_stages(pl, rows);
  unsigned char* const smem_dyn = smem_raw + smem_align_pad(ptx::smem_addr(smem_raw));  // skinny_rs.h: the alignment
  const uint32_t ring = ptx::smem_addr(smem_dyn);
  const int ring_bytes = (kG << sgl) * kRsStageBytes;
  const uint32_t xs = ring + ring_bytes;  // X [m][kw] words
  const uint4* const xw = reinterpret_cast<const uint4*>(smem_dyn + ring_bytes);
  float* const slots = reinterpret_cast<float*>(smem_dyn + ring_bytes + int64_t(m) * pl.kw * 16);
  const int slot_floats = rs_slot_floats(pl, MT);
  const uint32_t full0 = ptx::smem_addr(&bars[0]), empty0 = ptx::smem_addr(&bars[kRsMaxStages]);
  const uint32_t xbar = ptx::smem_addr(&bars[2 * kRsMaxStages]);
  // A stage's ring slot and round (the parity its barriers' waits name).
  auto slot_of = [&](const RsCursor& c) { return c.owner * SG + (c.seq & (SG - 1)); };
  auto round_of = [&](const RsCursor& c) { return c.seq >> sgl; };

  if (tid == 0) TGEMM_RS_STAMP(0);
  if (role == RsRole::producer && lane == 0) {
    for (int i = 0; i < kG * SG; ++i) {
      ptx::mbar_init(full0 + 8 * i, 1);
      ptx::mbar_init(empty0 + 8 * i, kRsStageWarps);
    }
    ptx::mbar_init(xbar, 1);
    ptx::fence_mbar_init();
  }
  __syncthreads();
  pdl::launch_dependents();
  pdl::wait();
  if (tid == 0) TGEMM_RS_STAMP(1);

  if (role == RsRole::producer) {
    if (lane == 0) {
      const uint32_t row_bytes = uint32_t(pl.kw) * 16;
      ptx::mbar_arrive_expect_tx(xbar, uint32_t(m) * row_bytes);
      for (int mm = 0; mm < m; ++mm)
        ptx::bulk_load(xs + uint32_t(mm) * row_bytes, static_cast<const unsigned char*>(p.x) + mm * p.ldx * 2,
                       row_bytes, xbar);
      const bool contiguous = p.ldw == p.k;
      const ptx::L2Policy whint = ptx::l2_policy_evict_first(rp.w_evict_first != 0);  // W is read once (skinny.cpp)
      const auto* w = static_cast<const unsigned char*>(p.w) + r0 * p.ldw * 2;  // this block's first row
      for (RsCursor c = rs_cursor(pl, rows); c.s < stages; rs_advance(pl, rows, c)) {
        const int slot = slot_of(c), round = round_of(c);
        if (round > 0) ptx::mbar_wait(empty0 + 8 * slot, uint32_t(round - 1) & 1u);
        const RsStage& st = c.st;
        const uint32_t dst = ring + uint32_t(slot) * kRsStageBytes;
        const uint32_t bytes = uint32_t(st.words) * 16;
        const uint32_t full = full0 + 8 * uint32_t(slot);
        ptx::mbar_arrive_expect_tx(full, uint32_t(st.nrows) * bytes);
        const unsigned char* src = w + (int64_t(st.row) * p.ldw + int64_t(st.word0) * 8) * 2;
        if (contiguous) {
          ptx::bulk_load(dst, src, uint32_t(st.nrows) * bytes, full, whint);
        } else {
          for (int r = 0; r < st.nrows; ++r)
            ptx::bulk_load(dst + uint32_t(r) * bytes, src + r * p.ldw * 2, bytes, full, whint);
        }
        if (c.s == 0) TGEMM_RS_STAMP(2);
        if (c.s < 32) TGEMM_RS_STAMP(80 + c.s);
      }
      TGEMM_RS_STAMP(3);
    }
    __syncwarp();
    return;  // the consumers' named barrier does not count this warp
  }

  // Consumers. Thread tid stores output (row tr0 + tid % nr, column tid / nr) of each tile of nr rows, if tid < nr m;
  // its bias value is loaded a tile ahead so that the load's latency hides behind the stream.
  auto load_bias = [&](int t) {
    const int nr = t * pl.tile_rows < rows ? rs_tile_rows(pl, rows, t) : 0;
    if (!p.bias_kind || tid >= nr * m) return 0.f;
    return dev::load_bias<T>(p.bias, p.bias_kind, r0 + t * pl.tile_rows + tid % nr);
  };
  float bias = load_bias(0);
  // Four sums per column (the even and the odd elements of the even and the odd words of a batch): a quarter of the
  // dependent chain of one.
  float acc[MT][2][2];
#pragma unroll
  for (int mm = 0; mm < MT; ++mm) acc[mm][0][0] = acc[mm][0][1] = acc[mm][1][0] = acc[mm][1][1] = 0.f;
  // This warp's rows and words of every stage of R rows (rows in several chunks: the words per chunk below).
  RsWarpPart wp = rs_warp_part(pl, pl.chunk_words, wg);
  constexpr int kB = rs_batch_words(MT);
  ptx::mbar_wait(xbar, 0);
  if (tid == 0) TGEMM_RS_STAMP(4);
  // X words of this lane in registers, where they are the same in every stage (rs_x_in_registers): the stage loop then
  // reads only W from shared memory. Run 346 (stream_probe rs, m1): -3.0% per launch at 32 MiB. The stage loop is
  // compiled twice (consume below), so that the registers holding X are live only in the loop that reads them: run 356
  // (three rounds beside the single loop, graph replay, the 12 decode layers at M = 1) m1 +0.6%, m1_b128 +0.7%
  // (geometric means x cuBLASLt; 19 of 24 rows up), the M tiles 2 and 4 level.
  constexpr bool kXRegs = rs_x_registers(MT);
  constexpr int kBX = rs_xreg_words(MT);
  const bool x_regs = rs_x_in_registers(pl, MT, wp);

  // Tile t's barrier and sum: each group comes here once per tile, in tile order, after its own stages of the tile
  // (before its first stage past the tile's last, or after its last stage), so every part of the tile is in its slot
  // after the barrier.
  const int tiles = rs_tiles(pl, rows);
  int t = 0, t_last = rs_tile_last_stage(pl, rows, 0);
  auto finish_tile = [&] {
    dev::rs_consumer_sync<kConsumerWarps * 32>();
    if (tid == 0) TGEMM_RS_STAMP(5);
    const int nr = rs_tile_rows(pl, rows, t);
    if (tid < nr * m) {
      const float* buf = slots + (t & 1) * slot_floats;
      const int r = tid % nr, mm = tid / nr;
      float v = buf[rs_slot(pl, MT, r, 0, mm)];
      for (int q = 1; q < pl.parts; ++q) v += buf[rs_slot(pl, MT, r, q, mm)];
      if (p.bias_kind) v += bias;
      dev::store_y<true>(p.y, p.out_dtype, int64_t(mm) * p.ldy + r0 + t * pl.tile_rows + r, v);
    }
    if (tid == 0) TGEMM_RS_STAMP(6);
    bias = load_bias(t + 1);
    // No second barrier: tile t + 1 writes the other buffer, and tile t + 2 (this one's) only after every thread has
    // passed tile t + 1's barrier, i.e. after its reads above.
    ++t;
    t_last = t < tiles ? rs_tile_last_stage(pl, rows, t) : stages;
  };

  // The group's stages in order (kX: X from registers, else from shared memory).
  auto consume = [&](auto x_tag) {
    constexpr bool kX = decltype(x_tag)::value;
    uint4 xr[kX ? MT : 1][kX ? kBX : 1];
    if constexpr (kX) {
#pragma unroll
      for (int mm = 0; mm < MT; ++mm)
#pragma unroll
        for (int j = 0; j < kBX; ++j) {
          const int i = wp.w_lo + lane + 32 * j;
          xr[mm][j] = mm < m && i < wp.w_hi ? xw[mm * pl.kw + i] : uint4{};
        }
    }
    for (RsGroupCursor c = rs_group_cursor(pl, rows, group); c.s < stages; rs_group_advance(pl, rows, c)) {
      while (t_last < c.s) finish_tile();  // tiles that ended at the other groups' stages
      const RsStage& st = c.st;
      {
        if (pl.chunks > 1) wp = rs_warp_part(pl, st.words, wg);
        const int slot = group * SG + (c.k & (SG - 1));
        ptx::mbar_wait(full0 + 8 * uint32_t(slot), uint32_t(c.k >> sgl) & 1u);
        if (c.k < 8 && wg == 0 && lane == 0) TGEMM_RS_STAMP(16 + 8 * group + c.k);
        // Plain loads from the shared arrays (not asm), so that the compiler may batch them; the full barrier's wait is
        // a memory clobber, so none moves above it.
        const uint4* const stage = reinterpret_cast<const uint4*>(smem_dyn + slot * kRsStageBytes);
        // A warp's rows of a stage: one (R <= 4) or up to four (R = 5..16), each finished before the next one's loads.
        for (int r = wp.row0; r < st.nrows; r += wp.row_step) {
          const uint4* const wrow = stage + r * st.words;  // W [nrows][words]
          const uint4* const xrow = xw + st.word0;         // X [m][kw] from word0
          // A lane's words in batches of rs_batch_words: a batch's loads are all issued before its products, so one
          // shared-memory latency is paid per batch, not per word (the loop it replaced loaded a word, then used it).
          // Run 336 (x cuBLASLt, geometric means over the decode rows at M = 1, 2, 4, two rounds beside the old loop):
          // the M tile 4 kernels +4 / +9 / +11% at M = 1 / 2 / 4, the M tile 2 ones +0.8 / +0.5%, the M tile 1 level.
          // Words past the part load as zeros (0 x 0 adds 0).
          if constexpr (kX) {
            const int i0 = wp.w_lo + lane;
            uint4 wv[kBX];
#pragma unroll
            for (int j = 0; j < kBX; ++j) wv[j] = i0 + 32 * j < wp.w_hi ? wrow[i0 + 32 * j] : uint4{};
#pragma unroll
            for (int mm = 0; mm < MT; ++mm) {
              if (MT > 1 && mm >= m) break;  // uniform: the launch's M
#pragma unroll
              for (int j = 0; j < kBX; ++j) dev::dot8<T>(wv[j], xr[mm][j], acc[mm][j & 1]);
            }
          } else {
            for (int i0 = wp.w_lo + lane; i0 < wp.w_hi; i0 += 32 * kB) {
              uint4 wv[kB];
#pragma unroll
              for (int j = 0; j < kB; ++j) wv[j] = i0 + 32 * j < wp.w_hi ? wrow[i0 + 32 * j] : uint4{};
#pragma unroll
              for (int mm = 0; mm < MT; ++mm) {
                if (MT > 1 && mm >= m) break;  // uniform: the launch's M
                uint4 xv[kB];
#pragma unroll
                for (int j = 0; j < kB; ++j) xv[j] = i0 + 32 * j < wp.w_hi ? xrow[mm * pl.kw + i0 + 32 * j] : uint4{};
#pragma unroll
                for (int j = 0; j < kB; ++j) dev::dot8<T>(wv[j], xv[j], acc[mm][j & 1]);
              }
            }
          }
          const bool last_row = r + wp.row_step >= st.nrows;
          // The stage's bytes are read: hand the slot back before the butterfly, so the producer refills it meanwhile.
          if (last_row) {
            __syncwarp();
            if (lane == 0) ptx::mbar_arrive(empty0 + 8 * uint32_t(slot));
            if (c.k < 8 && wg == 0 && lane == 0) TGEMM_RS_STAMP(48 + 8 * group + c.k);
            if (lane == 0 && c.k == 1) TGEMM_RS_STAMP(128 + warp);
            if (lane == 0 && c.s + kG >= stages) TGEMM_RS_STAMP(112 + warp);
          }
          if (st.row_end) {
            // This warp's part of the row: a fixed butterfly over the lanes (the M columns' chains side by side), then
            // lane 0 fills its slots.
            float v[MT];
#pragma unroll
            for (int mm = 0; mm < MT; ++mm) {
              v[mm] = (acc[mm][0][0] + acc[mm][0][1]) + (acc[mm][1][0] + acc[mm][1][1]);
              acc[mm][0][0] = acc[mm][0][1] = acc[mm][1][0] = acc[mm][1][1] = 0.f;
            }
#pragma unroll
            for (int o = 16; o > 0; o >>= 1)
#pragma unroll
              for (int mm = 0; mm < MT; ++mm) v[mm] += __shfl_xor_sync(0xffffffffu, v[mm], o);
            if (lane == 0) {
              float* const buf = slots + (t & 1) * slot_floats;
              const int rt = st.row + r - t * pl.tile_rows;
#pragma unroll
              for (int mm = 0; mm < MT; ++mm)
                if (mm < m) buf[rs_slot(pl, MT, rt, wp.part, mm)] = v[mm];
            }
            if (lane == 0 && c.s + kG >= stages) TGEMM_RS_STAMP(144 + warp);
          }
        }
        if (wp.row0 >= st.nrows) {  // no row of this stage (the last stage of a block, or R = 3, 5, 6, 7)
          __syncwarp();
          if (lane == 0) ptx::mbar_arrive(empty0 + 8 * uint32_t(slot));
        }
      }
      if (c.s == t_last) finish_tile();
    }
    if (wg == 0 && lane == 0) TGEMM_RS_STAMP(8 + group);
    while (t < tiles) finish_tile();
  };
  if constexpr (kXRegs) {
    if (x_regs) consume(std::true_type{});
    else consume(std::false_type{});
  } else {
    consume(std::false_type{});
  }
  if (tid == 0) TGEMM_RS_STAMP(7);
}

}  // namespace tgemm::skinny
