// A cuBLASLt algorithm named by its configuration, for the algorithms the tuner finds beyond the heuristic's answers.
// Host-only (no cuBLASLt header), so names can be made and parsed where no GPU is.
//
// Why: cuBLASLt's heuristic offers at most 8 answers (run 254). On the H200 every answer was algorithm 66 with a
// tile, a cluster shape and a custom option; the same algorithm with another cluster or tile ran up to 1.3x faster
// than the default at 256 x 4096 x 4096 and 1.03-1.05x at four of twelve mid-band shapes (run 256,
// scripts/dev/lt_algo_probe.cu). A table row names such an algorithm by all of its configuration attributes, so the
// dispatcher can build it again; cublasLtMatmulAlgoCheck decides, per problem, whether it runs.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tgemm::cublaslt_detail {

// CUBLASLT_ALGO_CONFIG_* of one algorithm (cublasLt.h): ID, TILE_ID, STAGES_ID, SPLITK_NUM, REDUCTION_SCHEME,
// CTA_SWIZZLING, CUSTOM_OPTION, INNER_SHAPE_ID, CLUSTER_SHAPE_ID.
struct LtAlgoConfig {
  int32_t id = 0;
  uint32_t tile = 0, stages = 0;
  int32_t split_k = 1;
  uint32_t reduction = 0, swizzle = 0, custom = 0;
  uint16_t inner = 0, cluster = 0;

  // cublaslt_a66_t17_s35_k1_r0_w0_c1_i0_cl5
  std::string name() const;
  bool operator==(const LtAlgoConfig&) const = default;
};

inline constexpr std::string_view kLtAlgoPrefix = "cublaslt_a";

// The configuration a name from LtAlgoConfig::name() stands for; nothing for any other text (strict: every field,
// in order, decimal, in range, nothing after).
std::optional<LtAlgoConfig> parse_lt_algo_name(std::string_view name);

// Cluster shapes the tuner tries with each of the heuristic's answers (cublasLtClusterShape_t): 1x1, 2x1, 1x2, 2x2.
// The heuristic's answers on the H200 used 2x1 ... 2x4; in run 256 the winners over them had 1x1, 2x1 or 1x2.
inline constexpr uint16_t kLtSearchClusters[] = {2, 3, 5, 6};

// SearchDepth::wide also tries the first kLtWideAnswers unsplit answers with every custom option the algorithm
// declares (CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX; 0-7 on the H200) times each cluster above: in run 256, 4096^3 ran
// 1.05x the default on answer 1's tile with another custom option and cluster, and 1024 x 4096 x 14336 1.03x; the
// winners there came from the first three answers. That is 8 x 4 x 3 = 96 more candidates per problem on the H200 (the
// options are capped at 16 per answer).
inline constexpr int kLtWideAnswers = 3;

}  // namespace tgemm::cublaslt_detail
