// The registered sm90 configurations, in one list that the instantiation files expand (one file per input dtype
// and index width, so a parallel build compiles them side by side).
//
// X(in dtype, BM, BN, stages, cluster_m, cluster_n, epilogue, ping-pong, split-K, lag)
//   64x256 pp s5 c1x1: ping-pong, each consumer warpgroup a 64x256 tile, 5 stages (the tile is staged in two
//            column halves so the 5th stage fits). Best configuration on 76 of the 88 models shapes (M >= 2048)
//            and at the seed shapes up to M = 65536 (1.02-1.05x cuBLASLt).
//   64x256 pp s5 c2x1: the same with W multicast across an M pair: steady 1.02-1.03x at M >= 340000, where the
//            unclustered one measured 0.85-0.95x.
//   128x256 s3 c2x1 (cooperative): long K (>= 14336) within noise of the ping-pong; the named kernel of the
//            forced-i32 CLI test and of the docs.
//   128x192 s4 c2x1 (cooperative): few-tile shapes whose N is a multiple of 192 (M = 2048, N = 4608).
//   128x160 s5 c1x1 (cooperative, each warpgroup 64x160): N = 1280 is 8 column tiles, so 4096 x 1280 is 256 tiles =
//            1.94 rounds on 132 SMs (64x256: 320 tiles, 2.4 rounds); cuBLASLt's own choice there (128x160 coopA,
//            5 stages). Run 7: 2048x1280x8192 0.95x, 4096x1280x{5120,6144,8192} 0.95-0.97x, 4096x1280x1280 0.85x
//            (run 6 best 0.80-0.81 on all of them). Its c2x1 twin measured 1-4% behind on these shapes.
//   128x192 pp s4 c1x1: ping-pong, each consumer warpgroup a 128x192 tile (two m64n192 blocks, 192 accumulators),
//            the tile staged whole. 40 KB per k-step for 1.5x the FLOPs of 64x256 pp: at the power cap it needs 3-4%
//            less energy per FLOP (1.05-1.06 pJ against 1.09, run 379), so it runs 3.5% faster back to back; in the
//            2-way bench it ties 64x256 pp at 340000 / 360000 (1.091 against 1.089-1.090x cuBLASLt) and leads at
//            768000 (1.114 against 64x256 pp c2x1's 1.106). The seed's large-M pick until its TMA-store twin (below,
//            session 50: +3% at 340000 / 360000 / 768000, run 418). Measured beside it, each against
//            the 64x256 pp pick in the same call (runs 378-379): 5 stages with the tile staged in three 64-column
//            chunks (kEpiChunks = 3) 1.089 / 1.091 / 1.118x, 1-2% more energy per FLOP than 4 stages; the c2x1 twin
//            (W multicast) 1.080x; setmaxnreg 232 / 40 (storers with fewer registers) 1.5% less energy per FLOP than
//            the pick where 224 / 56 saves 3.5%.
//   128x128 pp s5 c1x1: 4096x1024x1024 0.93x (pp 64x256 0.88) and some M = 2048 shapes (+2-3%); run 7. The untuned
//            default ranks it behind pp 64x256 (same tile count, weight 0.95): for the tuned table.
//   64x256 pp s5 c1x1 skauto: the workhorse with deterministic split-K, the split plan per problem
//            (choose_splits in sm90_split_plan.h): every tile split where the tiles are few and K long, or, where
//            the last round is at most half full, a tail: its tiles split in K (run first) or in two column halves
//            (run last). The k-range tail measured 2-3% faster than the unsplit twin at 23-31 rounds and 3-36% at
//            1-4 (run 132, K >= 3584), the column tail 1-13% at K = 1024-1280 (runs 144, 146), so the untuned
//            default takes them; unsplit it runs within ~1% of the twin (run 125). Splitting every tile beats the
//            twin but not cuBLASLt (run 126).
// Measured and dropped (scripts/dev/SM90_NOTES.md, runs 4-7): staggered cooperative warpgroups (Traits Lag = 2: 1-2%
// slower on 128x256 s3, 128x160 s5 and 128x128 s5, run 7), ping-pong 64x160 s7 (run 6: median 0.76x of
// cuBLASLt on the models shapes, 0.79 at best on the N = 1280 ones), 128x128 and 256x128 cooperative, ping-pong 64x256
// s4, 128x128 s6 and 64x128 s8 (never best beyond noise; ping-pong 128x128 s5 c1x1, dropped after run 5, came back
// in run 7 for 4096x1024x1024), ping-pong with the direct epilogue, and earlier a direct epilogue with 4 stages and
// the c1x1 cooperative variants.
#pragma once

#define TGEMM_SM90_BF16_CONFIGS(X)                     \
  X(bf16, 64, 256, 5, 1, 1, staged, true, false, 0)    \
  X(bf16, 64, 256, 5, 2, 1, staged, true, false, 0)    \
  X(bf16, 128, 256, 3, 2, 1, staged, false, false, 0)  \
  X(bf16, 128, 192, 4, 2, 1, staged, false, false, 0)  \
  X(bf16, 128, 160, 5, 1, 1, staged, false, false, 0)  \
  X(bf16, 128, 128, 5, 1, 1, staged, true, false, 0)   \
  X(bf16, 128, 192, 4, 1, 1, staged, true, false, 0)   \
  X(bf16, 64, 256, 5, 1, 1, staged, true, true, 0)

#define TGEMM_SM90_FP16_CONFIGS(X)                     \
  X(fp16, 64, 256, 5, 1, 1, staged, true, false, 0)    \
  X(fp16, 128, 256, 3, 2, 1, staged, false, false, 0)

// The TMA-store epilogue (EpiMode::tma, 64-bit limits only): twins of the i64 variants above whose column chunks
// are whole 64-column boxes, for the tuned table. Run 102 (docs/benchmarks.md), each against its staged twin over
// the seed and the 144 models shapes with M >= 256: 64x256 pp c1x1 +3.1% at M < 2048, -0.2% above; 128x128 pp +2.3%
// / +0.4%; cooperative 128x256 c2x1 +4 to +14% at the seed. Not registered: 64x256 pp c2x1 (3 to 13% slower than its
// staged twin at the seed, the only shapes where that tile is picked) and 128x160 (160 columns are no whole boxes).
// The split-K twins of 64x256 and 128x128 pp (the stream-K tail, run 132: 128x128 0.99 -> 1.11x cuBLASLt at
// 2048 x 3584 x 18944, 0.63 -> 0.81-0.84x at 512 x 4608 x 3584). 128x192 pp s4 (session 50, setmaxnreg 240 / 24 in
// sm90_config.h): the staged seed pick's tile with the TMA store. The gain step (run 418) moved 340000 / 360000 /
// 768000 x 6144 x 1280 to it, 1.092-1.122 -> 1.121-1.151x cuBLASLt in graph replay and 1.091-1.094 -> 1.110-1.128x
// in plain launches; interleaved in one process 1.125 against the staged twin's 1.093 at 340000. Run 419's gain step
// read it 1-5% ahead at 65536 x 6144, 262144 x 3840 and 262144 x 6144 (K = 1280) too; those rows wait for a GPU test
// run and a bench of the whole table (scripts/dev/data/run419).
#define TGEMM_SM90_BF16_TMA_CONFIGS(X)              \
  X(bf16, 64, 256, 5, 1, 1, tma, true, false, 0)    \
  X(bf16, 128, 256, 3, 2, 1, tma, false, false, 0)  \
  X(bf16, 128, 192, 4, 2, 1, tma, false, false, 0)  \
  X(bf16, 128, 128, 5, 1, 1, tma, true, false, 0)   \
  X(bf16, 128, 192, 4, 1, 1, tma, true, false, 0)   \
  X(bf16, 64, 256, 5, 1, 1, tma, true, true, 0)     \
  X(bf16, 128, 128, 5, 1, 1, tma, true, true, 0)
