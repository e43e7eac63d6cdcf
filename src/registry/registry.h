// Maps kernel names (the CSV's kernelName) to kernels. Each backend contributes its kernels and, optionally,
// an ordered list of defaults for problems the tuned table does not cover.
#pragma once

#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "tgemm/kernel.h"

namespace tgemm {

struct BackendKernels {
  std::vector<std::unique_ptr<Kernel>> kernels;
  // Untuned default: candidates for `p`, most preferred first; empty when this backend has no opinion.
  std::function<std::vector<const Kernel*>(const Problem& p)> defaults;
  // Tried after cuBLASLt: slower than the vendor where both run, but able to run what it refuses (a bias dtype, a
  // leading dimension), so that such a problem is served rather than refused. Empty when none.
  std::function<std::vector<const Kernel*>(const Problem& p)> fallbacks;
};

// One per backend folder; each fills `out` with its kernels.
void add_reference_kernels(BackendKernels& out);
void add_cublaslt_kernels(BackendKernels& out);
void add_sm90_kernels(BackendKernels& out);
void add_skinny_kernels(BackendKernels& out);

class Registry {
 public:
  static const Registry& get();

  const Kernel* find(std::string_view name) const;
  const std::vector<const Kernel*>& all() const { return all_; }
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
};

}  // namespace tgemm
