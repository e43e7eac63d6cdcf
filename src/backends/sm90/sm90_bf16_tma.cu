// Instantiates the bf16 sm90 configurations with the TMA-store epilogue (see sm90_configs.h).
#include "backends/sm90/sm90_configs.h"
#include "backends/sm90/sm90_launch.cuh"

namespace tgemm::sm90 {

void add_bf16_tma(std::vector<std::unique_ptr<Kernel>>& out) {
#define TGEMM_SM90_ADD(dt, bm, bn, st, cm, cn, epi, pp, sk, lag) \
  add<Traits<DType::dt, bm, bn, st, cm, cn, 64, EpiMode::epi, pp, sk, lag>>(out);
  TGEMM_SM90_BF16_TMA_CONFIGS(TGEMM_SM90_ADD)
#undef TGEMM_SM90_ADD
}

}  // namespace tgemm::sm90
