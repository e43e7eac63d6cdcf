#include <string>

#include "tgemm/kernel.h"
#include "tgemm/types.h"

namespace tgemm {

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::bf16: return "bf16";
    case DType::fp16: return "fp16";
    case DType::fp32: return "fp32";
  }
  return "?";
}

std::string_view dtype_torch_name(DType t) {
  switch (t) {
    case DType::bf16: return "torch.bfloat16";
    case DType::fp16: return "torch.float16";
    case DType::fp32: return "torch.float32";
  }
  return "?";
}

bool parse_dtype(std::string_view s, DType* out) {
  for (DType t : {DType::bf16, DType::fp16, DType::fp32}) {
    if (s == dtype_name(t) || s == dtype_torch_name(t)) {
      *out = t;
      return true;
    }
  }
  return false;
}

std::string_view status_code_name(StatusCode c) {
  switch (c) {
    case StatusCode::ok: return "ok";
    case StatusCode::invalid_argument: return "invalid argument";
    case StatusCode::not_supported: return "not supported";
    case StatusCode::cuda_error: return "CUDA error";
    case StatusCode::io_error: return "I/O error";
    case StatusCode::parse_error: return "parse error";
    case StatusCode::internal: return "internal error";
  }
  return "?";
}

std::string Status::to_string() const {
  if (ok()) return "ok";
  return std::string(status_code_name(code_)) + ": " + message_;
}

std::string_view backend_name(Backend b) {
  switch (b) {
    case Backend::sm90: return "sm90";
    case Backend::skinny: return "skinny";
    case Backend::cublaslt: return "cublaslt";
    case Backend::reference: return "reference";
  }
  return "?";
}

bool parse_backend(std::string_view s, Backend* out) {
  for (Backend b : {Backend::sm90, Backend::skinny, Backend::cublaslt, Backend::reference}) {
    if (s == backend_name(b)) {
      *out = b;
      return true;
    }
  }
  return false;
}

}  // namespace tgemm
