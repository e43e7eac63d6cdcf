// A CUDA runtime call's result as a Status: Ok for cudaSuccess, else StatusCode::cuda_error with "<what>: <the
// runtime's message>". The one helper for the backends, the dispatcher and the bench (five copies before session 42).
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <string_view>

#include "tgemm/types.h"

namespace tgemm {

inline Status cuda_status(cudaError_t e, std::string_view what) {
  if (e == cudaSuccess) return Status::Ok();
  return Status(StatusCode::cuda_error, std::string(what) + ": " + cudaGetErrorString(e));
}

}  // namespace tgemm
