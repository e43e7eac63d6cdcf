// Probe: does cuBLASLt run faster with algorithm configurations its best-fit heuristic does not return?
// For each shape of a suite csv: the heuristic's top 8 (as the cublaslt backend asks), plus every configuration the
// heuristic returns when limited to one algorithm id (CUBLASLT_SEARCH_LIMITED_BY_ALGO_ID, each id of
// cublasLtMatmulAlgoGetIds), plus split-K variants of the top 8 that cublasLtMatmulAlgoCheck accepts. All are timed
// in interleaved rounds on L2-rotated operands; prints the best of the top 8 and the best of all, with configs.
//   lt_enum shapes.csv [max_candidates] > out.csv
// Build (on the GPU machine): nvcc -O2 -std=c++20 scripts/dev/lt_enum.cpp -lcublasLt -o /tmp/lt_enum
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "lt_probe.h"

#define CK(x)                                                                                      \
  do {                                                                                             \
    cudaError_t e_ = (x);                                                                          \
    if (e_ != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_)); exit(1); } \
  } while (0)

struct Shape { long m, n, k; bool bias; };

struct Cfg {
  int id = 0;
  uint32_t tile = 0, splitk = 1, red = 0, swz = 0, custom = 0, stages = 0;
  uint16_t inner = 0, cluster = 0;
  auto tup() const { return std::tie(id, tile, splitk, red, swz, custom, stages, inner, cluster); }
  bool operator<(const Cfg& o) const { return tup() < o.tup(); }
  std::string name() const {
    char b[160];
    snprintf(b, sizeof b, "a%d_t%u_s%u_k%u_r%u_w%u_o%u_i%u_c%u", id, tile, stages, splitk, red, swz, custom, unsigned(inner), unsigned(cluster));
    return b;
  }
};

template <class V>
static V get_cfg(const cublasLtMatmulAlgo_t& a, cublasLtMatmulAlgoConfigAttributes_t at) {
  V v{};
  size_t w = 0;
  cublasLtMatmulAlgoConfigGetAttribute(&a, at, &v, sizeof v, &w);
  return v;
}
static Cfg cfg_of(const cublasLtMatmulAlgo_t& a) {
  Cfg c;
  c.id = get_cfg<int32_t>(a, CUBLASLT_ALGO_CONFIG_ID);
  c.tile = get_cfg<uint32_t>(a, CUBLASLT_ALGO_CONFIG_TILE_ID);
  c.splitk = get_cfg<uint32_t>(a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM);
  c.red = get_cfg<uint32_t>(a, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME);
  c.swz = get_cfg<uint32_t>(a, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING);
  c.custom = get_cfg<uint32_t>(a, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION);
  c.stages = get_cfg<uint32_t>(a, CUBLASLT_ALGO_CONFIG_STAGES_ID);
  c.inner = get_cfg<uint16_t>(a, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID);
  c.cluster = get_cfg<uint16_t>(a, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID);
  return c;
}

struct Cand { Cfg cfg; cublasLtMatmulAlgo_t algo; size_t ws; std::string src; double us = 1e30; std::vector<double> t; };

int main(int argc, char** argv) {
  if (argc < 2) { fprintf(stderr, "usage: lt_enum shapes.csv [max_candidates]\n"); return 2; }
  const size_t max_c = argc > 2 ? size_t(atoi(argv[2])) : 96;
  std::vector<Shape> shapes;
  {
    std::ifstream f(argv[1]);
    std::string line;
    std::getline(f, line);
    while (std::getline(f, line)) {
      std::stringstream ss(line);
      std::string a, b, c, d;
      std::getline(ss, a, ','); std::getline(ss, b, ','); std::getline(ss, c, ','); std::getline(ss, d, ',');
      if (a.empty()) continue;
      shapes.push_back({atol(a.c_str()), atol(b.c_str()), atol(c.c_str()), d == "True"});
    }
  }
  cublasLtHandle_t h;
  cublasLtCreate(&h);
  const size_t kWs = size_t(64) << 20;
  void* ws;
  CK(cudaMalloc(&ws, kWs));
  cudaStream_t st;
  CK(cudaStreamCreate(&st));
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  printf("M,N,K,bias,n_cands,default_us,best_h8_us,best_h8,best_us,best,best_src,x_default,x_h8\n");
  for (const Shape& s : shapes) {
    void* bias = nullptr;
    CK(cudaMalloc(&bias, size_t(s.n) * 2));
    CK(cudaMemset(bias, 0, size_t(s.n) * 2));
    const LtLinear lin = lt_linear(s.m, s.n, s.k, s.bias ? bias : nullptr);
    cublasLtMatmulDesc_t op = lin.op;
    cublasLtMatrixLayout_t la = lin.a, lb = lin.b, ld = lin.d;
    auto heur = [&](uint32_t mode, int algo_id, int want, std::vector<cublasLtMatmulHeuristicResult_t>& out) {
      cublasLtMatmulPreference_t pref;
      cublasLtMatmulPreferenceCreate(&pref);
      size_t w = size_t(32) << 20;
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &w, sizeof w);
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_SEARCH_MODE, &mode, sizeof mode);
      out.assign(size_t(want), {});
      if (mode == CUBLASLT_SEARCH_LIMITED_BY_ALGO_ID)
        cublasLtMatmulAlgoInit(h, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, algo_id, &out[0].algo);
      int found = 0;
      cublasStatus_t r = cublasLtMatmulAlgoGetHeuristic(h, op, la, lb, ld, ld, pref, want, out.data(), &found);
      cublasLtMatmulPreferenceDestroy(pref);
      out.resize(r == CUBLAS_STATUS_SUCCESS ? size_t(found) : 0);
    };
    std::vector<Cand> cands;
    std::set<Cfg> seen;
    auto add = [&](const cublasLtMatmulAlgo_t& a, size_t wsb, const std::string& src) {
      Cfg c = cfg_of(a);
      if (wsb > kWs || !seen.insert(c).second) return false;
      cands.push_back({c, a, wsb, src});
      return true;
    };
    std::vector<cublasLtMatmulHeuristicResult_t> top;
    heur(CUBLASLT_SEARCH_BEST_FIT, 0, 8, top);
    for (size_t i = 0; i < top.size(); ++i) add(top[i].algo, top[i].workspaceSize, "h" + std::to_string(i));
    const size_t n_top = cands.size();
    // Split-K variants of the heuristic's answers.
    for (size_t i = 0; i < top.size(); ++i) {
      for (uint32_t sk : {1u, 2u, 3u, 4u, 6u, 8u, 12u, 16u}) {
        for (uint32_t red : {1u, 2u, 4u}) {  // INPLACE, COMPUTE_TYPE, OUTPUT_TYPE
          cublasLtMatmulAlgo_t a = top[i].algo;
          if (cublasLtMatmulAlgoConfigSetAttribute(&a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &sk, sizeof sk) != CUBLAS_STATUS_SUCCESS) continue;
          uint32_t r = sk == 1 ? 0u : red;
          cublasLtMatmulAlgoConfigSetAttribute(&a, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &r, sizeof r);
          cublasLtMatmulHeuristicResult_t res{};
          if (cublasLtMatmulAlgoCheck(h, op, la, lb, ld, ld, &a, &res) != CUBLAS_STATUS_SUCCESS) continue;
          add(a, res.workspaceSize, "h" + std::to_string(i) + "_sk");
        }
      }
    }
    // Every algorithm id, with the heuristic limited to it.
    int ids[256], nid = 0;
    cublasLtMatmulAlgoGetIds(h, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, CUDA_R_16BF, 256, ids, &nid);
    for (int i = 0; i < nid; ++i) {
      std::vector<cublasLtMatmulHeuristicResult_t> r;
      heur(CUBLASLT_SEARCH_LIMITED_BY_ALGO_ID, ids[i], 16, r);
      for (auto& x : r) add(x.algo, x.workspaceSize, "id" + std::to_string(ids[i]));
    }
    if (cands.size() > max_c) cands.resize(max_c);
    // Operands rotated through copies of > 200 MB together so W comes from DRAM, as the bench does.
    const size_t xb = size_t(s.m) * s.k * 2, wb = size_t(s.n) * s.k * 2, yb = size_t(s.m) * s.n * 2;
    const int copies = int(std::min<size_t>(16, std::max<size_t>(1, (size_t(200) << 20) / (xb + wb + yb) + 1)));
    std::vector<void*> X(copies), W(copies), Y(copies);
    for (int c = 0; c < copies; ++c) {
      CK(cudaMalloc(&X[c], xb)); CK(cudaMalloc(&W[c], wb)); CK(cudaMalloc(&Y[c], yb));
      CK(cudaMemset(X[c], 0x3c, xb)); CK(cudaMemset(W[c], 0x3c, wb));
    }
    float alpha = 1.f, beta = 0.f;
    int rot = 0;
    auto launch = [&](Cand& c) {
      rot = (rot + 1) % copies;
      return cublasLtMatmul(h, op, &alpha, W[rot], la, X[rot], lb, &beta, Y[rot], ld, Y[rot], ld, &c.algo, ws, kWs, st);
    };
    // Drop candidates that fail to launch; estimate time for the iteration count.
    std::vector<Cand> ok;
    for (auto& c : cands) {
      if (launch(c) != CUBLAS_STATUS_SUCCESS || cudaStreamSynchronize(st) != cudaSuccess) { cudaGetLastError(); continue; }
      ok.push_back(c);
    }
    cudaEventRecord(e0, st);
    for (int i = 0; i < 3; ++i) launch(ok[0]);
    cudaEventRecord(e1, st);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    const int iters = std::clamp(int(1.5 / std::max(ms / 3, 1e-4f)), 3, 30);
    for (int round = 0; round < 5; ++round) {
      for (auto& c : ok) {
        launch(c);
        cudaEventRecord(e0, st);
        for (int i = 0; i < iters; ++i) launch(c);
        cudaEventRecord(e1, st);
        cudaEventSynchronize(e1);
        cudaEventElapsedTime(&ms, e0, e1);
        c.t.push_back(1e3 * ms / iters);
      }
    }
    for (auto& c : ok) {
      std::sort(c.t.begin(), c.t.end());
      c.us = c.t[c.t.size() / 2];
    }
    const Cand* best = &ok[0];
    const Cand* best_h = &ok[0];
    for (size_t i = 0; i < ok.size(); ++i) {
      if (ok[i].us < best->us) best = &ok[i];
      if (ok[i].src[0] == 'h' && ok[i].src.find('_') == std::string::npos && ok[i].us < best_h->us) best_h = &ok[i];
    }
    printf("%ld,%ld,%ld,%s,%zu,%.3f,%.3f,%s,%.3f,%s,%s,%.4f,%.4f\n", s.m, s.n, s.k, s.bias ? "True" : "False", ok.size(),
           ok[0].us, best_h->us, best_h->cfg.name().c_str(), best->us, best->cfg.name().c_str(), best->src.c_str(),
           ok[0].us / best->us, best_h->us / best->us);
    fflush(stdout);
    fprintf(stderr, "%ldx%ldx%ld: %zu top, %zu candidates (%zu ran); ids %d\n", s.m, s.n, s.k, n_top, cands.size(), ok.size(), nid);
    for (int c = 0; c < copies; ++c) { cudaFree(X[c]); cudaFree(W[c]); cudaFree(Y[c]); }
    cudaFree(bias);
    cublasLtMatrixLayoutDestroy(la); cublasLtMatrixLayoutDestroy(lb); cublasLtMatrixLayoutDestroy(ld);
    cublasLtMatmulDescDestroy(op);
  }
  return 0;
}
