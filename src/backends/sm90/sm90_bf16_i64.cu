// Instantiates the bf16 sm90 configurations with 64-bit Y offsets (see sm90_configs.h).
#include "backends/sm90/sm90_configs.h"
#include "backends/sm90/sm90_launch.cuh"

namespace tgemm::sm90 {

TGEMM_SM90_INSTANTIATE(add_bf16_i64, TGEMM_SM90_BF16_CONFIGS, 64)

// Experimental (TGEMM_SM90_BK32=1): stages of BK = 32 with the 64-byte swizzle, ten of them in the shared memory of
// 64x256 pp's five, so the ring leads the consumers by 9 half k-steps (2304 cycles of wgmma) instead of 4 (2048).
void add_bf16_bk32_i64(std::vector<std::unique_ptr<Kernel>>& out) {
  if (env_int("TGEMM_SM90_BK32", 0) != 0)
    add<Traits<DType::bf16, 64, 256, 10, 1, 1, 64, EpiMode::staged, true, false, 0, 32>>(out);
}

}  // namespace tgemm::sm90
