// Throwaway development harness for the sm90 kernels (not part of the build).
//   test            every registered config (+ test-only ones) against an fp32 reference on odd shapes;
//                   poisoned Y, pad columns and guard bytes checked
//   seed            seed shapes vs cuBLASLt (correctness vs cuBLASLt output, interleaved timing)
//   models CSV      models.csv shapes with M >= 2048: every bf16 i64 config vs cuBLASLt
//   demo            the seed incident: i32 vs i64 at M = 360000 with 4.5 GB of guard before Y
//   few             the few-tile models shapes (and a few others): every bf16 i64 config (FEW_FORCED=1: split-K
//                   ones also with forced split counts "/sN"), vs cuBLASLt
//   clocks          sustained SM clock and power (NVML, sampled every 10 ms) while one kernel runs back to back
//                   for ~300 ms, for cuBLASLt and the main configurations at seed shapes
// Every run gets one shared workspace (like the dispatcher's per-stream one), filled with garbage at start so a
// split-K kernel that relied on zeroed counters would show.
// Build (see scripts/dev/build_sm90_harness.sh).
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "backends/sm90/sm90_launch.cuh"
#include "registry/registry.h"

using namespace tgemm;

#define CK(x)                                                                                     \
  do {                                                                                            \
    cudaError_t e_ = (x);                                                                         \
    if (e_ != cudaSuccess) {                                                                      \
      fprintf(stderr, "CUDA %s at %s:%d: %s\n", #x, __FILE__, __LINE__, cudaGetErrorString(e_)); \
      exit(2);                                                                                    \
    }                                                                                             \
  } while (0)
#define CKL(x)                                                                       \
  do {                                                                               \
    cublasStatus_t s_ = (x);                                                         \
    if (s_ != CUBLAS_STATUS_SUCCESS) {                                               \
      fprintf(stderr, "cuBLASLt %s at %s:%d: %d\n", #x, __FILE__, __LINE__, int(s_)); \
      exit(2);                                                                       \
    }                                                                                \
  } while (0)

// ---------------------------------------------------------------------------------------------------------------
// device helpers

__device__ __forceinline__ uint32_t hash32(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return uint32_t(x);
}

// Fills a [rows, ld] 16-bit matrix (cols valid) with uniform [-1, 1); padding columns get garbage (1e4) so a
// kernel that reads them shows up as a wrong result.
__global__ void fill16(uint16_t* p, int64_t rows, int64_t cols, int64_t ld, uint64_t seed, bool bf16) {
  int64_t total = rows * ld;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t c = i % ld;
    float v = c < cols ? (hash32(seed * 0x9E3779B97F4A7C15ULL + i) * (2.0f / 4294967296.0f) - 1.0f) : 1e4f;
    if (bf16) {
      __nv_bfloat16 b = __float2bfloat16(v);
      p[i] = *reinterpret_cast<uint16_t*>(&b);
    } else {
      __half h = __float2half(v);
      p[i] = *reinterpret_cast<uint16_t*>(&h);
    }
  }
}
__global__ void fill32(float* p, int64_t n, uint64_t seed) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    p[i] = hash32(seed * 0x9E3779B97F4A7C15ULL + i) * (2.0f / 4294967296.0f) - 1.0f;
}

__device__ __forceinline__ float ld16(const uint16_t* p, int64_t i, bool bf16) {
  uint16_t v = p[i];
  return bf16 ? __bfloat162float(*reinterpret_cast<__nv_bfloat16*>(&v)) : __half2float(*reinterpret_cast<__half*>(&v));
}

// fp32 reference, one output per thread (small problems only).
__global__ void ref_kernel(const uint16_t* x, const uint16_t* w, const void* bias, int bias_kind, float* out, int64_t M,
                           int64_t N, int64_t K, int64_t ldx, int64_t ldw, bool bf16) {
  int64_t n = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  int64_t m = blockIdx.y;
  if (n >= N) return;
  float acc = 0.f;
  for (int64_t k = 0; k < K; ++k) acc += ld16(x, m * ldx + k, bf16) * ld16(w, n * ldw + k, bf16);
  if (bias_kind == 1) acc += ld16(static_cast<const uint16_t*>(bias), n, bf16);
  if (bias_kind == 2) acc += static_cast<const float*>(bias)[n];
  out[m * N + n] = acc;
}

__device__ __forceinline__ float load_out(const void* y, int64_t i, int out) {
  if (out == 2) return static_cast<const float*>(y)[i];
  uint16_t v = static_cast<const uint16_t*>(y)[i];
  return out == 0 ? __bfloat162float(*reinterpret_cast<__nv_bfloat16*>(&v)) : __half2float(*reinterpret_cast<__half*>(&v));
}

struct CheckResult {
  unsigned int max_err_bits;
  unsigned long long fails;
  unsigned long long pad_changed;
};

// Compares Y against a reference (fp32 array [M,N] or another Y of the same layout), and checks that pad columns
// [N, ldy) still hold the poison byte.
__global__ void check_kernel(const void* y, const float* ref32, const void* ref_y, int64_t M, int64_t N, int64_t ldy,
                             int out, float tol, CheckResult* res) {
  const int64_t total = M * ldy;
  const int esz = out == 2 ? 4 : 2;
  float local_max = 0.f;
  unsigned long long fails = 0, pad = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t r = i / ldy, c = i % ldy;
    if (c < N) {
      float v = load_out(y, i, out);
      float rf = ref32 ? ref32[r * N + c] : load_out(ref_y, i, out);
      float err = fabsf(v - rf) / (1.f + fabsf(rf));
      if (!(err <= tol)) ++fails;
      if (err == err) local_max = fmaxf(local_max, err);
      else local_max = 1e30f;
    } else {
      const unsigned char* b = static_cast<const unsigned char*>(y) + i * esz;
      for (int j = 0; j < esz; ++j) pad += b[j] != 0xFF;
    }
  }
  atomicMax(&res->max_err_bits, __float_as_uint(local_max));
  if (fails) atomicAdd(&res->fails, fails);
  if (pad) atomicAdd(&res->pad_changed, pad);
}

__global__ void count_not(const unsigned char* p, int64_t n, unsigned char v, unsigned long long* cnt) {
  unsigned long long c = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    c += p[i] != v;
  if (c) atomicAdd(cnt, c);
}

// ---------------------------------------------------------------------------------------------------------------
// host helpers

static unsigned long long count_changed(const void* p, int64_t n, unsigned char v) {
  unsigned long long* d;
  CK(cudaMalloc(&d, 8));
  CK(cudaMemset(d, 0, 8));
  if (n > 0) count_not<<<1024, 256>>>(static_cast<const unsigned char*>(p), n, v, d);
  unsigned long long h;
  CK(cudaMemcpy(&h, d, 8, cudaMemcpyDeviceToHost));
  CK(cudaFree(d));
  return h;
}

struct Buf {
  void* p = nullptr;
  size_t bytes = 0;
  void alloc(size_t b) {
    if (p) CK(cudaFree(p));
    bytes = b;
    CK(cudaMalloc(&p, b));
  }
  ~Buf() {
    if (p) cudaFree(p);
  }
};

// Y with guard bands: [guard | rows * ldy elements | guard], all poisoned 0xFF before a run.
struct YBuf {
  Buf b;
  size_t guard = 0, ybytes = 0;
  void* y() const { return static_cast<char*>(b.p) + guard; }
  void alloc(int64_t rows, int64_t ldy, int esz, size_t g) {
    guard = g;
    ybytes = size_t(rows) * size_t(ldy) * esz;
    b.alloc(ybytes + 2 * guard);
  }
  void poison() { CK(cudaMemset(b.p, 0xFF, b.bytes)); }
  unsigned long long guard_changed() const {
    return count_changed(b.p, guard, 0xFF) + count_changed(static_cast<char*>(b.p) + guard + ybytes, guard, 0xFF);
  }
};

static CheckResult check(const YBuf& y, const float* ref32, const void* ref_y, const Problem& p, float tol) {
  CheckResult* d;
  CK(cudaMalloc(&d, sizeof(CheckResult)));
  CK(cudaMemset(d, 0, sizeof(CheckResult)));
  int out = p.out_dtype == DType::bf16 ? 0 : p.out_dtype == DType::fp16 ? 1 : 2;
  check_kernel<<<2048, 256>>>(y.y(), ref32, ref_y, p.m, p.n, p.ldy, out, tol, d);
  CheckResult h;
  CK(cudaMemcpy(&h, d, sizeof(h), cudaMemcpyDeviceToHost));
  CK(cudaFree(d));
  return h;
}

static float bits_f(unsigned int b) {
  float f;
  memcpy(&f, &b, 4);
  return f;
}

static float tol_for(DType out) { return out == DType::bf16 ? 1e-2f : out == DType::fp16 ? 2e-3f : 1e-4f; }

// cuBLASLt: Y[M,N] (row-major, ldy) = X[M,K] W[N,K]^T + bias, as column-major D[N,M] = W^T(op T) * X.
// The plan (descriptors + heuristic algo) is built once per problem so timing sees only cublasLtMatmul.
struct Lt {
  cublasLtHandle_t h = nullptr;
  void* ws = nullptr;
  size_t ws_bytes = 32u << 20;
  bool have = false;
  GemmArgs cur{};
  cublasLtMatmulDesc_t op{};
  cublasLtMatrixLayout_t la{}, lb{}, lc{};
  cublasLtMatmulHeuristicResult_t res{};
  Lt() {
    CKL(cublasLtCreate(&h));
    CK(cudaMalloc(&ws, ws_bytes));
  }
  static cudaDataType dt(DType t) { return t == DType::bf16 ? CUDA_R_16BF : t == DType::fp16 ? CUDA_R_16F : CUDA_R_32F; }
  void release() {
    if (!have) return;
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(lc);
    cublasLtMatmulDescDestroy(op);
    have = false;
  }
  bool plan(const GemmArgs& a) {
    release();
    const Problem& p = a.p;
    CKL(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    CKL(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
    CKL(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
    if (p.has_bias) {
      cublasLtEpilogue_t ep = CUBLASLT_EPILOGUE_BIAS;
      CKL(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_EPILOGUE, &ep, sizeof(ep)));
      CKL(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &a.bias, sizeof(a.bias)));
      cudaDataType bt = dt(p.bias_dtype);
      CKL(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof(bt)));
    }
    CKL(cublasLtMatrixLayoutCreate(&la, dt(p.in_dtype), p.k, p.n, p.ldw));
    CKL(cublasLtMatrixLayoutCreate(&lb, dt(p.in_dtype), p.k, p.m, p.ldx));
    CKL(cublasLtMatrixLayoutCreate(&lc, dt(p.out_dtype), p.n, p.m, p.ldy));
    have = true;
    cublasLtMatmulPreference_t pref;
    CKL(cublasLtMatmulPreferenceCreate(&pref));
    CKL(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof(ws_bytes)));
    int n = 0;
    bool ok = cublasLtMatmulAlgoGetHeuristic(h, op, la, lb, lc, lc, pref, 1, &res, &n) == CUBLAS_STATUS_SUCCESS && n > 0;
    cublasLtMatmulPreferenceDestroy(pref);
    cur = a;
    return ok;
  }
  bool run(const GemmArgs& a, cudaStream_t s) {
    if (!have || !(a.p == cur.p) || a.x != cur.x || a.w != cur.w || a.y != cur.y || a.bias != cur.bias)
      if (!plan(a)) return false;
    float alpha = 1.f, beta = 0.f;
    return cublasLtMatmul(h, op, &alpha, a.w, la, a.x, lb, &beta, a.y, lc, a.y, lc, &res.algo, ws, ws_bytes, s) ==
           CUBLAS_STATUS_SUCCESS;
  }
};

// A kernel that never finishes would eat the whole device call: give up loudly instead.
static cudaError_t sync_or_die(const char* what, double seconds = 20) {
  auto t0 = std::chrono::steady_clock::now();
  for (;;) {
    cudaError_t e = cudaStreamQuery(0);
    if (e != cudaErrorNotReady) return e;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > seconds) {
      printf("HANG: %s did not finish in %.0f s\n", what, seconds);
      fflush(stdout);
      _exit(3);
    }
    usleep(100);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// kernels under test

// TGEMM_SM90_SKIP=a,b,...: leave out every kernel whose name contains one of the substrings (so that a kernel
// that failed or hung in `test` cannot take the timing modes of the same device call down with it).
static bool skipped(const std::string& name) {
  const char* e = getenv("TGEMM_SM90_SKIP");
  if (!e || !*e) return false;
  std::stringstream ss(e);
  std::string tok;
  while (std::getline(ss, tok, ','))
    if (!tok.empty() && name.find(tok) != std::string::npos) return true;
  return false;
}

// The workspace every kernel run gets (split-K partials and counters).
static void* g_ws = nullptr;
static size_t g_ws_bytes = size_t(1) << 30;
static void init_ws() {
  CK(cudaMalloc(&g_ws, g_ws_bytes));
  CK(cudaMemset(g_ws, 0xAB, g_ws_bytes));
}

// A split-K configuration run with a fixed split count (name + "/sN"), so that every split path is exercised and
// timed whatever choose_splits would pick.
class ForcedSplit final : public Kernel {
 public:
  ForcedSplit(const sm90::Sm90KernelBase* k, uint32_t s) : k_(k), s_(s), name_(k->name() + "/s" + std::to_string(s)) {}
  const std::string& name() const override { return name_; }
  Backend backend() const override { return Backend::sm90; }
  const Limits& limits() const override { return k_->limits(); }
  Verdict can_implement(const Problem& p) const override { return k_->can_implement(p); }
  Status run(const GemmArgs& a, void* ws, size_t bytes, cudaStream_t st) const override {
    return k_->run_splits(a, ws, bytes, {s_}, st);
  }
  const sm90::Sm90KernelBase* base() const { return k_; }

 private:
  const sm90::Sm90KernelBase* k_;
  uint32_t s_;
  std::string name_;
};

struct Reg {
  BackendKernels bk;
  std::vector<std::unique_ptr<Kernel>> extra;  // test-only configurations
  std::vector<std::unique_ptr<Kernel>> timed;  // unregistered configurations that the timing modes also run
  std::vector<const Kernel*> all;
  Reg() {
    add_sm90_kernels(bk);
    // Test-only: the unclustered twin of the workhorse (reference for cluster effects) and a direct-epilogue
    // configuration, which keeps the 16-bit direct store path covered.
    using sm90::EpiMode;
    sm90::add<sm90::Traits<DType::bf16, 128, 256, 3, 1, 1, 64, EpiMode::staged>>(extra);
    sm90::add<sm90::Traits<DType::bf16, 128, 256, 4, 2, 1, 64, EpiMode::direct>>(extra);
    // Measured in run 7 and not registered (kept so the stagger path and the clustered 128x160 stay covered; `few`,
    // `seed` and `clocks` time them too): staggered cooperative warpgroups, lag 2 (1-2% slower than lag 0), and the
    // c2x1 twin of the registered 128x160 (1-4% behind it on the N = 1280 shapes).
    sm90::add<sm90::Traits<DType::bf16, 128, 256, 3, 2, 1, 64, EpiMode::staged, false, false, 2>>(extra);
    sm90::add<sm90::Traits<DType::bf16, 128, 160, 5, 2, 1, 64, EpiMode::staged, false, false, 2>>(extra);
    sm90::add<sm90::Traits<DType::bf16, 128, 160, 5, 2, 1, 64, EpiMode::staged>>(extra);
    for (auto& k : timed)
      if (!skipped(k->name())) all.push_back(k.get());
    // Measured in run 4 and not registered: ping-pong with the direct epilogue (64x256 s5: 0.74-0.84x cuBLASLt,
    // 128x128 s7: 0.88-0.89x at the seed shapes), so the staged path stays even where the epilogue is hidden.
    for (auto& k : extra)
      if (!skipped(k->name())) all.push_back(k.get());
    for (auto& k : bk.kernels)
      if (!skipped(k->name())) all.push_back(k.get());
    for (auto& k : bk.kernels) {
      auto* b = static_cast<const sm90::Sm90KernelBase*>(k.get());
      if (!b->config().splitk) continue;
      for (uint32_t s : {2u, 3u, 4u, 6u}) forced.push_back(std::make_unique<ForcedSplit>(b, s));
    }
    for (auto& k : forced)
      if (!skipped(k->name())) all_forced.push_back(k.get());
  }
  std::vector<std::unique_ptr<ForcedSplit>> forced;
  std::vector<const Kernel*> all_forced;
};

static const sm90::Config& cfg_of(const Kernel* k) {
  if (auto* f = dynamic_cast<const ForcedSplit*>(k)) return f->base()->config();
  return static_cast<const sm90::Sm90KernelBase*>(k)->config();
}

struct Operands {
  Buf x, w, bias;
  YBuf y;
  GemmArgs args;
  void make(const Problem& p, uint64_t seed, size_t guard) {
    x.alloc(size_t(p.m) * p.ldx * 2);
    w.alloc(size_t(p.n) * p.ldw * 2);
    bool bf = p.in_dtype == DType::bf16;
    fill16<<<4096, 256>>>(static_cast<uint16_t*>(x.p), p.m, p.k, p.ldx, seed, bf);
    fill16<<<4096, 256>>>(static_cast<uint16_t*>(w.p), p.n, p.k, p.ldw, seed + 1, bf);
    if (p.has_bias) {
      bias.alloc(size_t(p.n) * dtype_size(p.bias_dtype));
      if (p.bias_dtype == DType::fp32) fill32<<<256, 256>>>(static_cast<float*>(bias.p), p.n, seed + 2);
      else fill16<<<256, 256>>>(static_cast<uint16_t*>(bias.p), 1, p.n, p.n, seed + 2, bf);
    }
    y.alloc(p.m, p.ldy, int(dtype_size(p.out_dtype)), guard);
    args.p = p;
    args.x = x.p;
    args.w = w.p;
    args.bias = p.has_bias ? bias.p : nullptr;
    args.y = y.y();
    CK(cudaDeviceSynchronize());
  }
};

static Problem make_problem(int64_t m, int64_t n, int64_t k, DType in, DType out, int bias /*0 none 1 same 2 fp32*/,
                            int64_t ldx = 0, int64_t ldy = 0, int64_t ldw = 0) {
  Problem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.in_dtype = in;
  p.out_dtype = out;
  p.has_bias = bias != 0;
  p.bias_dtype = bias == 2 ? DType::fp32 : in;
  auto up8 = [](int64_t v) { return (v + 7) / 8 * 8; };
  p.ldx = ldx ? ldx : up8(k);
  p.ldw = ldw ? ldw : up8(k);
  p.ldy = ldy ? ldy : up8(n);
  return p;
}

static const char* dn(DType t) { return t == DType::bf16 ? "bf16" : t == DType::fp16 ? "fp16" : "fp32"; }

// ---------------------------------------------------------------------------------------------------------------

static int mode_test(const Reg& reg) {
  struct Case {
    int64_t m, n, k;
    DType out;
    int bias;
    int64_t ldx, ldy, ldw;
  };
  const std::vector<Case> cases = {
      {1000, 1000, 1000, DType::bf16, 1, 0, 0, 0},
      {257, 383, 1001, DType::bf16, 1, 1008, 400, 1016},   // K tail, odd N, padded lds
      {128, 256, 64, DType::bf16, 0, 0, 0, 0},             // one tile
      {65, 7, 24, DType::fp16, 2, 0, 0, 0},                // tiny, N < 8
      {4097, 6144, 1280, DType::fp16, 2, 0, 0, 0},         // seed-like, M tail, fp32 bias
      {3000, 1000, 520, DType::fp32, 1, 0, 1024, 0},       // fp32 out (direct path)
      {777, 2049, 4096, DType::bf16, 0, 4104, 2056, 4112}, // long K, N tail inside a chunk
      {2048, 6144, 1280, DType::bf16, 1, 0, 0, 0},
      {300, 200, 8, DType::bf16, 2, 0, 0, 0},              // K = 8 (one partial k-step)
      // many tiles per CTA with num_k = 22, not a multiple of any stage count: the ping-pong ring positions
      {6000, 5000, 1352, DType::bf16, 1, 0, 0, 0},
      {4000, 2000, 1352, DType::fp32, 2, 0, 2008, 0},      // the same on the direct (fp32) path, padded ldy
      // split-K: few tiles and long K (the first: automatic splits > 1), M and N tails, K tail
      {300, 1000, 4104, DType::bf16, 1, 0, 0, 0},
      {2048, 1280, 8192, DType::bf16, 2, 0, 0, 0},         // (fp32 out at K = 8192: the reference's own error > 1e-4)
      {200, 700, 1352, DType::fp32, 1, 0, 712, 0},         // split-K on the direct (fp32) path, padded ldy
      {130, 200, 2000, DType::fp16, 0, 0, 208, 0},
      // staggered cooperative (lag 2): many tiles per CTA at the smallest num_k with the stagger on for 5 stages
      // (num_k = 4) and for 3 stages (num_k = 2), and num_k = 3 (K tail)
      {5000, 3000, 256, DType::bf16, 1, 0, 0, 0},
      {5000, 3000, 128, DType::bf16, 2, 0, 0, 0},
      {5000, 3000, 136, DType::bf16, 0, 0, 0, 0},
  };
  int bad = 0, runs = 0, splits_used = 0;
  Buf ref;
  std::vector<const Kernel*> ks = reg.all;
  ks.insert(ks.end(), reg.all_forced.begin(), reg.all_forced.end());
  printf("%-42s %-28s %10s %8s %6s %6s %s\n", "kernel", "case", "max_err", "fails", "pad", "guard", "verdict");
  for (DType in : {DType::bf16, DType::fp16}) {
    for (const Case& c : cases) {
      Problem p = make_problem(c.m, c.n, c.k, in, c.out, c.bias, c.ldx, c.ldy, c.ldw);
      Operands op;
      op.make(p, 1234 + c.m, 1 << 20);
      ref.alloc(size_t(p.m) * p.n * 4);
      ref_kernel<<<dim3(unsigned((p.n + 127) / 128), unsigned(p.m)), 128>>>(
          static_cast<uint16_t*>(op.x.p), static_cast<uint16_t*>(op.w.p), op.args.bias, c.bias, static_cast<float*>(ref.p),
          p.m, p.n, p.k, p.ldx, p.ldw, in == DType::bf16);
      CK(cudaDeviceSynchronize());
      for (const Kernel* k : reg.all)
        if (cfg_of(k).splitk && static_cast<const sm90::Sm90KernelBase*>(k)->split_plan(p).splits > 1) ++splits_used;
      for (const Kernel* k : ks) {
        if (!k->can_implement(p).ok()) continue;
        op.y.poison();
        Status st = k->run(op.args, g_ws, g_ws_bytes, 0);
        cudaError_t e = sync_or_die(k->name().c_str());
        char cs[64];
        snprintf(cs, sizeof cs, "%ldx%ldx%ld %s b%d", long(p.m), long(p.n), long(p.k), dn(p.out_dtype), c.bias);
        ++runs;
        if (!st.ok() || e != cudaSuccess) {
          printf("%-42s %-28s run failed: %s / %s\n", k->name().c_str(), cs, st.to_string().c_str(), cudaGetErrorString(e));
          ++bad;
          if (e != cudaSuccess) return 1;  // context is gone
          continue;
        }
        CheckResult r = check(op.y, static_cast<float*>(ref.p), nullptr, p, tol_for(p.out_dtype));
        unsigned long long g = op.y.guard_changed();
        bool ok = r.fails == 0 && r.pad_changed == 0 && g == 0;
        if (cfg_of(k).splitk) {  // same bits on a rerun (fixed summation order), workspace left dirty in between
          YBuf first;
          first.alloc(p.m, p.ldy, int(dtype_size(p.out_dtype)), 0);
          CK(cudaMemcpy(first.y(), op.y.y(), first.ybytes, cudaMemcpyDeviceToDevice));
          op.y.poison();
          (void)k->run(op.args, g_ws, g_ws_bytes, 0);
          sync_or_die(k->name().c_str());
          CheckResult r2 = check(op.y, nullptr, first.y(), p, 0.f);
          if (r2.fails || r2.pad_changed) {
            printf("%-42s %-28s rerun not bit-identical (%llu elements, %llu padding bytes)\n", k->name().c_str(), cs,
                   r2.fails, r2.pad_changed);
            ok = false;
          }
        }
        bad += !ok;
        printf("%-42s %-28s %10.2e %8llu %6llu %6llu %s\n", k->name().c_str(), cs, bits_f(r.max_err_bits), r.fails,
               r.pad_changed, g, ok ? "ok" : "FAIL");
      }
    }
  }
  printf("test: %d runs, %d failed (registered split-K kernel x case runs with auto splits > 1: %d)\n", runs, bad, splits_used);
  return bad ? 1 : 0;
}

// Interleaved timing: per pair, A then B, each `reps` launches between events; returns per-pair times (ms/launch).
template <class FA, class FB>
static void time_pairs(FA fa, FB fb, int pairs, int reps, std::vector<double>& ta, std::vector<double>& tb) {
  cudaEvent_t e0, e1, e2;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  CK(cudaEventCreate(&e2));
  for (int i = 0; i < 2; ++i) {
    fa();
    fb();
  }
  CK(cudaDeviceSynchronize());
  for (int i = 0; i < pairs; ++i) {
    CK(cudaEventRecord(e0));
    for (int r = 0; r < reps; ++r) fa();
    CK(cudaEventRecord(e1));
    for (int r = 0; r < reps; ++r) fb();
    CK(cudaEventRecord(e2));
    CK(cudaEventSynchronize(e2));
    float a, b;
    CK(cudaEventElapsedTime(&a, e0, e1));
    CK(cudaEventElapsedTime(&b, e1, e2));
    ta.push_back(a / reps);
    tb.push_back(b / reps);
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaEventDestroy(e2);
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

struct BenchRow {
  std::string kernel;
  double tf = 0, tf_lt = 0, ratio = 0;
  float err = 0;
  unsigned long long fails = 0, guard = 0;
};

// Runs cuBLASLt once as the reference output, then each kernel: check vs cuBLASLt, then interleaved timing.
static std::vector<BenchRow> bench_problem(const Problem& p, const std::vector<const Kernel*>& ks, Lt& lt, int pairs,
                                           bool verbose) {
  std::vector<BenchRow> rows;
  Operands op;
  op.make(p, 99, 1 << 20);
  YBuf lty;
  lty.alloc(p.m, p.ldy, int(dtype_size(p.out_dtype)), 0);
  GemmArgs la = op.args;
  la.y = lty.y();
  if (!lt.run(la, 0)) {
    printf("cuBLASLt failed on %ldx%ldx%ld\n", long(p.m), long(p.n), long(p.k));
    return rows;
  }
  CK(cudaDeviceSynchronize());
  const double flop = p.flops();
  for (const Kernel* k : ks) {
    if (!k->can_implement(p).ok()) continue;
    BenchRow r;
    r.kernel = k->name();
    op.y.poison();
    Status st = k->run(op.args, g_ws, g_ws_bytes, 0);
    cudaError_t e = sync_or_die(k->name().c_str());
    if (!st.ok() || e != cudaSuccess) {
      printf("%s: run failed: %s / %s\n", k->name().c_str(), st.to_string().c_str(), cudaGetErrorString(e));
      if (e != cudaSuccess) exit(1);
      continue;
    }
    CheckResult c = check(op.y, nullptr, lty.y(), p, tol_for(p.out_dtype));
    r.err = bits_f(c.max_err_bits);
    r.fails = c.fails + c.pad_changed;
    r.guard = op.y.guard_changed();
    // ~2 ms per sample
    double est_ms = flop / 700e12 * 1e3;
    int reps = std::max(1, int(2.0 / est_ms));
    std::vector<double> ta, tb;
    time_pairs([&] { (void)k->run(op.args, g_ws, g_ws_bytes, 0); }, [&] { lt.run(la, 0); }, pairs, reps, ta, tb);
    std::vector<double> ratio;
    for (size_t i = 0; i < ta.size(); ++i) ratio.push_back(tb[i] / ta[i]);
    r.tf = flop / (median(ta) * 1e-3) / 1e12;
    r.tf_lt = flop / (median(tb) * 1e-3) / 1e12;
    r.ratio = median(ratio);
    if (verbose)
      printf("  %-40s %7.1f TF/s  lt %7.1f  x%.3f  err %.1e fails %llu guard %llu\n", r.kernel.c_str(), r.tf, r.tf_lt,
             r.ratio, r.err, r.fails, r.guard);
    fflush(stdout);
    rows.push_back(r);
  }
  return rows;
}

static void ceiling(Lt& lt) {
  Problem p = make_problem(8192, 8192, 8192, DType::bf16, DType::bf16, 0);
  Operands op;
  op.make(p, 7, 0);
  std::vector<double> ta, tb;
  time_pairs([&] { lt.run(op.args, 0); }, [&] {}, 10, 3, ta, tb);
  printf("ceiling: cuBLASLt 8192^3 bf16 random data: %.1f TFLOP/s\n", p.flops() / (median(ta) * 1e-3) / 1e12);
}

// The configurations the timing modes run (the test-only 128x256 c1x1 and direct-epilogue ones and the split-K one
// were timed in runs 2-6).
static bool timed_cfg(const sm90::Config& c) {
  return c.in == DType::bf16 && c.index_bits == 64 && !c.splitk && c.epi == sm90::EpiMode::staged &&
         !(c.bn == 256 && !c.pingpong && c.cluster_m == 1);
}

static int mode_seed(const Reg& reg, Lt& lt) {
  ceiling(lt);
  {
    using T = sm90::Traits<DType::bf16, 128, 256, 3, 2, 1, 64, sm90::EpiMode::staged>;
    cudaLaunchConfig_t cfg{};
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim = {2, 1, 1};
    cfg.gridDim = dim3(128);
    cfg.blockDim = dim3(T::kThreads);
    cfg.dynamicSmemBytes = T::kSmemBytes;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    int n = 0;
    CK(cudaFuncSetAttribute(sm90::gemm_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, T::kSmemBytes));
    CK(cudaOccupancyMaxActiveClusters(&n, sm90::gemm_kernel<T>, &cfg));
    printf("max active 2-CTA clusters: %d (%d SMs of %d)\n", n, 2 * n, 132);
  }
  std::vector<const Kernel*> bf;
  for (const Kernel* k : reg.all)
    if (cfg_of(k).in == DType::bf16) bf.push_back(k);
  for (int64_t m : {8192L, 65536L, 340000L, 360000L, 768000L}) {
    Problem p = make_problem(m, 6144, 1280, DType::bf16, DType::bf16, 1);
    printf("seed M=%ld N=6144 K=1280 bf16 bias:\n", long(m));
    std::vector<const Kernel*> ks;
    for (const Kernel* k : bf)
      if (timed_cfg(cfg_of(k)) && (m <= 65536 || cfg_of(k).bn >= 192 || cfg_of(k).pingpong)) ks.push_back(k);
    bench_problem(p, ks, lt, m >= 340000 ? 8 : 14, true);
  }
  for (int64_t m : {8192L, 65536L}) {
    Problem p = make_problem(m, 6144, 1280, DType::fp16, DType::fp16, 1);
    printf("fp16 M=%ld N=6144 K=1280 fp16 bias:\n", long(m));
    std::vector<const Kernel*> ks;
    for (const Kernel* k : reg.all)
      if (cfg_of(k).in == DType::fp16) ks.push_back(k);
    bench_problem(p, ks, lt, 8, true);
  }
  return 0;
}

static int mode_models(const Reg& reg, Lt& lt, const char* csv, const char* rows_out) {
  FILE* ro = rows_out ? fopen(rows_out, "w") : nullptr;
  if (ro) fprintf(ro, "M,N,K,bias,kernel,tflops,tflops_lt,ratio,fails\n");
  std::ifstream f(csv);
  std::string line;
  std::getline(f, line);
  std::vector<const Kernel*> ks;
  for (const auto& k : reg.bk.kernels)
    if (cfg_of(k.get()).in == DType::bf16 && cfg_of(k.get()).index_bits == 64 && !cfg_of(k.get()).splitk &&
        !skipped(k->name()))
      ks.push_back(k.get());
  for (const auto& k : reg.timed)
    if (!skipped(k->name())) ks.push_back(k.get());
  std::vector<double> best_ratios, def_ratios;
  std::map<std::string, std::vector<double>> per_cfg;
  printf("%-8s %-6s %-6s %-4s | %-38s %7s %7s %6s | %-38s %6s | fails\n", "M", "N", "K", "bias", "best", "TF/s", "lt", "x",
         "default", "x");
  while (std::getline(f, line)) {
    std::stringstream ss(line);
    std::string tok;
    std::vector<std::string> t;
    while (std::getline(ss, tok, ',')) t.push_back(tok);
    if (t.size() < 4) continue;
    int64_t m = std::stoll(t[0]), n = std::stoll(t[1]), k = std::stoll(t[2]);
    if (m < 2048) continue;
    bool bias = t[3] == "True";
    Problem p = make_problem(m, n, k, DType::bf16, DType::bf16, bias ? 1 : 0);
    auto rows = bench_problem(p, ks, lt, 5, false);
    if (rows.empty()) continue;
    const BenchRow* best = &rows[0];
    unsigned long long fails = 0;
    for (auto& r : rows) {
      if (r.ratio > best->ratio) best = &r;
      per_cfg[r.kernel].push_back(r.ratio);
      fails += r.fails + r.guard;
      if (ro)
        fprintf(ro, "%ld,%ld,%ld,%d,%s,%.1f,%.1f,%.4f,%llu\n", long(m), long(n), long(k), int(bias), r.kernel.c_str(), r.tf,
                r.tf_lt, r.ratio, r.fails + r.guard);
    }
    std::vector<const Kernel*> d = reg.bk.defaults(p);
    std::string dname = d.empty() ? "-" : d[0]->name();
    // the default's i64 twin is what was timed
    double dr = 0;
    for (auto& r : rows)
      if (!d.empty()) {
        sm90::Config c = cfg_of(d[0]);
        c.index_bits = 64;
        if (r.kernel == sm90::config_name(c)) dr = r.ratio;
      }
    best_ratios.push_back(best->ratio);
    def_ratios.push_back(dr);
    printf("%-8ld %-6ld %-6ld %-4s | %-38s %7.1f %7.1f %6.3f | %-38s %6.3f | %llu\n", long(m), long(n), long(k),
           bias ? "y" : "n", best->kernel.c_str(), best->tf, best->tf_lt, best->ratio, dname.c_str(), dr, fails);
    fflush(stdout);
  }
  if (ro) fclose(ro);
  if (!best_ratios.empty()) {
    printf("models M>=2048: %zu shapes; best config x cuBLASLt: median %.3f min %.3f; heuristic default: median %.3f min %.3f\n",
           best_ratios.size(), median(best_ratios), *std::min_element(best_ratios.begin(), best_ratios.end()),
           median(def_ratios), *std::min_element(def_ratios.begin(), def_ratios.end()));
    for (auto& [name, v] : per_cfg)
      printf("  %-40s median x%.3f min x%.3f\n", name.c_str(), median(v), *std::min_element(v.begin(), v.end()));
  }
  return 0;
}

// i64 vs i32 of the same configuration, interleaved (A B A B ...), median of per-pair time ratios.
static int mode_idx(const Reg& reg) {
  for (int64_t m : {8192L, 65536L, 340000L}) {
    Problem p = make_problem(m, 6144, 1280, DType::bf16, DType::bf16, 1);
    Operands op;
    op.make(p, 11, 0);
    for (const auto& k64 : reg.bk.kernels) {
      const sm90::Config& c = cfg_of(k64.get());
      if (c.in != DType::bf16 || c.index_bits != 64 || skipped(k64->name())) continue;
      sm90::Config c32 = c;
      c32.index_bits = 32;
      const Kernel* k32 = nullptr;
      for (const auto& o : reg.bk.kernels)
        if (o->name() == sm90::config_name(c32)) k32 = o.get();
      if (!k32 || !k32->can_implement(p).ok()) continue;
      const double est_ms = p.flops() / 650e12 * 1e3;
      const int reps = std::max(1, int(2.0 / est_ms));
      // Half the pairs i64 first, half i32 first: removes the order confound of run 3.
      std::vector<double> ta, tb, ua, ub;
      const int pairs = m >= 340000 ? 4 : 6;
      time_pairs([&] { (void)k64->run(op.args, g_ws, g_ws_bytes, 0); }, [&] { (void)k32->run(op.args, g_ws, g_ws_bytes, 0); },
                 pairs, reps, ta, tb);
      time_pairs([&] { (void)k32->run(op.args, g_ws, g_ws_bytes, 0); }, [&] { (void)k64->run(op.args, g_ws, g_ws_bytes, 0); },
                 pairs, reps, ub, ua);
      ta.insert(ta.end(), ua.begin(), ua.end());
      tb.insert(tb.end(), ub.begin(), ub.end());
      std::vector<double> r;
      for (size_t i = 0; i < ta.size(); ++i) r.push_back(ta[i] / tb[i]);
      printf("idx M=%-7ld %-38s i64/i32 time ratio: median %.4f (i64 %.1f TF/s, i32 %.1f TF/s)\n", long(m),
             k64->name().c_str(), median(r), p.flops() / (median(ta) * 1e-3) / 1e12,
             p.flops() / (median(tb) * 1e-3) / 1e12);
      fflush(stdout);
    }
  }
  return 0;
}

// The seed incident, live: M = 360000 puts (M-1)*ldy + N-1 past 2^31-1. The i32 kernel is run anyway (the
// dispatcher never would) inside an allocation with 4.5 GB of guard before Y; the i64 kernel beside it.
static int mode_demo(const Reg& reg) {
  Problem p = make_problem(360000, 6144, 1280, DType::bf16, DType::bf16, 1);
  // The cooperative workhorse and the heuristic's first choice at M = 8192, each as i64 then i32.
  std::vector<const Kernel*> ks;
  for (const Kernel* k : reg.all) {
    const sm90::Config& c = cfg_of(k);
    if (c.in == DType::bf16 && c.bm == 128 && c.bn == 256 && !c.pingpong && c.cluster_m == 2 &&
        c.epi == sm90::EpiMode::staged && c.index_bits == 64)
      ks.push_back(k);
  }
  {
    Problem p8 = make_problem(8192, 6144, 1280, DType::bf16, DType::bf16, 1);
    std::vector<const Kernel*> d = reg.bk.defaults(p8);
    if (!d.empty()) {
      sm90::Config c = cfg_of(d[0]);
      c.index_bits = 64;
      for (const Kernel* k : reg.all)
        if (k->name() == sm90::config_name(c) && (ks.empty() || ks[0] != k)) ks.push_back(k);
    }
  }
  std::vector<const Kernel*> order;
  for (const Kernel* k64 : ks) {
    sm90::Config c = cfg_of(k64);
    c.index_bits = 32;
    order.push_back(k64);
    for (const Kernel* k : reg.all)
      if (k->name() == sm90::config_name(c)) {
        Verdict v = k->can_implement(p);
        printf("demo: %s can_implement(M=360000): %s\n", k->name().c_str(), v.ok() ? "ok" : v.reason.c_str());
        order.push_back(k);
      }
  }
  Operands op;
  op.make(p, 5, size_t(4608) << 20);
  for (const Kernel* k : order) {
    op.y.poison();
    Status st = k->run(op.args, g_ws, g_ws_bytes, 0);  // for k32: forced past its Limits, on purpose
    cudaError_t e = sync_or_die(k->name().c_str());
    unsigned long long before = count_changed(op.y.b.p, op.y.guard, 0xFF);
    unsigned long long written = count_changed(op.y.y(), op.y.ybytes, 0xFF);  // bytes != poison, i.e. written
    printf("demo: %-40s status %s, cuda %s, guard bytes before Y changed: %llu, Y bytes written: %llu of %zu\n",
           k->name().c_str(), st.to_string().c_str(), cudaGetErrorString(e), before, written, op.y.ybytes);
    if (e != cudaSuccess) return 1;
  }
  return 0;
}

// Few-tile shapes (M >= 2048, below 0.9x in run 5) and neighbours: every bf16 i64 config and the forced splits.
static int mode_few(const Reg& reg, Lt& lt) {
  std::vector<const Kernel*> ks;
  for (const Kernel* k : reg.all)
    if (timed_cfg(cfg_of(k))) ks.push_back(k);
  if (getenv("FEW_FORCED"))
    for (const Kernel* k : reg.all_forced)
      if (cfg_of(k).index_bits == 64) ks.push_back(k);
  struct S {
    int64_t m, n, k;
    int bias;
  };
  const std::vector<S> shapes = {{2048, 1280, 8192, 0}, {4096, 1280, 1280, 1}, {4096, 1280, 5120, 1},
                                 {4096, 1280, 8192, 0}, {4096, 1280, 6144, 1}, {4096, 1024, 1024, 1},
                                 {2048, 4608, 3584, 1}, {4096, 1024, 4096, 1}, {2048, 3584, 3584, 0},
                                 {2048, 7168, 8192, 0}, {8192, 1280, 5120, 1}, {8192, 6144, 1280, 1}};
  for (const S& sh : shapes) {
    Problem p = make_problem(sh.m, sh.n, sh.k, DType::bf16, DType::bf16, sh.bias);
    std::vector<const Kernel*> d = reg.bk.defaults(p);
    std::string splits;
    for (const Kernel* k : reg.all)
      if (cfg_of(k).splitk && cfg_of(k).index_bits == 64)
        splits += " " + k->name() + "=" + std::to_string(static_cast<const sm90::Sm90KernelBase*>(k)->split_plan(p).splits);
    printf("few %ldx%ldx%ld bias %d: default %s; auto splits:%s\n", long(sh.m), long(sh.n), long(sh.k), sh.bias,
           d.empty() ? "-" : d[0]->name().c_str(), splits.c_str());
    bench_problem(p, ks, lt, 7, true);
  }
  return 0;
}

// NVML through dlopen (the harness links no NVML): SM clock (MHz), power (mW), clock event reasons.
struct Nvml {
  void* lib = nullptr;
  void* dev = nullptr;
  int (*clock)(void*, int, unsigned*) = nullptr;
  int (*power)(void*, unsigned*) = nullptr;
  int (*reasons)(void*, unsigned long long*) = nullptr;
  bool ok = false;
  Nvml() {
    lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
    if (!lib) return;
    auto init = reinterpret_cast<int (*)()>(dlsym(lib, "nvmlInit_v2"));
    auto by_bus = reinterpret_cast<int (*)(const char*, void**)>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    clock = reinterpret_cast<int (*)(void*, int, unsigned*)>(dlsym(lib, "nvmlDeviceGetClockInfo"));
    power = reinterpret_cast<int (*)(void*, unsigned*)>(dlsym(lib, "nvmlDeviceGetPowerUsage"));
    reasons = reinterpret_cast<int (*)(void*, unsigned long long*)>(dlsym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons"));
    if (!init || !by_bus || !clock || !power || init() != 0) return;
    char bus[64];
    int d = 0;
    CK(cudaGetDevice(&d));
    CK(cudaDeviceGetPCIBusId(bus, sizeof(bus), d));
    ok = by_bus(bus, &dev) == 0;
  }
};

// One kernel back to back for ~`ms` milliseconds (after a warm-up of the same length, so the clock has settled):
// time per launch from events, and NVML samples every 10 ms while the queue drains.
static void clocks_one(const char* name, const std::function<void()>& f, double est_ms, double ms, Nvml& nv) {
  const int reps = std::max(20, int(ms / est_ms));
  for (int i = 0; i < reps; ++i) f();
  CK(cudaDeviceSynchronize());
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  CK(cudaEventRecord(e0));
  for (int i = 0; i < reps; ++i) f();
  CK(cudaEventRecord(e1));
  std::vector<double> mhz, watt;
  unsigned long long rs = 0;
  while (cudaEventQuery(e1) == cudaErrorNotReady) {
    unsigned c = 0, p = 0;
    unsigned long long r = 0;
    if (nv.ok && nv.clock(nv.dev, 1 /*NVML_CLOCK_SM*/, &c) == 0) mhz.push_back(c);
    if (nv.ok && nv.power(nv.dev, &p) == 0) watt.push_back(p / 1000.0);
    if (nv.ok && nv.reasons && nv.reasons(nv.dev, &r) == 0) rs |= r;
    usleep(10000);
  }
  CK(cudaEventSynchronize(e1));
  float t = 0;
  CK(cudaEventElapsedTime(&t, e0, e1));
  std::vector<double> m2 = mhz;
  std::sort(m2.begin(), m2.end());
  printf("  %-44s %8.2f us/launch  sm clock median %5.0f MHz (min %4.0f max %4.0f, %zu samples)  power median %4.0f W  reasons 0x%llx\n",
         name, t * 1e3 / reps, median(mhz), m2.empty() ? 0 : m2.front(), m2.empty() ? 0 : m2.back(), mhz.size(),
         median(watt), rs);
  fflush(stdout);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
}

static int mode_clocks(const Reg& reg, Lt& lt) {
  Nvml nv;
  printf("nvml: %s\n", nv.ok ? "ok" : "unavailable");
  struct S {
    int64_t m, n, k;
    int bias;
  };
  for (const S& sh : {S{65536, 6144, 1280, 1}, S{8192, 6144, 1280, 1}, S{4096, 1280, 5120, 1}}) {
    Problem p = make_problem(sh.m, sh.n, sh.k, DType::bf16, DType::bf16, sh.bias);
    Operands op;
    op.make(p, 3, 0);
    const double est = p.flops() / 650e12 * 1e3;
    printf("clocks %ldx%ldx%ld bias %d (back to back, ~300 ms each):\n", long(sh.m), long(sh.n), long(sh.k), sh.bias);
    GemmArgs la = op.args;
    YBuf lty;
    lty.alloc(p.m, p.ldy, int(dtype_size(p.out_dtype)), 0);
    la.y = lty.y();
    if (!lt.run(la, 0)) continue;
    clocks_one("cuBLASLt", [&] { lt.run(la, 0); }, est, 300, nv);
    for (const Kernel* k : reg.all) {
      if (!timed_cfg(cfg_of(k)) || !k->can_implement(p).ok()) continue;
      clocks_one(k->name().c_str(), [&] { (void)k->run(op.args, g_ws, g_ws_bytes, 0); }, est, 300, nv);
    }
    clocks_one("cuBLASLt (again)", [&] { lt.run(la, 0); }, est, 300, nv);
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s test|seed|models CSV [ROWS]|idx|demo|list\n", argv[0]);
    return 2;
  }
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  Reg reg;
  init_ws();
  std::string mode = argv[1];
  if (mode == "list") {
    for (const Kernel* k : reg.all) printf("%s\n", k->name().c_str());
    return 0;
  }
  if (mode == "test") return mode_test(reg);
  Lt lt;
  if (mode == "seed") return mode_seed(reg, lt);
  if (mode == "models" && argc > 2) return mode_models(reg, lt, argv[2], argc > 3 ? argv[3] : nullptr);
  if (mode == "demo") return mode_demo(reg);
  if (mode == "idx") return mode_idx(reg);
  if (mode == "few") return mode_few(reg, lt);
  if (mode == "clocks") return mode_clocks(reg, lt);
  return 2;
}
