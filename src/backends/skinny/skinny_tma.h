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
};

}  // namespace tgemm::skinny
