// Maps kernel names (the CSV's kernelName) to kernels. Each backend contributes its kernels and, optionally,
// an ordered list of defaults for problems the tuned table does not cover.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "tgemm/kernel.h"

namespace tgemm {

// How far the tuner looks past the registered kernels (BackendKernels::search); `tgemm tune --search`.
enum class SearchDepth : uint8_t { none, near, wide };
std::string_view search_depth_name(SearchDepth d);
bool parse_search_depth(std::string_view s, SearchDepth* out);

struct BackendKernels {
  Backend backend = Backend::reference;
  std::vector<std::unique_ptr<Kernel>> kernels;
  // Untuned default: candidates for `p`, most preferred first; empty when this backend has no opinion.
  std::function<std::vector<const Kernel*>(const Problem& p)> defaults;
  // Tried after cuBLASLt: slower than the vendor where both run, but able to run what it refuses (a bias dtype, a
  // leading dimension), so that such a problem is served rather than refused. Empty when none.
  std::function<std::vector<const Kernel*>(const Problem& p)> fallbacks;
  // Kernels named by their configuration rather than registered one by one (cuBLASLt's configured algorithms,
  // cublaslt_a...): the kernel a name stands for, made on first use; null for names this backend does not make.
  std::function<std::unique_ptr<Kernel>(std::string_view name)> by_name;
  // The tuner's extra candidates for p, as names by_name makes, the nearest first. Empty when none.
  std::function<std::vector<std::string>(const Problem& p, SearchDepth depth)> search;
};

// One per backend folder; each fills `out` with its kernels.
void add_reference_kernels(BackendKernels& out);
void add_cublaslt_kernels(BackendKernels& out);
void add_sm90_kernels(BackendKernels& out);
void add_skinny_kernels(BackendKernels& out);

class Registry {
 public:
  static const Registry& get();

  // A registered kernel, or one a backend makes from its name (BackendKernels::by_name; kept for the process).
  const Kernel* find(std::string_view name) const;
  // The registered kernels (not those made by name).
  const std::vector<const Kernel*>& all() const { return all_; }
  // The extra tuning candidates for p of the backends in `backends` (BackendKernels::search), made by name.
  std::vector<const Kernel*> search(const Problem& p, SearchDepth depth, const std::vector<Backend>& backends) const;
  // Untuned defaults over all backends: skinny, then sm90, then cuBLASLt.
  std::vector<const Kernel*> defaults(const Problem& p) const;
  // The backends' fallbacks for `p`, to try after every default (see BackendKernels::fallbacks).
  std::vector<const Kernel*> fallbacks(const Problem& p) const;
  const Kernel* cublaslt() const { return cublaslt_; }
  const Kernel* reference() const { return reference_; }

 private:
  Registry();
  std::vector<BackendKernels> backends_;  // in preference order
  std::vector<const Kernel*> all_;
  const Kernel* cublaslt_ = nullptr;
  const Kernel* reference_ = nullptr;
  mutable std::mutex made_mu_;
  mutable std::map<std::string, std::unique_ptr<Kernel>, std::less<>> made_;  // by name; never erased
};

}  // namespace tgemm
