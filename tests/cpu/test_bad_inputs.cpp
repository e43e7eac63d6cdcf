// The bad-input catalogue: every input tgemm rejects, run for real, with the exact message it gives.
// docs/bad_inputs.md is generated from this test (scripts/gen_bad_inputs.sh: it sets TGEMM_BAD_INPUTS_OUT), and
// the ctest docs_bad_inputs_current fails when the document no longer matches what the library says.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>

#include "common/untabled_dispatcher.h"
#include "core/cuda_status.h"
#include "registry/registry.h"
#include "table/table.h"
#include "tgemm/tgemm.h"

namespace tgemm {
namespace {

void* addr(uintptr_t a) { return reinterpret_cast<void*>(a); }

struct Entry {
  std::string category;  // the kind of bad input (the list)
  std::string input;     // what was passed, in words
  std::string api;       // the call that rejects it
  StatusCode code;
  std::string expect;    // a fragment the message must contain (the test's assertion)
  std::string also;      // other tests that prove the same rejection
  std::function<Status()> run;
  std::string message;   // what the library said (filled in)
};

const char* kHeader = "gfx,cu_num,M,N,K,bias,dtype,outdtype,scaleAB,bpreshuffle,libtype,solidx,splitK,us,kernelName,err_ratio,tflops,bw\n";
const char* kRow = "sm90,132,8192,6144,1280,True,torch.bfloat16,torch.bfloat16,False,False,cublaslt,0,1,12.5,cublaslt,0,1,1\n";

// `row` with column `col` (0-based) replaced.
std::string row_with(int col, const std::string& value) {
  std::string r = kRow;
  r.pop_back();
  std::vector<std::string> f;
  size_t s = 0;
  for (size_t i = 0; i <= r.size(); ++i)
    if (i == r.size() || r[i] == ',') f.push_back(r.substr(s, i - s)), s = i + 1;
  f[size_t(col)] = value;
  std::string out;
  for (size_t i = 0; i < f.size(); ++i) out += (i ? "," : "") + f[i];
  return out + "\n";
}

bool known(const std::string& k, const std::string& lib) { return (k == "cublaslt" || k == "cublaslt_h1") && lib == "cublaslt"; }

Status table_text(const std::string& text) {
  TunedTable t;
  Status s = t.load_text(text, "t.csv", known, nullptr);
  if (!s.ok() && t.size() != 0) return {StatusCode::internal, "rows were merged from a rejected file"};
  return s;
}

std::string md_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '|') o += "\\|";
    else if (c == '\n') o += " ";
    else o += c;
  }
  return o;
}

TEST(BadInputCatalogue, EveryRejectionHasItsExactMessage) {
  const uintptr_t X = 0x10000000, W = 0x20000000, Y = 0x30000000, B = 0x40000000;
  const MatrixView x0{addr(X), 64, 128, 128, DType::bf16}, w0{addr(W), 32, 128, 128, DType::bf16}, y0{addr(Y), 64, 32, 32, DType::bf16};
  const VectorView b0{addr(B), 32, DType::bf16};
  std::unique_ptr<Dispatcher> d;
  ASSERT_TRUE(testing::untabled_dispatcher(&d).ok());
  // mm on modified views: a lambda edits copies of the valid operands.
  struct Ops {
    MatrixView x, w, y;
    VectorView b;
    bool bias = false;
  };
  auto mm_with = [&](std::function<void(Ops&)> edit) {
    return [&, edit] {
      Ops op{x0, w0, y0, b0, false};
      edit(op);
      return d->mm(op.x, op.w, op.bias ? &op.b : nullptr, op.y, nullptr);
    };
  };
  const std::string kBad = "BadInput.EveryCaseNamesTheArgument";
  const StatusCode inv = StatusCode::invalid_argument, parse = StatusCode::parse_error, io = StatusCode::io_error;
  const int64_t big = int64_t(1) << 40, k30 = int64_t(1) << 30;
  std::string malformed = "tgemm_bad_inputs_malformed.csv";  // relative: the message shows the name as given
  std::ofstream(malformed) << kHeader << kRow << row_with(13, "fast");
  std::string unknown_kernel = "tgemm_bad_inputs_unknown_kernel.csv";
  std::string sm90_row = row_with(14, "sm90_nope");
  sm90_row.replace(sm90_row.find(",cublaslt,"), 10, ",sm90,");  // libtype sm90
  std::ofstream(unknown_kernel) << kHeader << sm90_row;

  std::vector<Entry> cases = {
      // ---- null pointers
      {"null pointer", "X data null (M, K > 0)", "mm", inv, "x: null data pointer for a 64x128 matrix", kBad,
       mm_with([](Ops& o) { o.x.data = nullptr; })},
      {"null pointer", "W data null", "mm", inv, "w: null data pointer", kBad, mm_with([](Ops& o) { o.w.data = nullptr; })},
      {"null pointer", "Y data null", "mm", inv, "y: null data pointer", kBad, mm_with([](Ops& o) { o.y.data = nullptr; })},
      {"null pointer", "bias given with null data", "mm", inv, "bias: null data pointer", kBad,
       mm_with([](Ops& o) { o.bias = true, o.b.data = nullptr; })},
      // ---- misaligned pointers
      {"misaligned pointer", "X at an odd address (bf16)", "mm", inv, "x: data pointer is not aligned to its element size (2 bytes)", kBad,
       mm_with([](Ops& o) { o.x.data = addr(X + 1); })},
      {"misaligned pointer", "W at an odd address", "mm", inv, "w: data pointer is not aligned", "", mm_with([](Ops& o) { o.w.data = addr(W + 1); })},
      {"misaligned pointer", "fp32 Y at a 2-byte boundary", "mm", inv, "y: data pointer is not aligned to its element size (4 bytes)", "",
       mm_with([](Ops& o) { o.y.dtype = DType::fp32, o.y.data = addr(Y + 2); })},
      {"misaligned pointer", "bias at an odd address", "mm", inv, "bias: data pointer is not aligned", kBad,
       mm_with([](Ops& o) { o.bias = true, o.b.data = addr(B + 1); })},
      // ---- negative sizes
      {"negative size", "X rows (M) = -1", "mm", inv, "x.rows = -1 is negative", kBad, mm_with([](Ops& o) { o.x.rows = -1; })},
      {"negative size", "X cols (K) = -5", "mm", inv, "x.cols = -5 is negative", kBad, mm_with([](Ops& o) { o.x.cols = -5; })},
      {"negative size", "W rows (N) = -1", "mm", inv, "w.rows = -1 is negative", "", mm_with([](Ops& o) { o.w.rows = -1; })},
      {"negative size", "Y cols = -1", "mm", inv, "y.cols = -1 is negative", "", mm_with([](Ops& o) { o.y.cols = -1; })},
      {"negative size", "bias size = -1", "mm", inv, "bias.size = -1 differs from w.rows = 32 (N)", "",
       mm_with([](Ops& o) { o.bias = true, o.b.size = -1; })},
      // ---- overflow of M·K, N·K, M·N byte spans
      {"overflow (M·K)", "X of 2^40 rows, ld = 2^30 (M·K·2 bytes > 2^63)", "mm", inv,
       "x: rows*ld*elem_size overflows the address space (rows = 1099511627776, ld = 1073741824)", kBad,
       mm_with([&](Ops& o) { o.x.rows = big, o.x.cols = k30, o.x.ld = k30, o.w.cols = k30, o.w.ld = k30, o.y.rows = big; })},
      {"overflow (N·K)", "W of 2^40 rows, ld = 2^30", "mm", inv, "w: rows*ld*elem_size overflows the address space (rows = 1099511627776, ld = 1073741824)", "",
       mm_with([&](Ops& o) { o.w.rows = big, o.w.cols = k30, o.w.ld = k30, o.x.cols = k30, o.x.ld = k30, o.y.cols = big, o.y.ld = big; })},
      {"overflow (M·N)", "Y of 2^40 rows, ld = 2^30", "mm", inv, "y: rows*ld*elem_size overflows the address space (rows = 1099511627776, ld = 1073741824)", kBad,
       mm_with([&](Ops& o) { o.x.rows = big, o.y.rows = big, o.y.ld = k30; })},
      {"overflow (address)", "X whose span runs past the top of the address space", "mm", inv, "x: rows*ld*elem_size overflows the address space (rows = 64, ld = 128)", "",
       mm_with([](Ops& o) { o.x.data = addr(UINTPTR_MAX - 1023); })},
      // ---- leading dimensions
      {"leading dimension too small", "ldx = 100 < K = 128", "mm", inv, "x.ld = 100 < x.cols = 128 (leading dimension must be >= the row length and >= 1)", kBad,
       mm_with([](Ops& o) { o.x.ld = 100; })},
      {"leading dimension too small", "ldw = 127 < K", "mm", inv, "w.ld = 127 < w.cols = 128", "", mm_with([](Ops& o) { o.w.ld = 127; })},
      {"leading dimension too small", "ldy = 16 < N = 32", "mm", inv, "y.ld = 16 < y.cols = 32", kBad, mm_with([](Ops& o) { o.y.ld = 16; })},
      {"leading dimension too small", "ld = 0 for an empty matrix", "mm", inv, "x.ld = 0 < x.cols = 0", "",
       mm_with([](Ops& o) { o.x.cols = 0, o.x.ld = 0, o.w.cols = 0; })},
      // ---- dtypes
      {"unsupported dtype", "fp32 X and W", "mm", inv, "x.dtype = fp32 not supported (X and W must be bf16 or fp16)", kBad,
       mm_with([](Ops& o) { o.x.dtype = o.w.dtype = DType::fp32; })},
      {"unsupported dtype", "dtype value 7 (not a DType)", "mm", inv, "y.dtype = 7 is not a dtype", kBad, mm_with([](Ops& o) { o.y.dtype = DType(7); })},
      {"unsupported dtype", "X bf16, W fp16", "mm", inv, "w.dtype = fp16 differs from x.dtype = bf16", kBad, mm_with([](Ops& o) { o.w.dtype = DType::fp16; })},
      {"unsupported dtype", "fp16 bias with bf16 inputs", "mm", inv, "bias.dtype = fp16 must be the input dtype (bf16) or fp32", kBad,
       mm_with([](Ops& o) { o.bias = true, o.b.dtype = DType::fp16; })},
      {"unsupported dtype", "bias dtype value 9", "mm", inv, "bias.dtype = ? must be the input dtype (bf16) or fp32", "",
       mm_with([](Ops& o) { o.bias = true, o.b.dtype = DType(9); })},
      // ---- shapes that do not agree
      {"shape mismatch", "X K = 128, W K = 127", "mm", inv, "x.cols = 128 (K) differs from w.cols = 127", kBad,
       mm_with([](Ops& o) { o.w.cols = 127, o.w.ld = 127; })},
      {"shape mismatch", "Y rows != M", "mm", inv, "y.rows = 63 differs from x.rows = 64 (M)", kBad, mm_with([](Ops& o) { o.y.rows = 63; })},
      {"shape mismatch", "Y cols != N", "mm", inv, "y.cols = 31 differs from w.rows = 32 (N)", kBad, mm_with([](Ops& o) { o.y.cols = 31; })},
      {"shape mismatch", "bias size != N", "mm", inv, "bias.size = 31 differs from w.rows = 32 (N)", kBad,
       mm_with([](Ops& o) { o.bias = true, o.b.size = 31; })},
      // ---- aliasing
      {"output aliases an input", "Y inside X", "mm", inv, "y overlaps x: the output must not alias an input", kBad, mm_with([](Ops& o) { o.y.data = addr(X + 64); })},
      {"output aliases an input", "Y inside W", "mm", inv, "y overlaps w: the output must not alias an input", "", mm_with([](Ops& o) { o.y.data = addr(W); })},
      {"output aliases an input", "bias inside Y", "mm", inv, "y overlaps bias: the output must not alias an input", kBad,
       mm_with([](Ops& o) { o.bias = true, o.b.data = addr(Y + 128); })},
      // ---- kernels
      {"unknown kernel name", "explain --kernel / make_plan(forced) with a name no backend registers", "Dispatcher::make_plan", inv,
       "unknown kernel 'sm90_nonexistent' (see `tgemm kernels`)", "Plan.ForcedUnknownKernelIsAnError",
       [&] {
         Problem p;
         p.m = 16, p.n = 6144, p.k = 1280, p.ldx = 1280, p.ldw = 1280, p.ldy = 6144;
         return d->make_plan(p, DeviceInfo{}, "sm90_nonexistent").status;
       }},
      {"unknown kernel name", "a tuned-table row naming a kernel this build does not have", "Dispatcher::load_tables", parse,
       "tgemm_bad_inputs_unknown_kernel.csv:2:", "Table.UnknownKernelRejectedWithLine", [&] { return d->load_tables({unknown_kernel}); }},
      {"kernel cannot run the problem", "run_kernel(cuBLASLt) with K = 0", "Dispatcher::run_kernel", StatusCode::not_supported,
       "K = 0 not supported", "",
       [&] {
         MatrixView x{addr(X), 64, 0, 1, DType::bf16}, w{addr(W), 32, 0, 1, DType::bf16};
         return d->run_kernel(*Registry::get().cublaslt(), x, w, nullptr, y0, nullptr);
       }},
      {"plan does not match the operands", "run_plan with a plan made for another problem", "Dispatcher::run_plan", inv,
       "run_plan: the operands do not match the plan's problem", "",
       [&] {
         Problem p;
         p.m = 65, p.n = 32, p.k = 128, p.ldx = 128, p.ldw = 128, p.ldy = 32;
         return d->run_plan(d->make_plan(p, DeviceInfo{}), x0, w0, nullptr, y0, nullptr);
       }},
      // ---- malformed tuned tables (TunedTable::load_text, what load_tables and TGEMM_CONFIG use)
      {"malformed table", "empty file", "tuned table", parse, "t.csv:1:1: empty file: expected a header line", "Table.MalformedFilesNameFileLineColumn",
       [] { return table_text(""); }},
      {"malformed table", "header without column M", "tuned table", parse, "t.csv:1:1: missing column 'M'", "Table.MalformedFilesNameFileLineColumn",
       [] { return table_text("gfx,cu_num\n"); }},
      {"malformed table", "unknown column", "tuned table", parse, "unknown column 'extra'", "Table.MalformedFilesNameFileLineColumn",
       [] { return table_text(std::string(kHeader).insert(std::string(kHeader).size() - 1, ",extra")); }},
      {"malformed table", "duplicate column", "tuned table", parse, "duplicate column 'M'", "",
       [] { return table_text(std::string(kHeader).insert(std::string(kHeader).size() - 1, ",M")); }},
      {"malformed table", "row with 13 of 18 fields", "tuned table", parse, "t.csv:2:", "Table.MalformedFilesNameFileLineColumn",
       [] { return table_text(std::string(kHeader) + "sm90,132,8192,6144,1280,True,torch.bfloat16,torch.bfloat16,False,False,cublaslt,0,1\n"); }},
      {"malformed table", "row with an extra field", "tuned table", parse, "expected 18 fields, found 19", "",
       [] { return table_text(std::string(kHeader) + std::string(kRow).insert(std::string(kRow).size() - 1, ",7")); }},
      {"malformed table", "M not an integer", "tuned table", parse, "t.csv:2:10: M: 'abc' is not an integer", "Table.MalformedFilesNameFileLineColumn",
       [] { return table_text(std::string(kHeader) + row_with(2, "abc")); }},
      {"malformed table", "M beyond int64", "tuned table", parse, "M: '99999999999999999999' is not an integer in range", "Table.MalformedFilesNameFileLineColumn",
       [] { return table_text(std::string(kHeader) + row_with(2, "99999999999999999999")); }},
      {"malformed table", "M = 0", "tuned table", parse, "M: 0 < 1", "Table.MalformedFilesNameFileLineColumn",
       [] { return table_text(std::string(kHeader) + row_with(2, "0")); }},
      {"malformed table", "negative K", "tuned table", parse, "K: -1 < 0", "", [] { return table_text(std::string(kHeader) + row_with(4, "-1")); }},
      {"malformed table", "bias neither True nor False", "tuned table", parse, "bias: 'Maybe' is not True or False", "Table.MalformedFilesNameFileLineColumn",
       [] { return table_text(std::string(kHeader) + row_with(5, "Maybe")); }},
      {"malformed table", "dtype torch.int8", "tuned table", parse, "dtype: 'torch.int8' is not torch.bfloat16, torch.float16 or torch.float32",
       "Table.MalformedFilesNameFileLineColumn", [] { return table_text(std::string(kHeader) + row_with(6, "torch.int8")); }},
      {"malformed table", "us not a number", "tuned table", parse, "us: 'fast' is not a number", "Table.MalformedFilesNameFileLineColumn",
       [] { return table_text(std::string(kHeader) + row_with(13, "fast")); }},
      {"malformed table", "us = nan", "tuned table", parse, "us: 'nan' is not a number", "", [] { return table_text(std::string(kHeader) + row_with(13, "nan")); }},
      {"malformed table", "cu_num = 999999", "tuned table", parse, "cu_num: 999999 is not a plausible SM count", "",
       [] { return table_text(std::string(kHeader) + row_with(1, "999999")); }},
      {"malformed table", "empty gfx", "tuned table", parse, "t.csv:2:1: gfx: empty", "", [] { return table_text(std::string(kHeader) + row_with(0, "")); }},
      {"malformed table", "libtype cudnn", "tuned table", parse, "libtype: 'cudnn' is not sm90, skinny, cublaslt or reference",
       "Table.MalformedFilesNameFileLineColumn", [] { return table_text(std::string(kHeader) + row_with(10, "cudnn")); }},
      {"malformed table", "kernel of another libtype (cublaslt under skinny)", "tuned table", parse,
       "kernelName: 'cublaslt' is not a skinny kernel in this build", "", [] { return table_text(std::string(kHeader) + row_with(10, "skinny")); }},
      {"malformed table", "a good row, then one with us = 'fast': nothing is merged", "Dispatcher::load_tables", parse, "tgemm_bad_inputs_malformed.csv:3:", "Tables.MergedConfigLowestUsWins",
       [&] { return d->load_tables({malformed}); }},
      // ---- malformed untuned-shape files
      {"malformed shapes file", "row with 7 of 8 fields", "parse_shapes", parse, "u.csv:2:", "Shapes.ReadSuiteFiles",
       [] {
         std::vector<Shape> s;
         return parse_shapes("M,N,K,bias,dtype,outdtype,scaleAB,bpreshuffle\n1,2,3,True,torch.bfloat16,torch.bfloat16,False\n", "u.csv", &s);
       }},
      {"malformed shapes file", "tuned-table header where shapes are expected", "parse_shapes", parse, "u.csv:1:1: unknown column 'gfx'", "",
       [] {
         std::vector<Shape> s;
         return parse_shapes(kHeader, "u.csv", &s);
       }},
      // ---- unreadable files
      {"unreadable file", "tuned table that does not exist", "Dispatcher::load_tables / TGEMM_CONFIG", io,
       "cannot read tuned table '/nonexistent/tgemm/t.csv'", "Table.UnreadableFile", [&] { return d->load_tables({"/nonexistent/tgemm/t.csv"}); }},
      {"unreadable file", "tuned table that is a directory", "Dispatcher::create", io, "cannot read tuned table '/'", "",
       [&] {
         DispatcherOptions bad;
         bad.table_paths = {"/"};
         std::unique_ptr<Dispatcher> e;
         return Dispatcher::create(bad, &e);
       }},
      {"unreadable file", "shapes file that does not exist", "read_shapes (tune -i, bench -i)", io, "cannot read shapes file '/nonexistent/tgemm/u.csv'", "",
       [] {
         std::vector<Shape> s;
         return read_shapes("/nonexistent/tgemm/u.csv", &s);
       }},
      {"unwritable file", "tuned table saved into a missing directory", "TunedTable::save (tune -o)", io, "cannot write '/nonexistent/tgemm/t.csv.tmp'", "",
       [] { return TunedTable().save("/nonexistent/tgemm/t.csv"); }},
  };

  for (Entry& c : cases) {
    Status s = c.run();
    c.message = s.message();
    EXPECT_EQ(s.code(), c.code) << c.category << " / " << c.input << ": " << s.to_string();
    EXPECT_NE(s.message().find(c.expect), std::string::npos) << c.category << " / " << c.input << ": got '" << s.message() << "'";
  }
  EXPECT_EQ(d->plan_cache_size(), 0u) << "nothing is planned for rejected input";
  std::filesystem::remove(malformed);
  std::filesystem::remove(unknown_kernel);

  if (const char* out = std::getenv("TGEMM_BAD_INPUTS_OUT"); out && *out) {
    std::ofstream f(out);
    f << "| # | category | input | rejected by | status | exact message | tests |\n| --- | --- | --- | --- | --- | --- | --- |\n";
    int i = 0;
    for (const Entry& c : cases) {
      std::string tests = "`BadInputCatalogue.EveryRejectionHasItsExactMessage`";
      if (!c.also.empty()) tests += ", `" + c.also + "`";
      f << "| " << ++i << " | " << c.category << " | " << md_escape(c.input) << " | `" << c.api << "` | " << status_code_name(c.code)
        << " | `` " << md_escape(c.message) << " `` | " << tests << " |\n";
    }
    ASSERT_TRUE(f.good()) << "cannot write " << out;
  }
}

// A CUDA runtime result becomes a Status in one place (core/cuda_status.h): success is Ok, an error names what failed
// and carries the runtime's message (no GPU needed: cudaGetErrorString is host code).
TEST(CudaStatus, SuccessIsOkAndAnErrorNamesWhatFailed) {
  EXPECT_TRUE(cuda_status(cudaSuccess, "anything").ok());
  const Status s = cuda_status(cudaErrorInvalidValue, "workspace cudaMalloc");
  EXPECT_EQ(s.code(), StatusCode::cuda_error);
  EXPECT_EQ(s.message(), std::string("workspace cudaMalloc: ") + cudaGetErrorString(cudaErrorInvalidValue));
}

}  // namespace
}  // namespace tgemm
