// The registered sm90 configurations, in one list that the instantiation files expand (one file per input dtype
// and index width, so a parallel build compiles them side by side).
//
// X(in dtype, BM, BN, stages, cluster_m, cluster_n, epilogue)
//   128x256: the workhorse (most FLOPs per staged byte); 3 stages so the 64 KiB staging buffer fits.
//   128x192: 4 stages beside staging; fills the last wave better when N is a multiple of 192 (e.g. 4608), or
//            when 128x256 leaves SMs idle (N = 1280 at M <= 4096).
//   128x128: small tile for problems of few tiles (more tiles per wave).
//   256x128: tall tile, X multicast across an N pair (c1x2): ties 128x256 at huge M with N <= 6144.
// Measured and dropped (scripts/dev/SM90_NOTES.md): a direct epilogue with 4 stages (0.75x of staged at K=1280),
// c1x1 variants (within noise of the clustered ones), 256x128 c2x1 (slower).
#pragma once

#define TGEMM_SM90_BF16_CONFIGS(X)                    \
  X(bf16, 128, 256, 3, 2, 1, staged)                  \
  X(bf16, 128, 192, 4, 2, 1, staged)                  \
  X(bf16, 128, 128, 5, 2, 1, staged)                  \
  X(bf16, 256, 128, 3, 1, 2, staged)

#define TGEMM_SM90_FP16_CONFIGS(X)                    \
  X(fp16, 128, 256, 3, 2, 1, staged)                  \
  X(fp16, 128, 128, 5, 2, 1, staged)
