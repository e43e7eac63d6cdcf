#include "registry/registry.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_set>

#include "tgemm/tgemm.h"

namespace tgemm {

Registry::Registry() {
  // Preference order for untuned defaults: the small-M kernels, our own Hopper kernels, then the vendor.
  backends_.resize(4);
  add_skinny_kernels(backends_[0]);
  add_sm90_kernels(backends_[1]);
  add_cublaslt_kernels(backends_[2]);
  add_reference_kernels(backends_[3]);
  std::unordered_set<std::string> names;
  for (auto& b : backends_)
    for (auto& k : b.kernels) {
      if (!names.insert(k->name()).second) throw std::logic_error("tgemm: kernel name registered twice: " + k->name());
      if (k->backend() != b.backend) throw std::logic_error("tgemm: kernel " + k->name() + " registered under another backend");
      all_.push_back(k.get());
      if (k->backend() == Backend::cublaslt && !cublaslt_) cublaslt_ = k.get();
      if (k->backend() == Backend::reference && !reference_) reference_ = k.get();
    }
}

const Registry& Registry::get() {
  static const Registry r;
  return r;
}

const Kernel* Registry::find(std::string_view name) const {
  for (const Kernel* k : all_)
    if (k->name() == name) return k;
  std::lock_guard<std::mutex> lock(made_mu_);
  if (auto it = made_.find(name); it != made_.end()) return it->second.get();
  for (const auto& b : backends_)
    if (b.by_name)
      if (std::unique_ptr<Kernel> k = b.by_name(name)) {
        // The name must be the kernel's own, or a table would name one kernel two ways.
        if (k->name() != name) return nullptr;
        const Kernel* out = k.get();
        made_.emplace(std::string(name), std::move(k));
        return out;
      }
  return nullptr;
}

std::string_view search_depth_name(SearchDepth d) {
  switch (d) {
    case SearchDepth::none: return "none";
    case SearchDepth::near: return "near";
    case SearchDepth::wide: return "wide";
  }
  return "?";
}

bool parse_search_depth(std::string_view s, SearchDepth* out) {
  for (SearchDepth d : {SearchDepth::none, SearchDepth::near, SearchDepth::wide})
    if (s == search_depth_name(d)) {
      *out = d;
      return true;
    }
  return false;
}

std::vector<const Kernel*> Registry::search(const Problem& p, SearchDepth depth, const std::vector<Backend>& backends) const {
  std::vector<const Kernel*> out;
  if (depth == SearchDepth::none) return out;
  for (const auto& b : backends_)
    if (b.search && std::find(backends.begin(), backends.end(), b.backend) != backends.end())
      for (const std::string& name : b.search(p, depth))
        if (const Kernel* k = find(name)) out.push_back(k);
  return out;
}

std::vector<const Kernel*> Registry::defaults(const Problem& p) const {
  std::vector<const Kernel*> out;
  for (size_t i = 0; i + 1 < backends_.size(); ++i) {  // never the reference kernel
    const auto& b = backends_[i];
    if (b.defaults) {
      for (const Kernel* k : b.defaults(p)) out.push_back(k);
    }
  }
  if (cublaslt_) out.push_back(cublaslt_);
  return out;
}

std::vector<const Kernel*> Registry::fallbacks(const Problem& p) const {
  std::vector<const Kernel*> out;
  for (size_t i = 0; i + 1 < backends_.size(); ++i)
    if (backends_[i].fallbacks)
      for (const Kernel* k : backends_[i].fallbacks(p)) out.push_back(k);
  return out;
}

std::vector<const Kernel*> kernels() { return Registry::get().all(); }

const Kernel* find_kernel(const std::string& name) { return Registry::get().find(name); }

}  // namespace tgemm

// A build that leaves a backend out (TGEMM_EXCLUDE_BACKENDS, for fast sanitizer builds) registers none of its
// kernels: these weak definitions stand in for the backend's own.
namespace tgemm {
__attribute__((weak)) void add_sm90_kernels(BackendKernels&) {}
__attribute__((weak)) void add_skinny_kernels(BackendKernels&) {}
}  // namespace tgemm
