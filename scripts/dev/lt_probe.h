// What the cuBLASLt dev probes share (lt_algo_probe.cu, lt_mode_probe.cu, lt_enum.cpp): row-major Y = X W^T in
// cuBLASLt's column-major terms, as src/backends/cublaslt does (A = W with op T, B = X, D = Y), and an algorithm's
// configuration written as the library names it (lt_algo.h: a<id>_t<tile>_s<stages>_k<split>_r<reduction>_w<swizzle>
// _c<custom>_i<inner>_cl<cluster>). Header-only, so each probe still builds alone with one nvcc line.
#pragma once

#include <cublasLt.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

// Exits with the call, file and line on any non-zero status (cudaError_t, cublasStatus_t).
#define LT_CHECK(x)                                                              \
  do {                                                                           \
    auto _e = (x);                                                               \
    if (int(_e) != 0) {                                                          \
      std::fprintf(stderr, "%s:%d %s -> %d\n", __FILE__, __LINE__, #x, int(_e)); \
      std::exit(1);                                                              \
    }                                                                            \
  } while (0)

// bf16 in and out, fp32 compute; with `bias` (bf16, N elements) the bias epilogue.
struct LtLinear {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
};

inline LtLinear lt_linear(int64_t m, int64_t n, int64_t k, const void* bias) {
  LtLinear l;
  cublasLtMatmulDescCreate(&l.op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  cublasLtMatmulDescSetAttribute(l.op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
  cublasLtMatmulDescSetAttribute(l.op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
  if (bias) {
    cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
    cublasLtMatmulDescSetAttribute(l.op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
    cudaDataType_t bt = CUDA_R_16BF;
    cublasLtMatmulDescSetAttribute(l.op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt);
    cublasLtMatmulDescSetAttribute(l.op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
  }
  cublasLtMatrixLayoutCreate(&l.a, CUDA_R_16BF, uint64_t(k), uint64_t(n), k);
  cublasLtMatrixLayoutCreate(&l.b, CUDA_R_16BF, uint64_t(k), uint64_t(m), k);
  cublasLtMatrixLayoutCreate(&l.d, CUDA_R_16BF, uint64_t(n), uint64_t(m), n);
  return l;
}

// The heuristic's first `want` answers for `l` within `ws_bytes` of workspace (how many it gave).
inline int lt_heuristic(cublasLtHandle_t h, const LtLinear& l, size_t ws_bytes, int want,
                        cublasLtMatmulHeuristicResult_t* out) {
  cublasLtMatmulPreference_t pref;
  LT_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof ws_bytes);
  int found = 0;
  LT_CHECK(cublasLtMatmulAlgoGetHeuristic(h, l.op, l.a, l.b, l.d, l.d, pref, want, out, &found));
  cublasLtMatmulPreferenceDestroy(pref);
  return found;
}

inline std::string lt_describe(const cublasLtMatmulAlgo_t& a) {
  int32_t id = 0, splitk = 0;
  uint32_t tile = 0, stages = 0, red = 0, swz = 0, custom = 0;
  uint16_t inner = 0, cluster = 0;
  size_t w = 0;
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &red, sizeof red, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swz, sizeof swz, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &custom, sizeof custom, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, &inner, sizeof inner, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &cluster, sizeof cluster, &w);
  char b[200];
  std::snprintf(b, sizeof b, "a%d_t%u_s%u_k%d_r%u_w%u_c%u_i%u_cl%u", id, tile, stages, splitk, red, swz, custom, inner,
                cluster);
  return b;
}
