// The vendor backend: cuBLASLt, the path F.linear takes. Last resort of every plan.
//
// Row-major Y[M,N] = X[M,K]·W[N,K]ᵀ is, in cuBLASLt's column-major terms, Yᶜ[N,M] = Wᶜ[K,N]ᵀ · Xᶜ[K,M]:
// A = W with op T, B = X with op N, D = Y, m = N, n = M. The bias vector runs along m (= N), which is
// what CUBLASLT_EPILOGUE_BIAS adds.
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backends/cublaslt/cublaslt.h"
#include "backends/cublaslt/lt_algo.h"
#include "registry/registry.h"

namespace tgemm {

namespace {

cudaDataType_t cuda_type(DType t) {
  switch (t) {
    case DType::bf16: return CUDA_R_16BF;
    case DType::fp16: return CUDA_R_16F;
    default: return CUDA_R_32F;
  }
}

Status lt_error(cublasStatus_t s, const std::string& what) {
  return {StatusCode::cuda_error, "cuBLASLt " + what + ": " + cublasLtGetStatusName(s) + " (" + cublasLtGetStatusString(s) + ")"};
}

// cuBLASLt's own workspace: 32 MiB is what cuBLAS recommends for Hopper.
constexpr size_t kLtWorkspace = size_t(32) << 20;

struct Handle {
  cublasLtHandle_t h = nullptr;
};

// One handle per device (a handle is tied to the device current at creation).
Status handle_for(int dev, cublasLtHandle_t* out) {
  static std::mutex mu;
  static std::map<int, Handle> handles;
  std::lock_guard<std::mutex> lock(mu);
  Handle& h = handles[dev];
  if (!h.h) {
    if (cublasStatus_t s = cublasLtCreate(&h.h); s != CUBLAS_STATUS_SUCCESS) return lt_error(s, "create");
  }
  *out = h.h;
  return Status::Ok();
}

// The current device and its handle. *no_device (if given) tells a machine without a GPU (the CPU-only CI) from a
// failure to create the handle.
Status current_handle(int* dev, cublasLtHandle_t* out, bool* no_device = nullptr) {
  if (no_device) *no_device = false;
  if (cudaError_t e = cudaGetDevice(dev); e != cudaSuccess) {
    cudaGetLastError();
    if (no_device) *no_device = true;
    return {StatusCode::cuda_error, cudaGetErrorString(e)};
  }
  return handle_for(*dev, out);
}

// Descriptors and the chosen algorithm for one problem; built once, reused by every call.
struct Prepared {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  std::vector<cublasLtMatmulHeuristicResult_t> algos;  // heuristic order
  // The bias pointer lives in `op`, shared by every call of this problem (and, for the heuristic's answers, by
  // every cublaslt_h<i> kernel); cublasLtMatmul reads it while enqueueing, so this lock spans set and call.
  std::mutex bias_mu;
  ~Prepared() {
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (d) cublasLtMatrixLayoutDestroy(d);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

// Bias type cuBLASLt is given: fp32 output takes an fp32 bias, so a bf16/fp16 bias is widened into the workspace.
bool widen_bias(const Problem& p) { return p.has_bias && p.out_dtype == DType::fp32 && p.bias_dtype != DType::fp32; }

// The matmul descriptor and layouts of p.
Status describe(const Problem& p, Prepared* pr) {
  cublasStatus_t s;
  if ((s = cublasLtMatmulDescCreate(&pr->op, CUBLAS_COMPUTE_32F, CUDA_R_32F)) != CUBLAS_STATUS_SUCCESS) return lt_error(s, "desc");
  cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
  cublasLtMatmulDescSetAttribute(pr->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta);
  cublasLtMatmulDescSetAttribute(pr->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb);
  if (p.has_bias) {
    cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
    cublasLtMatmulDescSetAttribute(pr->op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof epi);
    cudaDataType_t bt = widen_bias(p) ? CUDA_R_32F : cuda_type(p.bias_dtype);
    cublasLtMatmulDescSetAttribute(pr->op, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, &bt, sizeof bt);
  }
  cudaDataType_t in = cuda_type(p.in_dtype), outt = cuda_type(p.out_dtype);
  if ((s = cublasLtMatrixLayoutCreate(&pr->a, in, uint64_t(p.k), uint64_t(p.n), p.ldw)) != CUBLAS_STATUS_SUCCESS) return lt_error(s, "layout A");
  if ((s = cublasLtMatrixLayoutCreate(&pr->b, in, uint64_t(p.k), uint64_t(p.m), p.ldx)) != CUBLAS_STATUS_SUCCESS) return lt_error(s, "layout B");
  if ((s = cublasLtMatrixLayoutCreate(&pr->d, outt, uint64_t(p.n), uint64_t(p.m), p.ldy)) != CUBLAS_STATUS_SUCCESS) return lt_error(s, "layout D");
  return Status::Ok();
}

// Descriptors and the heuristic's first `want` answers for p.
Status prepare(cublasLtHandle_t h, const Problem& p, int want, std::unique_ptr<Prepared>* out) {
  auto pr = std::make_unique<Prepared>();
  if (Status st = describe(p, pr.get()); !st.ok()) return st;
  cublasStatus_t s;
  cublasLtMatmulPreference_t pref = nullptr;
  if ((s = cublasLtMatmulPreferenceCreate(&pref)) != CUBLAS_STATUS_SUCCESS) return lt_error(s, "preference");
  size_t ws = kLtWorkspace;
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  // The alignment of this problem's pointers, so the algorithm also suits every call of the same key.
  uint32_t ax = uint32_t(p.align_x), aw = uint32_t(p.align_w), ay = uint32_t(p.align_y);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &aw, sizeof aw);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &ax, sizeof ax);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &ay, sizeof ay);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &ay, sizeof ay);
  pr->algos.resize(size_t(want));
  int found = 0;
  s = cublasLtMatmulAlgoGetHeuristic(h, pr->op, pr->a, pr->b, pr->d, pr->d, pref, want, pr->algos.data(), &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (s != CUBLAS_STATUS_SUCCESS) return lt_error(s, "heuristic");
  if (found == 0) return {StatusCode::not_supported, "cuBLASLt heuristic found no algorithm"};
  pr->algos.resize(size_t(found));
  *out = std::move(pr);
  return Status::Ok();
}

using cublaslt_detail::LtAlgoConfig;

LtAlgoConfig config_of(const cublasLtMatmulAlgo_t& a) {
  LtAlgoConfig c;
  size_t w = 0;
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_ID, &c.id, sizeof c.id, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_TILE_ID, &c.tile, sizeof c.tile, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_STAGES_ID, &c.stages, sizeof c.stages, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &c.split_k, sizeof c.split_k, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &c.reduction, sizeof c.reduction, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &c.swizzle, sizeof c.swizzle, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &c.custom, sizeof c.custom, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, &c.inner, sizeof c.inner, &w);
  cublasLtMatmulAlgoConfigGetAttribute(&a, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &c.cluster, sizeof c.cluster, &w);
  return c;
}

// Descriptors and the configured algorithm for p, if cuBLASLt runs it there: cublasLtMatmulAlgoCheck accepts it,
// its workspace fits ours and the pointers are as aligned as it needs.
Status prepare_config(cublasLtHandle_t h, const Problem& p, const LtAlgoConfig& c, std::unique_ptr<Prepared>* out) {
  auto pr = std::make_unique<Prepared>();
  if (Status st = describe(p, pr.get()); !st.ok()) return st;
  cudaDataType_t in = cuda_type(p.in_dtype), outt = cuda_type(p.out_dtype);
  cublasLtMatmulAlgo_t a = {};
  if (cublasStatus_t s = cublasLtMatmulAlgoInit(h, CUBLAS_COMPUTE_32F, CUDA_R_32F, in, in, outt, outt, c.id, &a); s != CUBLAS_STATUS_SUCCESS)
    return {StatusCode::not_supported, c.name() + ": " + lt_error(s, "algorithm " + std::to_string(c.id)).message()};
  cublasLtMatmulAlgoConfigSetAttribute(&a, CUBLASLT_ALGO_CONFIG_TILE_ID, &c.tile, sizeof c.tile);
  cublasLtMatmulAlgoConfigSetAttribute(&a, CUBLASLT_ALGO_CONFIG_STAGES_ID, &c.stages, sizeof c.stages);
  cublasLtMatmulAlgoConfigSetAttribute(&a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &c.split_k, sizeof c.split_k);
  cublasLtMatmulAlgoConfigSetAttribute(&a, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &c.reduction, sizeof c.reduction);
  cublasLtMatmulAlgoConfigSetAttribute(&a, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &c.swizzle, sizeof c.swizzle);
  cublasLtMatmulAlgoConfigSetAttribute(&a, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &c.custom, sizeof c.custom);
  cublasLtMatmulAlgoConfigSetAttribute(&a, CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, &c.inner, sizeof c.inner);
  cublasLtMatmulAlgoConfigSetAttribute(&a, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &c.cluster, sizeof c.cluster);
  // An attribute the algorithm does not take leaves it unchanged: the name must still be what runs.
  if (!(config_of(a) == c)) return {StatusCode::not_supported, c.name() + ": cuBLASLt does not take this configuration"};
  cublasLtMatmulHeuristicResult_t r = {};
  if (cublasStatus_t s = cublasLtMatmulAlgoCheck(h, pr->op, pr->a, pr->b, pr->d, pr->d, &a, &r); s != CUBLAS_STATUS_SUCCESS)
    return {StatusCode::not_supported, c.name() + ": " + lt_error(s, "algorithm check").message()};
  r.algo = a;
  if (r.workspaceSize > kLtWorkspace)
    return {StatusCode::not_supported, c.name() + " needs " + std::to_string(r.workspaceSize) + " bytes of workspace, more than " +
                                           std::to_string(kLtWorkspace)};
  const struct {
    cublasLtMatmulAlgoCapAttributes_t cap;
    int have;
    const char* what;
  } aligns[] = {{CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_A_BYTES, p.align_w, "W"}, {CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_B_BYTES, p.align_x, "X"},
                {CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_C_BYTES, p.align_y, "Y"}, {CUBLASLT_ALGO_CAP_MIN_ALIGNMENT_D_BYTES, p.align_y, "Y"}};
  for (const auto& al : aligns) {
    uint32_t need = 0;
    size_t w = 0;
    if (cublasLtMatmulAlgoCapGetAttribute(&a, al.cap, &need, sizeof need, &w) == CUBLAS_STATUS_SUCCESS && int64_t(need) > al.have)
      return {StatusCode::not_supported, c.name() + " needs " + al.what + " aligned to " + std::to_string(need) + " bytes, got " +
                                             std::to_string(al.have)};
  }
  pr->algos = {r};
  *out = std::move(pr);
  return Status::Ok();
}

// How many of the heuristic's answers are registered as kernels (cublaslt, cublaslt_h1, ...): the tuner's choices.
// All it offers: asked for 32 on the H200 (CUDA 13.0), it gave 8 for nine shapes of the suites and 7 for
// 16384 x 1024 x 4096 with bias (docs/benchmarks.md run 254, test CublasLtHeuristic).
constexpr int kHeuristicCount = 8;

// Prepared problems by device and problem key. The heuristic kernels share one, so the heuristic is asked once per
// problem (not once per cublaslt_h<i>) and every index names an answer of the same list.
class PreparedCache {
 public:
  // The problem's entry, made by `make(&entry)` on first use; a failed make leaves no entry (asked again next time).
  template <class Make>
  Status get(int dev, const Problem& p, Make&& make, Prepared** out) {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = map_.try_emplace({dev, key(p)}).first;
    if (!it->second) {
      if (Status s = make(&it->second); !s.ok()) {
        map_.erase(it);
        return s;
      }
    }
    *out = it->second.get();
    return Status::Ok();
  }

 private:
  static std::vector<int64_t> key(const Problem& p) {
    return {p.m, p.n, p.k, p.ldx, p.ldw, p.ldy, int64_t(p.in_dtype), int64_t(p.out_dtype), int64_t(p.has_bias),
            int64_t(p.bias_dtype), p.align_x, p.align_w, p.align_y};
  }
  std::mutex mu_;
  std::map<std::pair<int, std::vector<int64_t>>, std::unique_ptr<Prepared>> map_;
};

// The heuristic's answers per problem, shared by the heuristic kernels and the tuner's search (which starts from
// them): one question per problem for both. Entries live as long as the process, as the kernels do.
PreparedCache& heuristic_cache() {
  static PreparedCache cache;
  return cache;
}

Status heuristic_answers(cublasLtHandle_t h, int dev, const Problem& p, Prepared** out) {
  return heuristic_cache().get(dev, p, [&](std::unique_ptr<Prepared>* slot) { return prepare(h, p, kHeuristicCount, slot); }, out);
}

}  // namespace

class CublasLtKernel final : public Kernel {
 public:
  // `index`: which of the heuristic's answers to run (0 = its first choice), from the shared heuristic_cache().
  explicit CublasLtKernel(int index) : index_(index) {
    name_ = index == 0 ? "cublaslt" : "cublaslt_h" + std::to_string(index);
    init_limits();
  }
  // A configured algorithm (lt_algo.h): runs where cuBLASLt's check accepts it for the problem.
  explicit CublasLtKernel(const LtAlgoConfig& c) : index_(0), config_(c), cache_(std::make_unique<PreparedCache>()) {
    name_ = c.name();
    init_limits();
  }
  const std::string& name() const override { return name_; }
  Backend backend() const override { return Backend::cublaslt; }
  // A split of K summed in place in Y (CUBLASLT_REDUCTION_SCHEME_INPLACE) has no documented order; the workspace
  // reductions and unsplit algorithms do. (Of the heuristic's answers only their configuration says which.)
  bool deterministic() const override { return !config_ || config_->reduction != CUBLASLT_REDUCTION_SCHEME_INPLACE; }
  // A heuristic answer is cuBLASLt's own choice for the problem at hand; a configured algorithm was only ever run at
  // the shapes it was tuned at.
  bool tuned_shape_only() const override { return config_.has_value(); }
  std::string fault_family() const override {
    return config_ ? name_.substr(0, name_.rfind("_cl")) : name_;  // lt_algo.cpp: "_cl<cluster>" ends every name
  }
  const Limits& limits() const override { return limits_; }
  // What cuBLASLt accepts, as seen on the H200 (CUBLASLT_LOG_LEVEL=2): the output is the input dtype or fp32
  // (bf16 in, fp16 out is NOT_SUPPORTED); the bias epilogue takes a bias of the output's dtype only
  // ("Unsupported config of bias pointer type for chosen precision"); an fp32 output's 16-bit bias is
  // widened into the workspace. The alternatives cublaslt_hN exist only where the heuristic offers N+1 answers.
  Verdict can_implement(const Problem& p) const override {
    if (p.out_dtype != p.in_dtype && p.out_dtype != DType::fp32)
      return {Verdict::Kind::unsupported, "cuBLASLt takes " + std::string(dtype_name(p.in_dtype)) + " inputs with " +
                                              std::string(dtype_name(p.in_dtype)) + " or fp32 output, not " + std::string(dtype_name(p.out_dtype))};
    if (p.has_bias && p.bias_dtype != p.out_dtype && p.out_dtype != DType::fp32)
      return {Verdict::Kind::unsupported, "cuBLASLt's bias epilogue needs the bias in the output dtype (" +
                                              std::string(dtype_name(p.out_dtype)) + "), got " + std::string(dtype_name(p.bias_dtype))};
    Verdict v = check_limits(limits_, p);
    if (!v.ok() || (index_ == 0 && !config_)) return v;
    int dev = 0;
    cublasLtHandle_t h = nullptr;
    Prepared* pr = nullptr;
    bool no_device = false;
    if (Status s = current_handle(&dev, &h, &no_device); !s.ok())
      return {Verdict::Kind::unsupported, !no_device ? s.message()
                                          : name_ + (config_ ? " needs a GPU for cuBLASLt to check it" : " needs a GPU to ask cuBLASLt's heuristic")};
    if (Status s = lookup(h, dev, p, &pr); !s.ok()) return {Verdict::Kind::unsupported, s.message()};
    if (size_t(index_) >= pr->algos.size())
      return {Verdict::Kind::unsupported, "cuBLASLt's heuristic offers " + std::to_string(pr->algos.size()) + " algorithms for this problem, not " +
                                              std::to_string(index_ + 1)};
    return v;
  }
  size_t workspace_bytes(const Problem& p) const override {
    return kLtWorkspace + (widen_bias(p) ? size_t(p.n) * 4 + 256 : 0);
  }

  Status run(const GemmArgs& args, void* workspace, size_t workspace_bytes, cudaStream_t stream) const override {
    const Problem& p = args.p;
    int dev = 0;
    Prepared* pr = nullptr;
    cublasLtHandle_t h = nullptr;
    if (Status s = current_handle(&dev, &h); !s.ok()) return s;
    if (Status s = lookup(h, dev, p, &pr); !s.ok()) return s;
    if (size_t(index_) >= pr->algos.size())
      return {StatusCode::not_supported, name_ + ": the heuristic offered only " + std::to_string(pr->algos.size()) + " algorithms"};
    const void* bias = args.bias;
    if (widen_bias(p)) {
      float* wide = reinterpret_cast<float*>(static_cast<char*>(workspace) + kLtWorkspace);
      if (Status s = cublaslt_detail::widen_to_fp32(args.bias, p.bias_dtype, p.n, wide, stream); !s.ok()) return s;
      bias = wide;
    }
    float alpha = 1.f, beta = 0.f;
    cublasLtMatmulDesc_t op = pr->op;
    std::unique_lock<std::mutex> lock;
    if (p.has_bias) {
      lock = std::unique_lock<std::mutex>(pr->bias_mu);
      cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof bias);
    }
    cublasStatus_t s = cublasLtMatmul(h, op, &alpha, args.w, pr->a, args.x, pr->b, &beta, args.y, pr->d, args.y, pr->d,
                                      &pr->algos[size_t(index_)].algo, workspace, std::min(workspace_bytes, kLtWorkspace), stream);
    if (s != CUBLAS_STATUS_SUCCESS) return lt_error(s, "matmul");
    return Status::Ok();
  }

 private:
  Status lookup(cublasLtHandle_t h, int dev, const Problem& p, Prepared** out) const {
    if (!config_) return heuristic_answers(h, dev, p, out);
    return cache_->get(dev, p, [&](std::unique_ptr<Prepared>* slot) { return prepare_config(h, p, *config_, slot); }, out);
  }

  void init_limits() {
    // cuBLASLt takes 64-bit layouts; what it really does at M·N >= 2^31 and with 4 GiB+ operands was
    // measured on the H200 (docs/cublaslt_limits.md). K == 0 is handled by the dispatcher.
    limits_.k_zero = false;
    limits_.ptr_align = 2;
  }

  int index_;
  std::optional<LtAlgoConfig> config_;
  std::string name_;
  Limits limits_;
  std::unique_ptr<PreparedCache> cache_;  // a configured algorithm's own; the heuristic kernels use heuristic_cache()
};

namespace cublaslt_detail {

int heuristic_count() { return kHeuristicCount; }

Status heuristic_algos(const Problem& p, int want, std::vector<std::array<uint64_t, 8>>* out) {
  static_assert(sizeof(cublasLtMatmulAlgo_t) == sizeof(std::array<uint64_t, 8>), "cuBLASLt's opaque algorithm");
  int dev = 0;
  cublasLtHandle_t h = nullptr;
  if (Status s = current_handle(&dev, &h); !s.ok()) return s;
  std::unique_ptr<Prepared> pr;
  if (Status s = prepare(h, p, want, &pr); !s.ok()) return s;
  out->resize(pr->algos.size());
  for (size_t i = 0; i < pr->algos.size(); ++i) std::memcpy((*out)[i].data(), &pr->algos[i].algo, sizeof(cublasLtMatmulAlgo_t));
  return Status::Ok();
}

std::vector<std::string> search_names(const Problem& p, SearchDepth depth) {
  std::vector<std::string> out;
  int dev = 0;
  cublasLtHandle_t h = nullptr;
  Prepared* heur = nullptr;
  if (depth == SearchDepth::none) return out;
  if (!current_handle(&dev, &h).ok() || !heuristic_answers(h, dev, p, &heur).ok()) return out;
  std::vector<LtAlgoConfig> tried;  // the answers (already cublaslt_h<i>), then each candidate once
  for (const auto& r : heur->algos) tried.push_back(config_of(r.algo));
  const std::vector<LtAlgoConfig> answers = tried;
  auto consider = [&](const LtAlgoConfig& c) {
    if (std::find(tried.begin(), tried.end(), c) != tried.end()) return;
    tried.push_back(c);
    std::unique_ptr<Prepared> pr;
    if (prepare_config(h, p, c, &pr).ok()) out.push_back(c.name());
  };
  for (const LtAlgoConfig& a : answers)
    for (uint16_t cl : kLtSearchClusters) {
      LtAlgoConfig c = a;
      c.cluster = cl;
      consider(c);
    }
  if (depth != SearchDepth::wide) return out;
  int widened = 0;
  for (size_t i = 0; i < answers.size() && widened < kLtWideAnswers; ++i) {
    if (answers[i].split_k != 1) continue;
    ++widened;
    int32_t custom_max = 0;
    size_t w = 0;
    if (cublasLtMatmulAlgoCapGetAttribute(&heur->algos[i].algo, CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX, &custom_max, sizeof custom_max, &w) !=
        CUBLAS_STATUS_SUCCESS)
      custom_max = 0;
    for (int32_t opt = 0; opt <= std::min<int32_t>(custom_max, 15); ++opt)
      for (uint16_t cl : kLtSearchClusters) {
        LtAlgoConfig c = answers[i];
        c.custom = uint32_t(opt);
        c.cluster = cl;
        consider(c);
      }
  }
  return out;
}

}  // namespace cublaslt_detail

void add_cublaslt_kernels(BackendKernels& out) {
  out.backend = Backend::cublaslt;
  for (int i = 0; i < kHeuristicCount; ++i) out.kernels.push_back(std::make_unique<CublasLtKernel>(i));
  out.by_name = [](std::string_view name) -> std::unique_ptr<Kernel> {
    if (auto c = cublaslt_detail::parse_lt_algo_name(name)) return std::make_unique<CublasLtKernel>(*c);
    return nullptr;
  };
  out.search = cublaslt_detail::search_names;
}

}  // namespace tgemm
