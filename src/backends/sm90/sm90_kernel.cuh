// The sm90 GEMM skeleton: Y[M,N] = X[M,K] * W[N,K]^T (+ bias), both operands K-major, fp32 accumulation.
//
// One CTA per SM, persistent. Warp roles:
//   warpgroup 0, warp 0   Producer: one thread issues the TMA loads of X and W tiles into a ring of stages.
//   warpgroup 0, warps 1-3 Storers: copy finished output tiles from shared memory to Y (staged epilogue; with
//                          the TMA-store epilogue one thread issues a TMA store per 64-column box instead).
//   warpgroups 1, 2       Consumers: wgmma on their half of the tile rows, then bias + convert into staging.
// The storers let the global stores of tile t overlap the main loop of tile t+1: with K = 1280 a tile's main
// loop is only 20 k-steps, so a synchronous store would idle the tensor cores for a noticeable fraction.
//
// Clusters of 2 along M (c2x1) share the W tile: each CTA loads half of it and multicasts it to both. Along N
// (c1x2) they share X the same way. Either halves that operand's L2->SM traffic.
//
// Consumer schedules (Traits::kPingpong):
//   cooperative  both consumer warpgroups compute one tile (half its rows each), then both run its epilogue; the
//                tensor cores wait out the epilogue (a few % of a K = 1280 tile).
//   ping-pong    each consumer warpgroup computes whole tiles, the CTA's tiles alternating between the two. The
//                main loops take turns in tile order (so the stage ring is consumed in the order the producer
//                fills it), and so do the epilogues (so one staging buffer serves both): while one warpgroup
//                runs the epilogue of tile t, the other's main loop of tile t + 1 keeps the tensor cores busy.
//                The turns are named barriers: warpgroup g waits on kMmaTurn + g / kEpiTurn + g, and the other
//                arrives there when it has issued its last k-step / written its staging.
//
// Split-K (Traits::kSplitK, ping-pong only; EpilogueParams::splits > 1): the CTAs walk work units, `splits` per
// split tile (every tile, or a stream-K tail of them; the rest whole), each a k-range of the tile
// (sm90_scheduler.cuh). A split unit's consumer writes its fp32 accumulators to the workspace and counts itself in
// on the tile's counter; the one that arrives last sums every split's partial in
// split order (so the bits do not depend on which CTA that is) and runs the usual epilogue (bias in fp32,
// convert, store). Nobody waits for anybody, so there is no order between CTAs to deadlock on, and no float
// atomics. The other units still take their epilogue turn with an empty staging pass, which keeps every parity
// wait of the staging ring as without split-K.
//
// Column tail (Traits::kColumnTail, EpilogueParams::by_columns): the split tiles run instead as two column halves
// each, over all of K, after the whole tiles. A half's producer loads only its W rows (W comes in half-tile boxes),
// its consumer runs the N = BN / 2 wgmma into the first half of the accumulators and stages those columns; the
// storers stop at the half's last column.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <type_traits>
#include <utility>

#include "backends/sm90/sm90_config.h"
#include "backends/sm90/sm90_epilogue.cuh"
#include "core/ptx.cuh"
#include "backends/sm90/sm90_scheduler.cuh"
#include "core/wgmma.cuh"

namespace tgemm::sm90 {

enum class Role : uint8_t { producer, storer, consumer, idle };

template <class T>
__device__ __forceinline__ Role role_of(uint32_t warp) {
  if (warp >= 4) return Role::consumer;
  if (warp == 0) return Role::producer;
  return T::kStaged ? Role::storer : Role::idle;
}

// A coordinate of a tile that lies wholly past the matrix edge (the second CTA of a cluster at the M or N tail)
// is replaced by 0: the data is never stored, and this keeps every TMA coordinate a valid int32 even for
// dimensions near 2^31.
__device__ __forceinline__ int32_t clamp_coord(uint32_t c, uint32_t dim) { return int32_t(c < dim ? c : 0u); }

// Named barrier ids: 0 is __syncthreads'; 1 + g guards consumer warpgroup g's bias buffer (128 threads); the
// ping-pong turns use 256 threads (the waiting warpgroup's bar.sync + the other's bar.arrive).
inline constexpr uint32_t kBiasBar = 1;
inline constexpr uint32_t kMmaTurn = 3;
inline constexpr uint32_t kEpiTurn = 5;
inline constexpr uint32_t kStagger = 7;  // cooperative with T::kLag > 0: warpgroup 0 lets warpgroup 1 start a tile

// Shared-memory addresses every role needs (32-bit shared-window addresses).
template <class T>
struct Smem {
  uint32_t base;      // 1024-byte aligned
  uint32_t full;      // [S]   TMA bytes landed
  uint32_t empty;     // [S]   consumers done reading
  uint32_t st_full;   // [2]   staging written by consumer warpgroup g
  uint32_t st_empty;  // [2]   staging drained by the storers
  uint32_t flags;     // split-K: [g] warpgroup g reduces its unit's tile, [2] the storers skip the unit
  __device__ explicit Smem(uint32_t b)
      : base(b),
        full(b + T::kOffBars),
        empty(full + 8 * T::kStages),
        st_full(empty + 8 * T::kStages),
        st_empty(st_full + 8 * 2),
        flags(b + T::kOffFlags) {}
};

template <class T>
using SchedulerOf = TileScheduler<T::kBM, T::kBN, T::kClusterM, T::kClusterN, T::kSplitK>;

// This CTA's walk with the launch's split plan (`num_k` 0: a role that needs no k-ranges).
template <class T>
__device__ __forceinline__ SchedulerOf<T> scheduler_of(const EpilogueParams& ep, uint32_t num_k) {
  constexpr uint32_t CS = T::kClusterSize;
  return SchedulerOf<T>(ep.m, ep.n, blockIdx.x / CS, gridDim.x / CS, num_k, ep.splits, ep.split_tiles,
                        ep.by_columns != 0);
}

// The parameters one unit's stores see, n0 its first column: a column-tail half ends at its own last column (its
// accumulators and staging past it are stale), so both its epilogue paths, the storers and the fp32 register path,
// bound it through `n` like the matrix edge.
template <class T>
__device__ __forceinline__ EpilogueParams unit_params(const EpilogueParams& ep, const SchedulerOf<T>& sched,
                                                      uint32_t n0) {
  EpilogueParams epu = ep;
  if (T::kColumnTail && sched.column_unit()) epu.n = min(ep.n, n0 + T::kBN / 2);
  return epu;
}

// Producer: one thread walks the tiles and keeps the stage ring full.
template <class T>
__device__ __forceinline__ void run_producer(const CUtensorMap* tmap_x, const CUtensorMap* tmap_w,
                                             const EpilogueParams& ep, uint32_t k, uint32_t smem_base) {
  constexpr int S = T::kStages, BM = T::kBM, BN = T::kBN, CM = T::kClusterM, CN = T::kClusterN;
  constexpr int CS = T::kClusterSize;
  const Smem<T> sm(smem_base);
  const uint32_t rank = CS > 1 ? ptx::cluster_ctarank() : 0;
  const uint32_t num_k = (k + T::kBK - 1) / T::kBK;
  SchedulerOf<T> sched = scheduler_of<T>(ep, num_k);
  // L2 hints (EpilogueParams::l2_hints): an operand loads either with evict_last or with no hint at all.
  const uint64_t keep = ptx::l2_evict_last();
  const bool keep_x = ep.l2_hints & kL2HintX, keep_w = ep.l2_hints & kL2HintW;
  uint32_t s = 0, phase = 0;
  for (; sched.valid(); sched.advance()) {
    uint32_t mb, nb, kb, ke;
    sched.block(CM > 1 ? rank : 0, CN > 1 ? rank : 0, mb, nb);
    sched.k_range(kb, ke);
    int32_t a_row, b_row;
    uint32_t a_dst_off = 0, b_dst_off = 0;
    if constexpr (CN > 1) {  // X slice multicast: this CTA fetches rows [rank*BM/2, (rank+1)*BM/2) of the tile
      a_row = clamp_coord(mb * BM + rank * (BM / CN), ep.m);
      a_dst_off = rank * (BM / CN) * 128;
    } else {
      a_row = clamp_coord(mb * BM, ep.m);
    }
    // Column tail: W comes in half-tile boxes, both for a whole tile, only the unit's own for a column half (into
    // the slot's first half, where the consumer's N = BN / 2 wgmma reads it). column_offset() is 0 otherwise.
    if constexpr (CM > 1) {  // W slice multicast
      b_row = clamp_coord(nb * BN + rank * (BN / CM), ep.n);
      b_dst_off = rank * (BN / CM) * 128;
    } else {
      b_row = clamp_coord(nb * BN + sched.column_offset(), ep.n);
    }
    const bool whole_w = !(T::kColumnTail && sched.column_unit());
    const int32_t b_row2 = T::kColumnTail ? clamp_coord(nb * BN + BN / 2, ep.n) : 0;
    const uint32_t stage_bytes = whole_w ? uint32_t(T::kStageBytes) : uint32_t(T::kABytes + T::kBBytes / 2);
    for (uint32_t kt = kb; kt < ke; ++kt) {
      ptx::mbar_wait(sm.empty + 8 * s, phase ^ 1);
      const uint32_t full = sm.full + 8 * s;
      // Every CTA's slot receives the whole stage (own loads + the peer's multicast), so each expects it all.
      ptx::mbar_arrive_expect_tx(full, stage_bytes);
      const uint32_t a_dst = sm.base + T::kOffA + s * T::kABytes + a_dst_off;
      const uint32_t b_dst = sm.base + T::kOffB + s * T::kBBytes + b_dst_off;
      const int32_t kc = int32_t(kt * T::kBK);
      auto load = [&](uint32_t dst, const CUtensorMap* map, int32_t row, bool hint) {
        if (hint) {
          ptx::tma_load_2d_hint(dst, map, full, kc, row, keep);
        } else {
          ptx::tma_load_2d(dst, map, full, kc, row);
        }
      };
      auto load_multicast = [&](uint32_t dst, const CUtensorMap* map, int32_t row, bool hint) {
        if (hint) {
          ptx::tma_load_2d_multicast_hint(dst, map, full, kc, row, uint16_t((1u << CS) - 1), keep);
        } else {
          ptx::tma_load_2d_multicast(dst, map, full, kc, row, uint16_t((1u << CS) - 1));
        }
      };
      if constexpr (CN > 1) {
        load_multicast(a_dst, tmap_x, a_row, keep_x);
      } else {
        load(a_dst, tmap_x, a_row, keep_x);
      }
      if constexpr (CM > 1) {
        load_multicast(b_dst, tmap_w, b_row, keep_w);
      } else {
        load(b_dst, tmap_w, b_row, keep_w);
        if (T::kColumnTail && whole_w) load(b_dst + T::kBBytes / 2, tmap_w, b_row2, keep_w);
      }
      if (++s == S) {
        s = 0;
        phase ^= 1;
      }
    }
  }
}

// Storers (staged epilogue): drain each consumer warpgroup's staging buffer to Y, tile after tile. With TMA stores
// one thread does it.
template <class T>
__device__ __forceinline__ void run_storer(const EpilogueParams& ep, const CUtensorMap* tmap_y, uint32_t smem_base,
                                           uint32_t tid) {
  constexpr int CS = T::kClusterSize;
  if (T::kTmaStore && tid != 0) return;
  const Smem<T> sm(smem_base);
  using Epi = Epilogue<T>;
  auto store = [&](uint32_t staging, const EpilogueParams& epu, uint32_t row0, uint32_t n0) {
    if constexpr (T::kTmaStore) {
      Epi::store_tma(staging, tmap_y, epu, row0, n0);
    } else {
      Epi::store_staged(staging, epu, row0, n0, tid);
    }
  };
  const uint32_t rank = CS > 1 ? ptx::cluster_ctarank() : 0;
  SchedulerOf<T> sched = scheduler_of<T>(ep, 0);
  uint32_t phase = 0;
  for (; sched.valid(); sched.advance()) {
    uint32_t mb, nb;
    sched.block(T::kClusterM > 1 ? rank : 0, T::kClusterN > 1 ? rank : 0, mb, nb);
    if constexpr (T::kPingpong) {  // one staging buffer, one tile (or column half of one) per turn
      const uint32_t n0 = nb * T::kBN + sched.column_offset();
      const EpilogueParams epu = unit_params<T>(ep, sched, n0);
#pragma unroll 1
      for (uint32_t c = 0; c < uint32_t(T::kEpiChunks); ++c) {
        ptx::mbar_wait(sm.st_full, phase);
        // Split-K: a unit whose tile another CTA reduces passes through empty, and so does a column half's second
        // chunk.
        const bool skip = T::kSplitK && ptx::ld_shared_b32(sm.flags + 8) != 0;
        if (!skip) store(sm.base + T::kOffStaging, epu, mb * T::kBM, n0 + c * T::kChunkCols);
        ptx::mbar_arrive(sm.st_empty);
        phase ^= 1;
      }
    } else {
#pragma unroll 1
      for (uint32_t g = 0; g < 2; ++g) {
        ptx::mbar_wait(sm.st_full + 8 * g, phase);
        store(sm.base + T::kOffStaging + g * T::kStagingBytesPerWG, ep, mb * T::kBM + g * T::kWgRows, nb * T::kBN);
        ptx::mbar_arrive(sm.st_empty + 8 * g);
      }
      phase ^= 1;
    }
  }
  // The last TMA stores' writes complete before the thread exits.
  if constexpr (T::kTmaStore) ptx::bulk_wait_group<0>();
}

// The main loop of both consumer schedules: k-steps [kb, ke) of the tile (kb = 0: the first one overwrites the
// accumulators) from ring position (s, phase), one k-step kept in flight. On return the last k-step is still in
// flight and `prev` is its slot: the caller overlaps epilogue set-up with it, then waits for it and releases the
// slot. A tile's k-steps may be issued in several calls (the staggered cooperative schedule): a call with kb > 0
// continues with the in-flight k-step and `prev` the previous call left.
// N: the wgmma width, BN, or BN / 2 for a column-tail half (it accumulates into the first BN / 4 registers, which
// hold the tile's first BN / 2 columns in the same order).
template <class T, int N = T::kBN, class Release>
__device__ __forceinline__ void mainloop(float (&acc)[T::kMSub][T::kBN / 2], const uint32_t (&a_lo0)[T::kMSub],
                                         uint32_t b_lo0, uint32_t full, uint32_t kb, uint32_t ke, uint32_t& s,
                                         uint32_t& phase, uint32_t& prev, const Release& release) {
  static_assert(N == T::kBN || N == T::kBN / 2, "a whole tile or a column half");
  using Mma = Wgmma<N, T::kIn == DType::bf16>;
  // Descriptors as their low words (wgmma::desc_sw128_lo), stepped with 32-bit adds: with 64-bit descriptor adds
  // the k-step took ~130 instructions per warp, most of the kernel's (ncu source counters, run 109); with these, 30%
  // fewer instructions in all and the ping-pong kernels 1.4-1.8% faster (run 110).
  for (uint32_t kt = kb; kt < ke; ++kt) {
    ptx::mbar_wait(full + 8 * s, phase);
#pragma unroll
    for (int ms = 0; ms < T::kMSub; ++ms)
#pragma unroll
      for (int i = 0; i < T::kBN / 2; ++i) ptx::reg_fence(acc[ms][i]);
    wgmma::fence();
    const uint32_t a_off = s * uint32_t(T::kABytes >> 4), b_off = s * uint32_t(T::kBBytes >> 4);
#pragma unroll
    for (int kk = 0; kk < T::kBK / 16; ++kk) {
#pragma unroll
      for (int ms = 0; ms < T::kMSub; ++ms) {
        Mma::mma(reinterpret_cast<float(&)[N / 2]>(acc[ms]), wgmma::desc_sw128_of(a_lo0[ms] + a_off + 2 * kk),
                 wgmma::desc_sw128_of(b_lo0 + b_off + 2 * kk), (kt | kk) != 0);
      }
    }
    wgmma::commit();
    // Keep one k-step of wgmma in flight; the one before it is finished, so its slot can be refilled.
    if (kt > 0) {
      wgmma::wait<1>();
      release(prev);
    }
    prev = s;
    if (++s == T::kStages) {
      s = 0;
      phase ^= 1;
    }
  }
}

// What both consumer schedules start from: zeroed fp32 accumulators and the stage-0 wgmma descriptors of the
// warpgroup's A rows (from row `a_row0` of the stage's BM) and of B. A stage s adds its byte offset >> 4 to a
// descriptor's 14-bit address field, and the k16 step within the 128-byte swizzled row adds 32 bytes (the hardware
// applies the swizzle to the final address).
template <class T>
struct ConsumerState {
  float acc[T::kMSub][T::kBN / 2];
  uint32_t a_lo0[T::kMSub];
  uint32_t b_lo0;
  __device__ __forceinline__ ConsumerState(const Smem<T>& sm, uint32_t a_row0) {
#pragma unroll
    for (int ms = 0; ms < T::kMSub; ++ms)
#pragma unroll
      for (int i = 0; i < T::kBN / 2; ++i) acc[ms][i] = 0.f;
#pragma unroll
    for (int ms = 0; ms < T::kMSub; ++ms)
      a_lo0[ms] = wgmma::desc_sw128_lo(sm.base + T::kOffA + (a_row0 + ms * 64) * 128);
    b_lo0 = wgmma::desc_sw128_lo(sm.base + T::kOffB);
  }
};

// A consumer warp's release of ring slot `slot`: one arrival on the slot of every CTA whose producer filled part of
// it (multicast fills the peer's too).
template <class T>
__device__ __forceinline__ auto slot_release(const Smem<T>& sm, uint32_t lane) {
  return [empty = sm.empty, lane](uint32_t slot) {
    if (lane < uint32_t(T::kClusterSize)) {
      if constexpr (T::kClusterSize > 1) {
        ptx::mbar_arrive_cluster(empty + 8 * slot, lane);
      } else {
        ptx::mbar_arrive(empty + 8 * slot);
      }
    }
  };
}

// Consumers: wgmma over the stage ring into fp32 accumulators, then the epilogue's register half.
template <class T>
__device__ __forceinline__ void run_consumer(const EpilogueParams& ep, uint32_t k, uint32_t smem_base,
                                             uint32_t warp, uint32_t lane, bool staged) {
  constexpr int BM = T::kBM, BN = T::kBN, CS = T::kClusterSize;
  static_assert(!T::kSplitK, "split-K runs on the ping-pong schedule");
  const Smem<T> sm(smem_base);
  const uint32_t rank = CS > 1 ? ptx::cluster_ctarank() : 0;
  const uint32_t num_k = (k + T::kBK - 1) / T::kBK;
  SchedulerOf<T> sched(ep.m, ep.n, blockIdx.x / CS, gridDim.x / CS);

  const uint32_t g = warp / 4 - 1;  // consumer warpgroup
  const uint32_t wwarp = warp % 4;  // warp within it
  ConsumerState<T> cs(sm, g * T::kWgRows);  // this warpgroup's half of the tile's rows
  auto& acc = cs.acc;
  const auto release = slot_release(sm, lane);

  // Staggered warpgroups (T::kLag > 0): both warpgroups read every stage, so without a stagger they finish a tile
  // together and run its epilogue together while the tensor cores idle. Warpgroup 1 instead starts each tile only
  // once warpgroup 0 has issued the tile's first `lag` k-steps (named barrier kStagger: 0 arrives, 1 syncs). Then
  // warpgroup 0's epilogue overlaps warpgroup 1's last k-steps, and warpgroup 1's epilogue warpgroup 0's first ones
  // of the next tile; the stage ring keeps 0 at most kStages k-steps ahead, so the lag persists through the tile.
  // No deadlock: warpgroup 0's first `lag` <= kStages k-steps of tile t need only releases of tile t - 1 (and the
  // peer CTA's, which do not wait on us within tile t). No double arrival: warpgroup 0 reaches k-step lag - 1 of
  // tile t + 1 only after warpgroup 1 released ring position p(t+1) + lag - 1 - kStages, which lies in tile t (so
  // warpgroup 1 has passed tile t's barrier) when num_k + lag >= kStages + 1; with fewer k-steps the stagger is off.
  const uint32_t lag = T::kLag > 0 ? min(uint32_t(T::kLag), num_k) : 0u;
  const bool stagger = T::kLag > 0 && num_k + lag >= uint32_t(T::kStages) + 1;

  uint32_t s = 0, phase = 0, st_phase = 0;
  const uint32_t staging = sm.base + T::kOffStaging + g * T::kStagingBytesPerWG;
  const uint32_t bias_smem = sm.base + T::kOffBias + g * BN * 4;
  const uint32_t tid = threadIdx.x % 128;
  using Epi = Epilogue<T>;
  for (; sched.valid(); sched.advance()) {
    uint32_t mb, nb;
    sched.block(T::kClusterM > 1 ? rank : 0, T::kClusterN > 1 ? rank : 0, mb, nb);
    float bias[Epi::kBiasRegs];
    Epi::load_bias(bias, ep, nb * BN, tid);
    uint32_t prev = 0;
    if (stagger && g == 0) {
      mainloop<T>(acc, cs.a_lo0, cs.b_lo0, sm.full, 0, lag, s, phase, prev, release);
      ptx::named_bar_arrive(kStagger, 256);
      mainloop<T>(acc, cs.a_lo0, cs.b_lo0, sm.full, lag, num_k, s, phase, prev, release);
    } else {
      if (stagger) ptx::named_bar_sync(kStagger, 256);
      mainloop<T>(acc, cs.a_lo0, cs.b_lo0, sm.full, 0, num_k, s, phase, prev, release);
    }
    // Epilogue set-up that does not need the accumulators runs while the last k-step's wgmma still executes.
    // The bias buffer is per warpgroup; the first barrier keeps a fast warp from overwriting it while a slow one
    // still reads the previous tile's values, the second publishes the new ones.
    ptx::named_bar_sync(kBiasBar + g, 128);
    Epi::stage_bias(bias, bias_smem, tid);
    ptx::named_bar_sync(kBiasBar + g, 128);
    if (staged) ptx::mbar_wait(sm.st_empty + 8 * g, st_phase ^ 1);

    wgmma::wait<0>();
#pragma unroll
    for (int ms = 0; ms < T::kMSub; ++ms)
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) ptx::reg_fence(acc[ms][i]);
    release(prev);

    if (staged) {
      if (ep.out == OutKind::bf16) {
        Epi::template to_staging<OutKind::bf16>(acc, staging, bias_smem, wwarp, lane);
      } else {
        Epi::template to_staging<OutKind::fp16>(acc, staging, bias_smem, wwarp, lane);
      }
      ptx::mbar_arrive(sm.st_full + 8 * g);
      st_phase ^= 1;
    } else {
      const uint32_t row0 = mb * BM + g * T::kWgRows;
      if (ep.out == OutKind::bf16) {
        Epi::template to_global<OutKind::bf16>(acc, ep, bias_smem, row0, nb * BN, wwarp, lane);
      } else if (ep.out == OutKind::fp16) {
        Epi::template to_global<OutKind::fp16>(acc, ep, bias_smem, row0, nb * BN, wwarp, lane);
      } else {
        Epi::template to_global<OutKind::fp32>(acc, ep, bias_smem, row0, nb * BN, wwarp, lane);
      }
    }
  }
}

// Ping-pong epilogue, staged: the tile goes through the one staging buffer in T::kEpiChunks column chunks. Chunk
// q = j * kEpiChunks + c of the CTA's sequence may be written once the storers have drained chunk q - 1 (phase
// q - 1 of st_empty); the epilogue turns make that wait exact. Split-K: a unit that does not write its tile
// (`write` false) passes each chunk through empty and tells the storers so (`skip_flag`).
// Half: a column-tail half, whose BN / 2 columns are the accumulators' first half: the first chunk of two, or the
// first half of the one (the storers stop at its last column); a second chunk passes through empty.
template <class T, OutKind Out, bool Half = false>
__device__ __forceinline__ void pp_to_staging(float (&acc)[T::kMSub][T::kBN / 2], uint32_t st_full,
                                              uint32_t st_empty, uint32_t staging, uint32_t bias_smem, uint32_t j,
                                              uint32_t wwarp, uint32_t lane, bool write, uint32_t skip_flag) {
  using Epi = Epilogue<T>;
  constexpr int NC = T::kEpiChunks, JPC = T::kBN / 16 / NC;
  static_assert(!Half || NC <= 2, "a column half is the first chunk of two, or half of the one");
  const uint32_t q0 = j * NC;
  const bool leader = wwarp == 0 && lane == 0;
  auto chunk = [&](auto c) {
    constexpr int C = decltype(c)::value;
    const bool w = write && (C == 0 || !Half);
    ptx::mbar_wait(st_empty, ((q0 + C) & 1) ^ 1);
    if constexpr (T::kSplitK) {
      if (leader) ptx::st_shared_b32(skip_flag, w ? 0u : 1u);
    }
    if (w) Epi::template to_staging<Out, C * JPC, Half && NC == 1 ? JPC / 2 : JPC>(acc, staging, bias_smem, wwarp, lane);
    ptx::mbar_arrive(st_full);
  };
  [&]<int... C>(std::integer_sequence<int, C...>) {
    (chunk(std::integral_constant<int, C>{}), ...);
  }(std::make_integer_sequence<int, NC>{});
}

// Split-K, after a unit's main loop: write this split's fp32 partial tile to the workspace, count in on the tile's
// counter, and if this unit is the tile's last to arrive, sum all `splits` partials in split order into acc.
// Returns whether this warpgroup writes the tile. Each thread stores and loads its own accumulator fragment as
// float4s, so a warp's accesses are 512 contiguous bytes and the reducer reads what the same thread position of
// every split wrote. Ordering: stores, __threadfence, barrier, one atomicAdd; the reducer's atomic, barrier,
// __threadfence, then L2 (.cg) loads.
template <class T>
__device__ __forceinline__ bool splitk_reduce(float (&acc)[T::kMSub][T::kBN / 2], const EpilogueParams& ep,
                                              uint32_t split_tile, uint32_t split, uint32_t flag, uint32_t g,
                                              uint32_t tid) {
  constexpr int kJ = T::kBN / 8;                                  // float4s per m64 block per thread
  constexpr uint64_t kTileF4 = uint64_t(T::kBM) * T::kBN / 4;     // float4s per partial tile
  float4* const base = reinterpret_cast<float4*>(ep.partials) + uint64_t(split_tile) * ep.splits * kTileF4 + tid;
  float4* const mine = base + uint64_t(split) * kTileF4;
#pragma unroll
  for (int ms = 0; ms < T::kMSub; ++ms)
#pragma unroll
    for (int j = 0; j < kJ; ++j)
      __stcg(mine + (ms * kJ + j) * 128,
             make_float4(acc[ms][4 * j], acc[ms][4 * j + 1], acc[ms][4 * j + 2], acc[ms][4 * j + 3]));
  __threadfence();
  ptx::named_bar_sync(kBiasBar + g, 128);
  if (tid == 0) {
    const bool last = atomicAdd(ep.counters + split_tile, 1u) == ep.splits - 1;
    // Every split has counted: the counter is left zero for the next launch (sm90_launch.cuh: no memset needed).
    if (last) ep.counters[split_tile] = 0u;
    ptx::st_shared_b32(flag, last ? 1u : 0u);
  }
  ptx::named_bar_sync(kBiasBar + g, 128);
  if (ptx::ld_shared_b32(flag) == 0) return false;
  __threadfence();
#pragma unroll
  for (int ms = 0; ms < T::kMSub; ++ms)
#pragma unroll
    for (int j = 0; j < kJ; ++j) {
      const float4 v = __ldcg(base + (ms * kJ + j) * 128);
      acc[ms][4 * j] = v.x;
      acc[ms][4 * j + 1] = v.y;
      acc[ms][4 * j + 2] = v.z;
      acc[ms][4 * j + 3] = v.w;
    }
#pragma unroll 1
  for (uint32_t sp = 1; sp < ep.splits; ++sp) {
    const float4* const p = base + uint64_t(sp) * kTileF4;
#pragma unroll
    for (int ms = 0; ms < T::kMSub; ++ms)
#pragma unroll
      for (int j = 0; j < kJ; ++j) {
        const float4 v = __ldcg(p + (ms * kJ + j) * 128);
        acc[ms][4 * j] += v.x;
        acc[ms][4 * j + 1] += v.y;
        acc[ms][4 * j + 2] += v.z;
        acc[ms][4 * j + 3] += v.w;
      }
  }
  return true;
}

// Ping-pong consumers: warpgroup g computes the CTA's units g, g + 2, g + 4, ... (see the header comment).
template <class T>
__device__ __forceinline__ void run_consumer_pp(const EpilogueParams& ep, uint32_t k, uint32_t smem_base,
                                                uint32_t warp, uint32_t lane, bool staged) {
  constexpr int S = T::kStages, BM = T::kBM, BN = T::kBN, CS = T::kClusterSize;
  const Smem<T> sm(smem_base);
  const uint32_t rank = CS > 1 ? ptx::cluster_ctarank() : 0;
  const uint32_t num_k = (k + T::kBK - 1) / T::kBK;
  SchedulerOf<T> sched = scheduler_of<T>(ep, num_k);

  const uint32_t g = warp / 4 - 1;  // consumer warpgroup
  const uint32_t wwarp = warp % 4;  // warp within it
  ConsumerState<T> cs(sm, 0);  // every stage holds one whole tile's k-slice: the warpgroup reads all BM rows of A
  auto& acc = cs.acc;
  const auto release = slot_release(sm, lane);

  const uint32_t staging = sm.base + T::kOffStaging;
  const uint32_t bias_smem = sm.base + T::kOffBias + g * BN * 4;
  const uint32_t tid = threadIdx.x % 128;
  using Epi = Epilogue<T>;
  // j: the unit's index in this CTA's sequence, which is also the order of the stage ring and of the staging
  // turns. Each warpgroup walks every unit to keep the ring position (units differ in k-steps with split-K).
  uint64_t pos = 0;  // ring position of unit j's first k-step
  for (uint32_t j = 0; sched.valid(); ++j, sched.advance()) {
    uint32_t kb, ke;
    sched.k_range(kb, ke);
    const uint64_t pos0 = pos;
    pos += ke - kb;
    if ((j & 1u) != g) continue;
    const bool has_next = sched.valid_ahead(1);  // the other warpgroup's next unit, which waits for our turns
    uint32_t mb, nb;
    sched.block(T::kClusterM > 1 ? rank : 0, T::kClusterN > 1 ? rank : 0, mb, nb);
    const bool half = T::kColumnTail && sched.column_unit();
    const uint32_t n0 = nb * BN + sched.column_offset();
    float bias[Epi::kBiasRegs];
    Epi::load_bias(bias, ep, n0, tid);
    uint32_t s = uint32_t(pos0 % S), phase = uint32_t((pos0 / S) & 1);

    // Our main-loop turn: the other warpgroup has waited on every full barrier of unit j - 1, so each barrier we
    // wait on is at most one phase behind the parity we ask for (no aliasing).
    if (j > 0) ptx::named_bar_sync(kMmaTurn + g, 256);
    uint32_t prev = 0;
    if (half) {
      mainloop<T, T::kColumnTail ? BN / 2 : BN>(acc, cs.a_lo0, cs.b_lo0, sm.full, 0, ke - kb, s, phase, prev,
                                                 release);
    } else {
      mainloop<T>(acc, cs.a_lo0, cs.b_lo0, sm.full, 0, ke - kb, s, phase, prev, release);
    }
    // Hand the tensor cores over: the other warpgroup's wgmma queue behind our last ones.
    if (has_next) ptx::named_bar_arrive(kMmaTurn + (g ^ 1), 256);

    ptx::named_bar_sync(kBiasBar + g, 128);
    Epi::stage_bias(bias, bias_smem, tid);
    ptx::named_bar_sync(kBiasBar + g, 128);

    wgmma::wait<0>();
#pragma unroll
    for (int ms = 0; ms < T::kMSub; ++ms)
#pragma unroll
      for (int i = 0; i < BN / 2; ++i) ptx::reg_fence(acc[ms][i]);
    release(prev);

    // Split-K: outside the epilogue turn, so the other warpgroup's main loop hides the partials' traffic.
    bool write = true;
    if constexpr (T::kSplitK) {
      if (sched.split_unit())
        write = splitk_reduce<T>(acc, ep, sched.split_index(), sched.split(), sm.flags + 4 * g, g, tid);
    }

    // Our epilogue turn: the other warpgroup has written unit j - 1 into the staging buffer; the storers' drain of
    // it completes phase j - 1 of st_empty.
    if (j > 0) ptx::named_bar_sync(kEpiTurn + g, 256);
    if (staged) {
      auto to_staging = [&](auto out, auto half) {
        pp_to_staging<T, decltype(out)::value, decltype(half)::value>(acc, sm.st_full, sm.st_empty, staging,
                                                                       bias_smem, j, wwarp, lane, write, sm.flags + 8);
      };
      using Bf16 = std::integral_constant<OutKind, OutKind::bf16>;
      using Fp16 = std::integral_constant<OutKind, OutKind::fp16>;
      using Half = std::bool_constant<T::kColumnTail>;  // `half` is never true without a column tail
      if (half) {
        ep.out == OutKind::bf16 ? to_staging(Bf16{}, Half{}) : to_staging(Fp16{}, Half{});
      } else {
        ep.out == OutKind::bf16 ? to_staging(Bf16{}, std::false_type{}) : to_staging(Fp16{}, std::false_type{});
      }
    } else if (write) {
      const EpilogueParams epu = unit_params<T>(ep, sched, n0);
      const uint32_t row0 = mb * BM;
      if (ep.out == OutKind::bf16) {
        Epi::template to_global<OutKind::bf16>(acc, epu, bias_smem, row0, n0, wwarp, lane);
      } else if (ep.out == OutKind::fp16) {
        Epi::template to_global<OutKind::fp16>(acc, epu, bias_smem, row0, n0, wwarp, lane);
      } else {
        Epi::template to_global<OutKind::fp32>(acc, epu, bias_smem, row0, n0, wwarp, lane);
      }
    }
    if (has_next) ptx::named_bar_arrive(kEpiTurn + (g ^ 1), 256);
  }
}

template <class T>
__global__ void __launch_bounds__(T::kThreads, 1)
    gemm_kernel(const __grid_constant__ CUtensorMap tmap_x, const __grid_constant__ CUtensorMap tmap_w,
                const __grid_constant__ CUtensorMap tmap_y, const EpilogueParams ep, const uint32_t k) {
#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int S = T::kStages, CS = T::kClusterSize;
  extern __shared__ __align__(1024) uint8_t smem_raw[];
  // Broadcast from lane 0, so the compiler knows them warp-uniform and keeps what derives from them (barrier
  // addresses, wgmma descriptors) in uniform registers: the k-step of 64x256 pp went from 77 to 51 SASS instructions
  // (128x128 pp 105 -> 63) with no R2UR or MOV left, and every own-kernel pick of the table ran at 0.998-1.023x its
  // former speed (run 113).
  const uint32_t base = __shfl_sync(0xffffffffu, smem_align_up(ptx::smem_addr(smem_raw)), 0);
  const uint32_t warp = __shfl_sync(0xffffffffu, threadIdx.x / 32, 0), lane = threadIdx.x % 32;

  if (threadIdx.x == 0) {
    const Smem<T> sm(base);
    for (int s = 0; s < S; ++s) {
      ptx::mbar_init(sm.full + 8 * s, 1);
      // One arrival per reading consumer warp of every CTA that reads this slot (multicast fills the peer's too).
      ptx::mbar_init(sm.empty + 8 * s, T::kReadersPerStage * CS);
    }
    for (int g = 0; g < 2; ++g) {
      ptx::mbar_init(sm.st_full + 8 * g, 128);
      ptx::mbar_init(sm.st_empty + 8 * g, T::kStorerArrivals);
    }
    ptx::fence_mbar_init();
    ptx::prefetch_tmap(&tmap_x);
    ptx::prefetch_tmap(&tmap_w);
    if constexpr (T::kTmaStore) ptx::prefetch_tmap(&tmap_y);
  }
  // The peer CTA multicasts into our barriers, so they must be initialised cluster-wide before anyone loads.
  if constexpr (CS > 1) {
    ptx::cluster_sync();
  } else {
    __syncthreads();
  }

  // fp32 output bypasses the staging buffer (it would not fit), so the storers have nothing to do then.
  const bool staged = T::kStaged && ep.out != OutKind::fp32;
  // Each role builds its own state after the split: values live across setmaxnreg.dec would have to fit in the
  // producer warpgroup's 56 registers and get spilled otherwise.
  if (warp < 4) {
    // The producer and storers need few registers; giving them back lets the consumers hold 224 each.
    ptx::setmaxnreg_dec<T::kProducerRegs>();
    const Role role = role_of<T>(warp);
    if (role == Role::producer) {
      if (lane == 0) run_producer<T>(&tmap_x, &tmap_w, ep, k, base);
    } else if (role == Role::storer && staged) {
      run_storer<T>(ep, &tmap_y, base, threadIdx.x - 32);
    }
  } else {
    ptx::setmaxnreg_inc<T::kConsumerRegs>();
    if constexpr (T::kPingpong) {
      run_consumer_pp<T>(ep, k, base, warp, lane, staged);
    } else {
      run_consumer<T>(ep, k, base, warp, lane, staged);
    }
  }

  // A CTA must not exit while its peer may still arrive on its barriers or multicast into its shared memory.
  if constexpr (CS > 1) {
    __syncwarp();
    ptx::cluster_sync();
  }
#endif
}

}  // namespace tgemm::sm90
