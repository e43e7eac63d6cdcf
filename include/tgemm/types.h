// tgemm public types: dtypes, tensor views, Status.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

namespace tgemm {

enum class DType : uint8_t { bf16, fp16, fp32 };

// Bytes per element.
constexpr int64_t dtype_size(DType t) { return t == DType::fp32 ? 4 : 2; }
// Short name used by the CLI and logs: "bf16", "fp16", "fp32".
std::string_view dtype_name(DType t);
// Name used in the tuned-table CSV (AITER format): "torch.bfloat16", ...
std::string_view dtype_torch_name(DType t);
// Parses either spelling; returns false on anything else.
bool parse_dtype(std::string_view s, DType* out);

enum class StatusCode : uint8_t {
  ok = 0,
  invalid_argument,  // the caller passed something wrong; the message names it
  not_supported,     // valid, but no kernel in this build can run it
  cuda_error,        // a CUDA or cuBLASLt call failed
  io_error,          // a file could not be read or written
  parse_error,       // a file was malformed; the message has file:line:column
  internal,
};

class Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return {}; }

  bool ok() const { return code_ == StatusCode::ok; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string to_string() const;

 private:
  StatusCode code_ = StatusCode::ok;
  std::string message_;
};

std::string_view status_code_name(StatusCode c);

// A row-major matrix: element (r, c) lives at data + (r * ld + c) * dtype_size(dtype).
// ld is in elements and must be >= cols.
struct MatrixView {
  void* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t ld = 0;
  DType dtype = DType::bf16;
};

// A contiguous vector (bias[N]).
struct VectorView {
  const void* data = nullptr;
  int64_t size = 0;
  DType dtype = DType::bf16;
};

}  // namespace tgemm
