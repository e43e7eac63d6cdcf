// Instantiates the bf16 sm90 configurations with the TMA-store epilogue (see sm90_configs.h).
#include "backends/sm90/sm90_configs.h"
#include "backends/sm90/sm90_launch.cuh"

namespace tgemm::sm90 {

TGEMM_SM90_INSTANTIATE(add_bf16_tma, TGEMM_SM90_BF16_TMA_CONFIGS, 64)

}  // namespace tgemm::sm90
