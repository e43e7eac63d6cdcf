// Dev probe (session 27): does cuBLASLt have faster algorithms than its heuristic's 8 answers for the suites' shapes?
// For each shape: the heuristic's answers and their configurations, then their neighbours (one attribute changed)
// that cublasLtMatmulAlgoCheck accepts, timed briefly (L2-warm, cudaEvent over a few launches); then the fastest
// few against the default in interleaved rounds. Not part of the library; build:
//   nvcc -O2 -std=c++17 -o /tmp/lt_algo_probe scripts/dev/lt_algo_probe.cu -lcublasLt
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "lt_probe.h"

struct Shape {
  int64_t m, n, k;
  bool bias;
};

struct Cand {
  cublasLtMatmulAlgo_t algo;
  std::string desc;
  size_t ws = 0;
  float us = 1e30f;
};

static std::string describe(const cublasLtMatmulAlgo_t& a) { return lt_describe(a); }

int main(int argc, char** argv) {
  std::vector<Shape> shapes = {{128, 4608, 3584, true},  {256, 4096, 4096, false}, {512, 6144, 4096, false},
                               {1024, 1280, 5120, true}, {128, 7168, 8192, false}, {256, 3584, 3584, false},
                               {1024, 4096, 14336, false}, {4096, 4096, 4096, false}, {2048, 4608, 3584, true},
                               {64, 6144, 4096, false},  {16384, 1280, 6144, true}, {512, 3584, 18944, false}};
  const int max_cands = argc > 1 ? std::atoi(argv[1]) : 2;  // hill-climbing rounds
  cublasLtHandle_t h;
  LT_CHECK(cublasLtCreate(&h));
  const size_t kWs = size_t(32) << 20;
  int64_t maxx = 0, maxw = 0, maxy = 0;
  for (auto& s : shapes) maxx = std::max(maxx, s.m * s.k), maxw = std::max(maxw, s.n * s.k), maxy = std::max(maxy, s.m * s.n);
  void *x, *w, *y, *bias, *ws;
  LT_CHECK(cudaMalloc(&x, maxx * 2));
  LT_CHECK(cudaMalloc(&w, maxw * 2));
  LT_CHECK(cudaMalloc(&y, maxy * 2));
  LT_CHECK(cudaMalloc(&bias, 65536 * 2));
  LT_CHECK(cudaMalloc(&ws, kWs));
  LT_CHECK(cudaMemset(x, 0x3c, maxx * 2));
  LT_CHECK(cudaMemset(w, 0x3b, maxw * 2));
  LT_CHECK(cudaMemset(bias, 0x3c, 65536 * 2));
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (const Shape& s : shapes) {
    const LtLinear lin = lt_linear(s.m, s.n, s.k, s.bias ? bias : nullptr);
    cublasLtMatmulDesc_t op = lin.op;
    cublasLtMatrixLayout_t A = lin.a, B = lin.b, D = lin.d;
    float alpha = 1, beta = 0;
    auto launch = [&](const cublasLtMatmulAlgo_t& a) {
      return cublasLtMatmul(h, op, &alpha, w, A, x, B, &beta, y, D, y, D, &a, ws, kWs, 0);
    };
    auto time = [&](const cublasLtMatmulAlgo_t& a, int reps) -> float {
      if (launch(a) != CUBLAS_STATUS_SUCCESS) return 1e30f;
      cudaEventRecord(e0);
      for (int i = 0; i < reps; ++i) launch(a);
      cudaEventRecord(e1);
      if (cudaEventSynchronize(e1) != cudaSuccess) {
        std::fprintf(stderr, "fault\n");
        std::exit(2);
      }
      float ms = 0;
      cudaEventElapsedTime(&ms, e0, e1);
      return ms * 1000 / reps;
    };
    cublasLtMatmulHeuristicResult_t hr[8];
    const int found = lt_heuristic(h, lin, kWs, 8, hr);
    std::printf("\n## M=%lld N=%lld K=%lld bias=%d: heuristic %d answers\n", (long long)s.m, (long long)s.n,
                (long long)s.k, int(s.bias), found);
    std::vector<Cand> heur;
    for (int i = 0; i < found; ++i) {
      Cand c{hr[i].algo, "h" + std::to_string(i) + " " + describe(hr[i].algo), hr[i].workspaceSize};
      c.us = time(c.algo, 20);
      std::printf("  %-60s %8.2f us ws %zu\n", c.desc.c_str(), c.us, c.ws);
      heur.push_back(c);
    }
    // Hill climbing from the heuristic's answers (all nvjet, algo id 66 on the H200 in run 255): one attribute at a
    // time (tile; cluster; custom option; split-K with its reduction), every variant cublasLtMatmulAlgoCheck accepts
    // timed briefly; the three fastest seen seed the next round.
    std::vector<Cand> cands;
    std::vector<std::string> seen;
    int checked = 0;
    auto try_algo = [&](const cublasLtMatmulAlgo_t& a) {
      const std::string d = describe(a);
      if (std::find(seen.begin(), seen.end(), d) != seen.end()) return;
      seen.push_back(d);
      ++checked;
      cublasLtMatmulHeuristicResult_t chk;
      if (cublasLtMatmulAlgoCheck(h, op, A, B, D, D, &a, &chk) != CUBLAS_STATUS_SUCCESS || chk.workspaceSize > kWs) return;
      Cand c{a, d, chk.workspaceSize};
      c.us = time(a, 5);
      cands.push_back(c);
    };
    std::vector<Cand> seeds(heur.begin(), heur.begin() + std::min<size_t>(3, heur.size()));
    for (auto& c : heur) seen.push_back(c.desc.substr(c.desc.find(' ') + 1));
    for (int round = 0; round < max_cands; ++round) {
      for (const Cand& sd : seeds) {
        const cublasLtMatmulAlgo_t& b = sd.algo;
        uint32_t tiles[CUBLASLT_MATMUL_TILE_END];
        size_t sz = 0;
        int ntiles = 0;
        if (cublasLtMatmulAlgoCapGetAttribute(&b, CUBLASLT_ALGO_CAP_TILE_IDS, tiles, sizeof tiles, &sz) == 0)
          ntiles = int(sz / sizeof(uint32_t));
        int32_t cmax = 0;
        cublasLtMatmulAlgoCapGetAttribute(&b, CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX, &cmax, sizeof cmax, &sz);
        uint32_t redmask = 0;
        cublasLtMatmulAlgoCapGetAttribute(&b, CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK, &redmask, sizeof redmask, &sz);
        for (int ti = 0; ti < ntiles; ++ti) {
          cublasLtMatmulAlgo_t a = b;
          cublasLtMatmulAlgoConfigSetAttribute(&a, CUBLASLT_ALGO_CONFIG_TILE_ID, &tiles[ti], sizeof tiles[ti]);
          try_algo(a);
        }
        for (uint16_t cl = 2; cl <= 16; ++cl)
          for (uint32_t cu = 0; cu <= uint32_t(cmax); ++cu) {
            cublasLtMatmulAlgo_t a = b;
            cublasLtMatmulAlgoConfigSetAttribute(&a, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &cl, sizeof cl);
            cublasLtMatmulAlgoConfigSetAttribute(&a, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &cu, sizeof cu);
            try_algo(a);
          }
        for (int32_t sk : {1, 2, 3, 4, 6, 8})
          for (uint32_t red : {1u, 2u, 4u}) {
            if (sk > 1 && !(redmask & red)) continue;
            cublasLtMatmulAlgo_t a = b;
            const uint32_t r = sk > 1 ? red : 0u;
            cublasLtMatmulAlgoConfigSetAttribute(&a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &sk, sizeof sk);
            cublasLtMatmulAlgoConfigSetAttribute(&a, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &r, sizeof r);
            try_algo(a);
          }
      }
      std::sort(cands.begin(), cands.end(), [](const Cand& a, const Cand& b) { return a.us < b.us; });
      seeds.assign(cands.begin(), cands.begin() + std::min<size_t>(3, cands.size()));
    }
    std::printf("  %d configurations checked, %zu accepted\n", checked, cands.size());
    // The default and the ten fastest, interleaved: 7 rounds of 30 launches each, median per candidate.
    std::vector<Cand> top;
    top.push_back(heur[0]);
    for (size_t i = 0; i < cands.size() && top.size() < 11; ++i) top.push_back(cands[i]);
    for (int i = 1; i < int(heur.size()); ++i) top.push_back(heur[i]);
    std::vector<std::vector<float>> t(top.size());
    for (int r = 0; r < 7; ++r)
      for (size_t i = 0; i < top.size(); ++i) t[i].push_back(time(top[i].algo, 30));
    const auto med = [](std::vector<float> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    const float def = med(t[0]);
    for (size_t i = 0; i < top.size(); ++i)
      std::printf("  %s %-60s %8.2f us  x default %.3f\n", i == 0 ? "DEFAULT" : (i <= 10 ? "search " : "heur   "),
                  top[i].desc.c_str(), med(t[i]), def / med(t[i]));
    std::fflush(stdout);
    cublasLtMatrixLayoutDestroy(A);
    cublasLtMatrixLayoutDestroy(B);
    cublasLtMatrixLayoutDestroy(D);
    cublasLtMatmulDescDestroy(op);
  }
  return 0;
}
