// Configuration of one sm90 kernel instantiation: the values that are template parameters, the shared-memory
// layout they imply, and the generated kernel name. Host and device code both include this.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "core/smem_align.h"
#include "tgemm/types.h"

namespace tgemm::sm90 {

// How the output tile leaves the SM.
//  staged: consumers write bf16/fp16 into a padded shared-memory buffer and the storer warps copy it to global
//          memory with 16-byte stores while the consumers already run the next tile's main loop.
//  direct: consumers store straight from registers (4- or 8-byte stores); no staging buffer, so more pipeline
//          stages fit. fp32 output always takes this path (a staged fp32 tile would not fit beside the stages).
//  tma:    staged, but the buffer is laid out as TMA boxes of 64 columns with the 128-byte swizzle and one storer
//          thread writes it with TMA stores. No Y offset is formed in the kernel (TMA's int32 coordinates and its
//          own limits apply), so this mode exists with 64-bit limits only.
enum class EpiMode : uint8_t { staged, direct, tma };

// Everything that distinguishes one instantiation; the kernel name is generated from it.
struct Config {
  DType in = DType::bf16;
  int bm = 128, bn = 256, bk = 64;
  int stages = 3;
  int cluster_m = 1, cluster_n = 1;
  int index_bits = 64;  // width of the Y offsets the epilogue computes
  EpiMode epi = EpiMode::staged;
  bool pingpong = false;  // each consumer warpgroup owns a whole BM x BN tile (see sm90_kernel.cuh)
  // Split-K (ping-pong only): the k-steps of every output tile, or of a stream-K tail of them, may be divided among
  // several CTAs, chosen per problem at run time (none where splitting does not pay); see sm90_kernel.cuh and
  // choose_splits in sm90_split_plan.h.
  bool splitk = false;
  // Cooperative only: warpgroup 1 starts each tile `lag` k-steps after warpgroup 0 (0 = together); see run_consumer.
  int lag = 0;
  // The small-M skeleton (sm90_swapab.cuh): W rows are the wgmma M side (bn = 64 or 128 per CTA), tokens the N side
  // (bm = MT), K split across a cluster (splitk: the split count per problem).
  bool swapab = false;
};

// e.g. "sm90_bf16_128x256x64_s3_c2x1_i32"; a direct epilogue adds "_ed", TMA stores "_etma", and the ping-pong
// schedule "_pp" before the index width ("sm90_bf16_64x256x64_s4_c1x1_pp_i32": each consumer warpgroup computes a
// 64x256 tile), and split-K with a per-problem split plan "_skauto" after that
// ("sm90_bf16_64x256x64_s5_c1x1_pp_skauto_i64").
// The small-M skeleton: "sm90_bf16_swapab_64x64x64_s12_cks_i64" (64 W rows x 64 tokens x 64 k per CTA, 12 stages,
// K split across a cluster by a per-problem count).
inline std::string config_name(const Config& c) {
  std::string s = "sm90_";
  s += c.in == DType::bf16 ? "bf16" : "fp16";
  if (c.swapab)
    return s + "_swapab_" + std::to_string(c.bn) + "x" + std::to_string(c.bm) + "x" + std::to_string(c.bk) + "_s" +
           std::to_string(c.stages) + "_cks_i" + std::to_string(c.index_bits);
  s += "_" + std::to_string(c.bm) + "x" + std::to_string(c.bn) + "x" + std::to_string(c.bk);
  s += "_s" + std::to_string(c.stages);
  s += "_c" + std::to_string(c.cluster_m) + "x" + std::to_string(c.cluster_n);
  if (c.epi == EpiMode::direct) s += "_ed";
  if (c.epi == EpiMode::tma) s += "_etma";
  if (c.pingpong) s += "_pp";
  if (c.splitk) s += "_skauto";
  if (c.lag > 0) s += "_lag" + std::to_string(c.lag);
  s += "_i" + std::to_string(c.index_bits);
  return s;
}

// Largest dynamic shared memory a block may opt into on sm_90 (227 KiB).
inline constexpr int kMaxDynamicSmem = 232448;

// Runtime epilogue selection (kept out of the template so one instantiation serves every dtype combination).
enum class OutKind : uint8_t { bf16 = 0, fp16 = 1, fp32 = 2 };
enum class BiasKind : uint8_t { none = 0, same_as_input = 1, fp32 = 2 };

// PP selects the consumer schedule:
//  cooperative (PP = false): both consumer warpgroups work on one BM x BN tile, BM / 2 rows each, and both run its
//           epilogue at the same time, so the tensor cores idle during it.
//  ping-pong (PP = true): each consumer warpgroup owns a whole BM x BN tile (BM = 64 or 128) and the two alternate:
//           while one runs its main loop on tile t, the other runs the epilogue of tile t - 1. One staging buffer
//           serves both, since their epilogues take turns.
// SK (ping-pong only) adds split-K: a work unit is one k-range of one tile; see sm90_kernel.cuh.
// Lag (cooperative only) staggers the two consumer warpgroups by that many k-steps per tile (see run_consumer).
template <DType In, int BM, int BN, int Stages, int CM, int CN, int IndexBits, EpiMode Epi, bool PP = false,
          bool SK = false, int Lag = 0>
struct Traits {
  static constexpr Config kConfig{In, BM, BN, 64, Stages, CM, CN, IndexBits, Epi, PP, SK, Lag};

  static constexpr DType kIn = In;
  static constexpr int kBM = BM, kBN = BN;
  // 64 16-bit elements = 128 bytes = exactly one 128-byte swizzle row, the layout wgmma reads best.
  static constexpr int kBK = 64;
  static constexpr int kStages = Stages;
  static constexpr int kClusterM = CM, kClusterN = CN, kClusterSize = CM * CN;
  static constexpr EpiMode kEpi = Epi;
  static constexpr bool kStaged = Epi != EpiMode::direct;  // a staging buffer and storers (16-bit outputs)
  static constexpr bool kTmaStore = Epi == EpiMode::tma;
  static constexpr bool kPingpong = PP;
  static constexpr bool kSplitK = SK;
  static constexpr int kLag = Lag;
  using IndexT = std::conditional_t<IndexBits == 32, int32_t, int64_t>;
  static constexpr int kIndexBits = IndexBits;

  // Warp roles: warpgroup 0 = producer warp (TMA) + 3 storer warps; warpgroups 1 and 2 = consumers. Cooperative:
  // each consumer owns half of the tile's rows (BM / 2), so the two share every W (B) tile in shared memory.
  // Ping-pong: each owns all BM rows of its own tile.
  static constexpr int kConsumerWGs = 2;
  static constexpr int kThreads = 128 * (1 + kConsumerWGs);
  static constexpr int kStorerThreads = 96;
  // Arrivals that mark a staging buffer drained: every storer thread, or the one that issues the TMA stores.
  static constexpr int kStorerArrivals = Epi == EpiMode::tma ? 1 : kStorerThreads;
  static constexpr int kWgRows = PP ? BM : BM / kConsumerWGs;  // rows per consumer warpgroup
  static constexpr int kMSub = kWgRows / 64;                   // m64 wgmma blocks per consumer warpgroup
  static constexpr int kAccRegs = kMSub * BN / 2;              // fp32 accumulators per consumer thread
  // Consumer warps that read each stage (one arrival each on its empty barrier, per CTA of the cluster).
  static constexpr int kReadersPerStage = PP ? 4 : 4 * kConsumerWGs;

  // setmaxnreg budgets: 128 * 56 + 256 * 224 = 64512 <= 65536 registers per SM. The consumers need ~160 with 128
  // accumulators and fit 192 (128x192 ping-pong) without spills; the storers need more than the usual 40 to keep
  // four 16-byte chunks in flight (at 232 / 40 the 128x192 ping-pong took ~2% more energy per FLOP, run 378-379).
  // The TMA-store epilogue with 192 accumulators (128x192 etma pp) spilled at 224 / 56 (36 bytes) and 232 / 40 (4 bytes);
  // at 240 / 24 ptxas reports none: its producer and one storer thread need few registers, and 240 * 256 + 24 * 128 is
  // the launch's whole pool (the static_assert below).
  static constexpr bool kWideTmaStore = Epi == EpiMode::tma && kAccRegs > 128;
  static constexpr uint32_t kProducerRegs = kWideTmaStore ? 24 : 56;
  static constexpr uint32_t kConsumerRegs = kWideTmaStore ? 240 : 224;
  // setmaxnreg.inc waits until the CTA's pool has the registers, and the pool is what the launch gave: 168 per thread
  // under __launch_bounds__(384, 1). A budget above it hangs the consumers (run 313: a 128x192 ping-pong at 240 + 32).
  static constexpr uint32_t kLaunchRegs = (65536 / kThreads) & ~7u;
  static_assert(kConsumerRegs * 128 * kConsumerWGs + kProducerRegs * 128 <= kLaunchRegs * kThreads,
                "setmaxnreg budget over the launch's registers");

  // ---- shared memory layout (offsets from a 1024-byte aligned base) ----
  static constexpr int kABytes = BM * kBK * 2;  // one stage of X
  static constexpr int kBBytes = BN * kBK * 2;  // one stage of W
  static constexpr int kStageBytes = kABytes + kBBytes;
  // 16 bytes of padding per staging row: the consumer's 4-byte writes (8 rows x 4 column pairs per warp) then
  // fall on 32 distinct banks, and rows stay 16-byte aligned for the storers' vector reads.
  // Ping-pong stages the tile in kEpiChunks column chunks through one buffer: the whole tile where that fits
  // beside the stages, else two or three chunks in turn (the consumer waits for the storers between them, which the
  // other warpgroup's main loop hides), so that one more stage fits.
  static constexpr int kNumBars = 2 * kStages + 2 * kConsumerWGs;  // full[S], empty[S], st_full[2], st_empty[2]
  static constexpr int kFixedBytes = kConsumerWGs * BN * 4 + kNumBars * 8 + (SK ? 16 : 0) + kSmemAlign;  // bias, barriers, flags, alignment
  // The TMA layout needs no padding: its swizzle spreads the rows over the banks.
  static constexpr int kStagingPad = Epi == EpiMode::tma ? 0 : 16;
  // NC chunks fit: whole stmatrix column pairs (whole 64-column boxes for TMA stores), and the staging buffer
  // beside the stages.
  static constexpr auto kChunksFit = [](int nc) {
    return BN % nc == 0 && (BN / nc) % (Epi == EpiMode::tma ? 64 : 16) == 0 &&
           kStages * (BM + BN) * 128 + (PP ? BM : BM / 2) * (BN / nc * 2 + kStagingPad) + kFixedBytes <= kMaxDynamicSmem;
  };
  static constexpr int kEpiChunks = !(PP && kStaged) || kChunksFit(1) ? 1 : kChunksFit(2) ? 2 : 3;
  // The column tail (SplitPlan::by_columns): a half-width unit stages the tile's first BN / 2 columns (the first of
  // two chunks, or the first half of the one), whole 64-column TMA boxes; the producer loads W in half-tile boxes so
  // that a half unit fetches only its own rows. Unclustered: a half unit's W rows are not its peer's.
  static constexpr bool kColumnTail = SK && CM * CN == 1 && (BN / 2) % 64 == 0;
  static constexpr int kChunkCols = BN / kEpiChunks;
  static constexpr int kStagingRowBytes = kChunkCols * 2 + kStagingPad;
  static constexpr int kStagingBuffers = PP ? 1 : kConsumerWGs;
  static constexpr int kStagingBytesPerWG = kStaged ? kWgRows * kStagingRowBytes : 0;
  static constexpr int kOffA = 0;
  static constexpr int kOffB = kStages * kABytes;
  static constexpr int kOffStaging = kStages * kStageBytes;
  // The tile's bias as fp32, one copy per consumer warpgroup (zeros without bias): read from here the epilogue
  // is branch-free; read from global memory inside it, each load's latency was exposed in turn.
  static constexpr int kOffBias = kOffStaging + kStagingBuffers * kStagingBytesPerWG;
  static constexpr int kOffBars = kOffBias + kConsumerWGs * BN * 4;
  // barriers: see kNumBars (ping-pong uses index 0 of st_full / st_empty)
  // Split-K flags (4 words): [g] consumer warpgroup g's "this CTA reduces the tile" broadcast, [2] the storers'
  // "nothing to store for this unit".
  static constexpr int kOffFlags = kOffBars + kNumBars * 8;
  static constexpr int kFlagBytes = SK ? 16 : 0;
  // + kSmemAlign: the kernel rounds its base up (core/smem_align.h).
  static constexpr int kSmemBytes = kOffFlags + kFlagBytes + kSmemAlign;

  static_assert(In == DType::bf16 || In == DType::fp16, "inputs are 16-bit");
  static_assert(IndexBits == 32 || IndexBits == 64, "index width");
  static_assert(BM % (PP ? 64 : 128) == 0 && kMSub >= 1 && kMSub <= 2,
                "each consumer warpgroup owns 64 or 128 rows");
  static_assert(BN % 16 == 0 && BN >= 64 && BN <= 256, "wgmma N must be a multiple of 16 up to 256 here");
  static_assert(kAccRegs <= 192, "accumulators must leave room in the consumer register budget");
  static_assert(CM >= 1 && CN >= 1 && kClusterSize <= 2, "clusters of 1 or 2 CTAs");
  static_assert(CM == 1 || CN == 1, "multicast along one dimension");
  // TMA boxes: at most 256 rows, and every multicast slice must start on a 1024-byte swizzle boundary.
  static_assert(BM / CN <= 256 && BN / CM <= 256, "TMA box rows <= 256");
  static_assert(((BM / CN) * 128) % 1024 == 0 && ((BN / CM) * 128) % 1024 == 0, "multicast slices 1024-aligned");
  static_assert(kABytes % 1024 == 0 && kBBytes % 1024 == 0, "stage buffers keep 1024-byte swizzle alignment");
  static_assert((kWgRows * 128) % 1024 == 0, "each warpgroup's A slice starts on a swizzle boundary");
  static_assert(kStagingRowBytes % 16 == 0 && kOffStaging % 16 == 0, "staging rows 16-byte aligned");
  static_assert(kOffBars % 8 == 0, "mbarriers are 8-byte objects");
  static_assert(kSmemBytes <= kMaxDynamicSmem, "shared memory over the sm_90 227 KiB limit");
  static_assert(kStages >= 2, "need at least double buffering");
  static_assert(!SK || (PP && CM * CN == 1), "split-K is built on the unclustered ping-pong schedule");
  // Warpgroup 0 may run at most kStages k-steps ahead before the ring needs warpgroup 1's releases of the tile
  // before; a lag within that keeps the stagger barrier free of deadlock (see run_consumer).
  static_assert(Lag >= 0 && (Lag == 0 || (!PP && Lag < Stages)), "lag: cooperative only, below the stage count");
  static_assert(kChunkCols % 16 == 0 && (kEpiChunks == 1 || PP), "staging chunks of whole stmatrix column pairs");
  // TMA stores: boxes of 64 columns (128 bytes, the 128-byte swizzle's row) that must not reach into the next tile,
  // each box 1024-byte aligned (the swizzle pattern repeats every 8 rows of 128 bytes).
  static_assert(Epi != EpiMode::tma || (IndexBits == 64 && kChunkCols % 64 == 0 && kOffStaging % 1024 == 0 &&
                                        kStagingBytesPerWG % 1024 == 0 && kWgRows <= 256),
                "TMA-store epilogue: 64-bit limits, 64-column boxes, 1024-byte aligned staging");
};

}  // namespace tgemm::sm90
