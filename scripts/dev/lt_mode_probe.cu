// Dev probe (session 32): cuBLASLt's default ran 56.1 us in some processes and 61.5 us in others at
// 16 x 28672 x 4096 (runs 282-284), and 173-185 against 187-204 us at the seed's 8192 x 6144 x 1280 (session 31),
// while tgemm's kernels read the same in every process. Is it the heuristic's answer that differs between processes,
// or the same algorithm running at two speeds (memory placement)?
// One process: pad the allocator by argv[1] MiB, ask the heuristic for each shape, print its first answer's
// configuration, then time it interleaved with a fixed configured algorithm over rotated
// operand sets larger than L2. Run it several times as separate processes and compare.
//   nvcc -O2 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o /tmp/lt_mode_probe scripts/dev/lt_mode_probe.cu -lcublasLt
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "lt_probe.h"

struct Shape {
  int64_t m, n, k;
  bool bias;
  uint32_t alt_tile, alt_custom;  // the configured algorithm timed beside the default (nvjet, stage id 35, cluster 2)
};

int main(int argc, char** argv) {
  const size_t pad_mib = argc > 1 ? size_t(std::atol(argv[1])) : 0;
  void* pad = nullptr;
  if (pad_mib) LT_CHECK(cudaMalloc(&pad, pad_mib << 20));
  const std::vector<Shape> shapes = {{16, 28672, 4096, false, 487, 5}, {8192, 6144, 1280, true, 29, 3}};
  cublasLtHandle_t h;
  LT_CHECK(cublasLtCreate(&h));
  const size_t kWs = size_t(32) << 20;
  void* ws;
  LT_CHECK(cudaMalloc(&ws, kWs));
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  for (const Shape& s : shapes) {
    // Operand sets rotated so that each launch reads W and X from DRAM (> 2 x the 60 MB L2 in all).
    const int sets = int(std::max<int64_t>(2, (256ll << 20) / ((s.n * s.k + s.m * s.k) * 2) + 1));
    std::vector<void*> x(sets), w(sets), y(sets);
    for (int i = 0; i < sets; ++i) {
      LT_CHECK(cudaMalloc(&x[i], s.m * s.k * 2));
      LT_CHECK(cudaMalloc(&w[i], s.n * s.k * 2));
      LT_CHECK(cudaMalloc(&y[i], s.m * s.n * 2));
      LT_CHECK(cudaMemset(x[i], 0x3c, s.m * s.k * 2));
      LT_CHECK(cudaMemset(w[i], 0x3b, s.n * s.k * 2));
    }
    void* bias;
    LT_CHECK(cudaMalloc(&bias, s.n * 2));
    LT_CHECK(cudaMemset(bias, 0x3c, s.n * 2));
    const LtLinear lin = lt_linear(s.m, s.n, s.k, s.bias ? bias : nullptr);
    cublasLtMatmulDesc_t op = lin.op;
    cublasLtMatrixLayout_t A = lin.a, B = lin.b, D = lin.d;
    cublasLtMatmulHeuristicResult_t hr[8];
    const int found = lt_heuristic(h, lin, kWs, 8, hr);
    cublasLtMatmulAlgo_t alt = hr[0].algo;
    cublasLtMatmulAlgoConfigSetAttribute(&alt, CUBLASLT_ALGO_CONFIG_TILE_ID, &s.alt_tile, sizeof s.alt_tile);
    cublasLtMatmulAlgoConfigSetAttribute(&alt, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &s.alt_custom, sizeof s.alt_custom);
    float alpha = 1, beta = 0;
    int rot = 0;
    auto time = [&](const cublasLtMatmulAlgo_t& a, int reps) -> float {
      cudaEventRecord(e0);
      for (int i = 0; i < reps; ++i, rot = (rot + 1) % sets)
        LT_CHECK(cublasLtMatmul(h, op, &alpha, w[rot], A, x[rot], B, &beta, y[rot], D, y[rot], D, &a, ws, kWs, 0));
      cudaEventRecord(e1);
      LT_CHECK(cudaEventSynchronize(e1));
      float ms = 0;
      cudaEventElapsedTime(&ms, e0, e1);
      return ms * 1000 / reps;
    };
    const int reps = s.m * s.n * s.k > (int64_t(1) << 36) ? 10 : 50;
    time(hr[0].algo, reps);
    time(alt, reps);
    std::vector<float> t0, t1;
    for (int r = 0; r < 7; ++r) {
      t0.push_back(time(hr[0].algo, reps));
      t1.push_back(time(alt, reps));
    }
    std::sort(t0.begin(), t0.end());
    std::sort(t1.begin(), t1.end());
    std::printf("pad %zu MiB  M=%lld N=%lld K=%lld bias=%d  default %s ws %zu: %.2f us (%.2f-%.2f)  %s: %.2f us (%.2f-%.2f)  "
                "W at %lu MiB\n",
                pad_mib, (long long)s.m, (long long)s.n, (long long)s.k, int(s.bias), lt_describe(hr[0].algo).c_str(),
                hr[0].workspaceSize, t0[3], t0[0], t0[6], lt_describe(alt).c_str(), t1[3], t1[0], t1[6],
                (unsigned long)(uintptr_t(w[0]) >> 20));
    for (int i = 0; i < sets; ++i) cudaFree(x[i]), cudaFree(w[i]), cudaFree(y[i]);
    cudaFree(bias);
  }
  return 0;
}
