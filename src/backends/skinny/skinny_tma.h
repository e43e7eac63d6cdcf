// skinny backend: the TMA variant's kernel argument (host and device; needs the driver API's CUtensorMap type).
#pragma once

#include <cuda.h>

#include "backends/skinny/skinny_config.h"

namespace tgemm::skinny {

// Passed by value as a __grid_constant__ parameter: the copy engine reads the tensor maps from parameter space.
struct TmaParams {  // 64-byte aligned through its CUtensorMap members
  CUtensorMap w;  // W [N, K]: box 64 x block_rows, 128B swizzle, zero fill past N and K
  CUtensorMap x;  // X [M, K]: box 64 x x_rows, 128B swizzle, zero fill past M and K
  Params p;       // k_steps / sps in 64-element units (tma_launch_shape)
  int stages = 0;       // ring depth (tma_stages)
  int x_rows = 0;       // rows of an X box (tma_x_rows)
  // skinny_ws_kernel only: 3D views [K / 64 full units][rows][64] of W and X, so one copy fetches a whole stage
  // (WK units x rows) of each; used for stages made of full 64-element units when use3 != 0.
  int use3 = 0;
  int kfull = 0;        // full 64-element units of K
  int prefetch_units = 0;  // skinny_ws_kernel only: W units (64 x BR) prefetched into L2 before the PDL wait
  int early_ring = 1;      // skinny_ws_kernel only: the first ring issued right after the PDL wait (0: from the loop)
  int w_evict_first = 0;   // skinny_ws_kernel only: W's tensor copies carry an L2 evict_first policy (ws_w_evict_first)
  int tile_rows = 0;       // skinny_ws_kernel only: rows per tile (ws_tile_rows), <= 128 / WK; 0: 128 / WK
  CUtensorMap w3;
  CUtensorMap x3;
};

}  // namespace tgemm::skinny
