// A Dispatcher without the shipped tables, for CPU and GPU tests: a test names its kernels or checks the untuned
// plan, which the tables' picks for the suites' shapes would otherwise replace.
#pragma once

#include <memory>

#include "tgemm/tgemm.h"

namespace tgemm::testing {

inline Status untabled_dispatcher(std::unique_ptr<Dispatcher>* out, DispatcherOptions o = {}) {
  o.load_default_tables = false;
  return Dispatcher::create(o, out);
}

}  // namespace tgemm::testing
