// tgemm._tgemm: the nanobind layer between the Python package and the C++ library.
//
// The Python side (tgemm/_core.py) turns framework tensors (PyTorch, CuPy, any DLPack producer) into plain
// descriptions — pointer, rows, cols, leading dimension, dtype — and calls `mm` here, which validates them with
// the library (tgemm::make_problem) before touching CUDA, then runs the global dispatcher on the given device and
// stream with the GIL released. Every non-ok Status becomes a Python exception carrying the library's message:
//   invalid_argument, parse_error -> ValueError;  not_supported -> NotImplementedError;  io_error -> OSError;
//   cuda_error, internal -> RuntimeError.
#include <cuda_runtime_api.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "tgemm/tgemm.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace {

// A failed Status on its way to Python (translated once the GIL is held again).
struct StatusError : std::exception {
  tgemm::StatusCode code;
  std::string message;
  StatusError(tgemm::StatusCode c, std::string m) : code(c), message(std::move(m)) {}
  const char* what() const noexcept override { return message.c_str(); }
};

void check(const tgemm::Status& s) {
  if (!s.ok()) throw StatusError(s.code(), s.message());
}

[[noreturn]] void fail(tgemm::StatusCode code, std::string msg) { throw StatusError(code, std::move(msg)); }

[[noreturn]] void cuda_fail(cudaError_t e, const char* what) {
  cudaGetLastError();  // clear what this call set, so the caller's framework does not see it later
  fail(tgemm::StatusCode::cuda_error, std::string(what) + ": " + cudaGetErrorString(e));
}

tgemm::DType dtype_of(int code, const char* arg) {
  if (code < 0 || code > 2)
    fail(tgemm::StatusCode::invalid_argument, std::string(arg) + ": dtype code " + std::to_string(code) +
                                                  " is not one of 0 (bf16), 1 (fp16), 2 (fp32)");
  return static_cast<tgemm::DType>(code);
}

// Makes `device` current for the duration of the call (and restores the caller's), like a framework's device guard.
struct DeviceGuard {
  int prev = -1;
  explicit DeviceGuard(int device) {
    if (device < 0) return;
    int cur = 0;
    if (cudaError_t e = cudaGetDevice(&cur); e != cudaSuccess) cuda_fail(e, "cudaGetDevice");
    if (cur == device) return;
    if (cudaError_t e = cudaSetDevice(device); e != cudaSuccess) cuda_fail(e, "cudaSetDevice");
    prev = cur;
  }
  ~DeviceGuard() {
    if (prev >= 0) cudaSetDevice(prev);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
};

// While `stream` is being captured into a CUDA graph, this thread's capture mode is relaxed for the call, as
// PyTorch's allocator does for its own cudaMalloc: the first call of a problem on a stream allocates the
// dispatcher's workspace for that stream once (a persistent allocation, not part of the graph), which the default
// "global" capture mode would reject and so invalidate the capture. Nothing is allocated once warm.
struct CaptureModeGuard {
  bool active = false;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  explicit CaptureModeGuard(cudaStream_t stream) {
    if (stream == nullptr) return;  // the legacy stream is never captured; querying it during a capture would fail
    cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream, &st) != cudaSuccess) {
      cudaGetLastError();
      return;
    }
    if (st == cudaStreamCaptureStatusActive && cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess) active = true;
  }
  ~CaptureModeGuard() {
    if (active) cudaThreadExchangeStreamCaptureMode(&mode);
  }
  CaptureModeGuard(const CaptureModeGuard&) = delete;
  CaptureModeGuard& operator=(const CaptureModeGuard&) = delete;
};

// Y[M,N] = X[M,K]·W[N,K]ᵀ (+ bias[N]) on `device` and `stream` (a cudaStream_t as an integer; 0 = legacy default).
// bias_size < 0 means no bias. Called with the GIL released.
void mm(uintptr_t x, int64_t m, int64_t k, int64_t ldx, int x_dtype,       //
        uintptr_t w, int64_t n, int64_t kw, int64_t ldw, int w_dtype,      //
        uintptr_t bias, int64_t bias_size, int bias_dtype,                 //
        uintptr_t y, int64_t ym, int64_t yn, int64_t ldy, int y_dtype,     //
        int device, uintptr_t stream) {
  tgemm::MatrixView xv{reinterpret_cast<void*>(x), m, k, ldx, dtype_of(x_dtype, "x")};
  tgemm::MatrixView wv{reinterpret_cast<void*>(w), n, kw, ldw, dtype_of(w_dtype, "w")};
  tgemm::MatrixView yv{reinterpret_cast<void*>(y), ym, yn, ldy, dtype_of(y_dtype, "out")};
  tgemm::VectorView bv{reinterpret_cast<const void*>(bias), bias_size, bias_size >= 0 ? dtype_of(bias_dtype, "bias") : tgemm::DType::bf16};
  const tgemm::VectorView* bp = bias_size >= 0 ? &bv : nullptr;
  // Validate first: a bad argument is reported without touching CUDA (so also on a machine without a GPU).
  tgemm::Problem p;
  check(tgemm::make_problem(xv, wv, bp, yv, &p));
  if (p.m == 0 || p.n == 0) return;
  auto s = reinterpret_cast<cudaStream_t>(stream);
  DeviceGuard dg(device);
  CaptureModeGuard cg(s);
  check(tgemm::mm(xv, wv, bp, yv, s));
}

// `tgemm explain`, as the CLI prints it: the tables, the decision chain, the pieces of a split plan.
std::string explain(int64_t m, int64_t n, int64_t k, bool bias, int dtype, int out_dtype, std::optional<int> bias_dtype,
                    std::optional<std::string> kernel, std::optional<int64_t> ldx, std::optional<int64_t> ldw,
                    std::optional<int64_t> ldy, std::optional<std::string> arch, std::optional<int> sms) {
  using tgemm::StatusCode;
  if (m < 0 || n < 0 || k < 0)
    fail(StatusCode::invalid_argument, "M, N, K must be non-negative (got " + std::to_string(m) + ", " + std::to_string(n) +
                                           ", " + std::to_string(k) + ")");
  tgemm::Problem p;
  p.m = m, p.n = n, p.k = k;
  p.in_dtype = dtype_of(dtype, "dtype");
  if (p.in_dtype == tgemm::DType::fp32) fail(StatusCode::invalid_argument, "dtype: fp32 inputs are not supported (bf16 or fp16)");
  p.out_dtype = dtype_of(out_dtype, "out_dtype");
  p.has_bias = bias || bias_dtype.has_value();
  p.bias_dtype = bias_dtype ? dtype_of(*bias_dtype, "bias_dtype") : p.in_dtype;
  if (p.bias_dtype != p.in_dtype && p.bias_dtype != tgemm::DType::fp32)
    fail(StatusCode::invalid_argument, "bias_dtype must be the input dtype or fp32");
  auto ld = [](const std::optional<int64_t>& v, int64_t def, const char* name) {
    int64_t r = v.value_or(std::max<int64_t>(def, 1));
    if (r < std::max<int64_t>(def, 1))
      fail(StatusCode::invalid_argument, std::string(name) + " = " + std::to_string(r) + " is below the row length " + std::to_string(def));
    return r;
  };
  p.ldx = ld(ldx, k, "ldx");
  p.ldw = ld(ldw, k, "ldw");
  p.ldy = ld(ldy, n, "ldy");
  tgemm::DeviceInfo dev = tgemm::DeviceInfo::current();
  if (arch) dev.arch = *arch;
  if (sms) {
    if (*sms < 1) fail(StatusCode::invalid_argument, "sms must be >= 1");
    dev.sm_count = *sms;
  }
  tgemm::Dispatcher& d = tgemm::Dispatcher::global();
  std::string out = d.tables_summary() + "\n";
  if (m == 0 || n == 0) return out + "  M or N is 0: mm is a no-op\n";
  if (k == 0) return out + "  K = 0: Y = bias broadcast over rows (or zeros), no kernel\n";
  tgemm::Plan plan = d.make_plan(p, dev, kernel.value_or(""));
  if (plan.status.code() == StatusCode::invalid_argument) check(plan.status);  // e.g. an unknown forced kernel
  out += plan.to_string();
  if (plan.pieces.size() > 1) {
    out += "  pieces (rows m0..m0+m, cols n0..n0+n):\n";
    size_t shown = 0;
    for (const tgemm::Piece& pc : plan.pieces) {
      if (shown++ == 8) {
        out += "    ... " + std::to_string(plan.pieces.size() - 8) + " more\n";
        break;
      }
      out += "    rows [" + std::to_string(pc.m0) + ", " + std::to_string(pc.m0 + pc.m) + ") cols [" + std::to_string(pc.n0) +
             ", " + std::to_string(pc.n0 + pc.n) + ")\n";
    }
  }
  return out;
}

nb::list dtype_list(uint8_t bits) {
  nb::list l;
  for (tgemm::DType t : {tgemm::DType::bf16, tgemm::DType::fp16, tgemm::DType::fp32})
    if (bits & tgemm::dtype_bit(t)) l.append(std::string(tgemm::dtype_name(t)));
  return l;
}

nb::object limit(int64_t v) { return v == tgemm::kNoLimit ? nb::none() : nb::cast(v); }

nb::list kernels() {
  nb::list out;
  for (const tgemm::Kernel* k : tgemm::kernels()) {
    const tgemm::Limits& l = k->limits();
    nb::dict d;
    d["name"] = k->name();
    d["backend"] = std::string(tgemm::backend_name(k->backend()));
    d["deterministic"] = k->deterministic();
    d["y_index_bits"] = l.y_index_bits;
    d["x_index_bits"] = l.x_index_bits;
    d["w_index_bits"] = l.w_index_bits;
    d["uses_tma"] = l.uses_tma;
    d["ld_multiple"] = l.ld_multiple;
    d["k_multiple"] = l.k_multiple;
    d["ptr_align"] = l.ptr_align;
    d["bias_align"] = l.bias_align;
    d["min_m"] = l.min_m;
    d["max_m"] = limit(l.max_m);
    d["max_n"] = limit(l.max_n);
    d["max_k"] = limit(l.max_k);
    d["tile_m"] = l.tile_m;
    d["tile_n"] = l.tile_n;
    d["max_m_tiles"] = limit(l.max_m_tiles);
    d["max_n_tiles"] = limit(l.max_n_tiles);
    d["in_dtypes"] = dtype_list(l.in_dtypes);
    d["out_dtypes"] = dtype_list(l.out_dtypes);
    d["bias_same_as_input"] = l.bias_same_as_input;
    d["bias_fp32"] = l.bias_fp32;
    d["k_zero"] = l.k_zero;
    out.append(d);
  }
  return out;
}

std::string load_tables(const std::vector<std::string>& paths) {
  tgemm::Dispatcher& d = tgemm::Dispatcher::global();
  check(d.load_tables(paths));
  return d.tables_summary();
}

std::string tables_summary() { return tgemm::Dispatcher::global().tables_summary(); }

// What a DLPack capsule (or any object nanobind can import) describes:
// (data pointer incl. byte offset, shape, strides in elements, dtype code, bits, lanes, device type, device id).
// The capsule is consumed here; the producer keeps the memory alive as long as the source object lives.
nb::tuple dlpack_info(nb::ndarray<nb::ro> a) {
  nb::list shape, strides;
  for (size_t i = 0; i < a.ndim(); ++i) {
    shape.append(int64_t(a.shape(i)));
    strides.append(a.stride(i));
  }
  auto as_tuple = [](const nb::list& l) { return nb::steal<nb::tuple>(PyList_AsTuple(l.ptr())); };
  return nb::make_tuple(reinterpret_cast<uintptr_t>(a.data()), as_tuple(shape), as_tuple(strides), int(a.dtype().code),
                        int(a.dtype().bits), int(a.dtype().lanes), a.device_type(), a.device_id());
}

}  // namespace

NB_MODULE(_tgemm, m) {
  m.doc() = "tgemm's C++ core (use the `tgemm` package, not this module)";
  m.attr("__version__") = TGEMM_VERSION;
  m.attr("BF16") = int(tgemm::DType::bf16);
  m.attr("FP16") = int(tgemm::DType::fp16);
  m.attr("FP32") = int(tgemm::DType::fp32);

  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const StatusError& e) {
      PyObject* type = PyExc_RuntimeError;
      switch (e.code) {
        case tgemm::StatusCode::invalid_argument:
        case tgemm::StatusCode::parse_error: type = PyExc_ValueError; break;
        case tgemm::StatusCode::not_supported: type = PyExc_NotImplementedError; break;
        case tgemm::StatusCode::io_error: type = PyExc_OSError; break;
        default: type = PyExc_RuntimeError; break;
      }
      PyErr_SetString(type, e.message.c_str());
    }
  });

  m.def("mm", &mm, "x"_a, "m"_a, "k"_a, "ldx"_a, "x_dtype"_a, "w"_a, "n"_a, "kw"_a, "ldw"_a, "w_dtype"_a, "bias"_a,
        "bias_size"_a, "bias_dtype"_a, "y"_a, "ym"_a, "yn"_a, "ldy"_a, "y_dtype"_a, "device"_a, "stream"_a,
        nb::call_guard<nb::gil_scoped_release>(),
        "Y = X·Wᵀ (+ bias) on raw device pointers (validated by the library first); bias_size < 0: no bias.");
  m.def("explain", &explain, "m"_a, "n"_a, "k"_a, "bias"_a = false, "dtype"_a = 0, "out_dtype"_a = 0,
        "bias_dtype"_a = nb::none(), "kernel"_a = nb::none(), "ldx"_a = nb::none(), "ldw"_a = nb::none(),
        "ldy"_a = nb::none(), "arch"_a = nb::none(), "sms"_a = nb::none());
  m.def("kernels", &kernels);
  m.def("load_tables", &load_tables, "paths"_a);
  m.def("tables_summary", &tables_summary);
  m.def("dlpack_info", &dlpack_info, "array"_a);
}
