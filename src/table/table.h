// Tuned tables in AITER's bf16 tuned-GEMM CSV format, and untuned-shape lists.
//
//   gfx,cu_num,M,N,K,bias,dtype,outdtype,scaleAB,bpreshuffle,libtype,solidx,splitK,us,kernelName,err_ratio,tflops,bw
#pragma once

#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "tgemm/kernel.h"
#include "tgemm/types.h"

namespace tgemm {

// The shape part of a table key (and one row of an untuned-shapes CSV).
struct Shape {
  int64_t m = 0, n = 0, k = 0;
  bool bias = false;
  DType dtype = DType::bf16, outdtype = DType::bf16;
  bool scale_ab = false, bpreshuffle = false;
  auto tie() const { return std::tie(m, n, k, bias, dtype, outdtype, scale_ab, bpreshuffle); }
  bool operator<(const Shape& o) const { return tie() < o.tie(); }
  bool operator==(const Shape& o) const { return tie() == o.tie(); }
};

struct TableRow {
  std::string gfx = "sm90";
  int cu_num = 132;
  Shape shape;
  std::string libtype;
  int64_t solidx = 0;
  int64_t split_k = 1;
  double us = 0;
  std::string kernel_name;
  double err_ratio = 0, tflops = 0, bw = 0;
  // Where it came from (for explain and merge notes).
  std::string file;
  int line = 0;
};

// AITER's getPaddedM. level 0: round M up to 16 (M <= 256), 32 (<= 1024), 64 (<= 4096), else 128.
// level 1: 8192 if M > 8192 and N > 4096, else the next power of two.
int64_t padded_m(int64_t m, int64_t n, int level);

struct LoadStats {
  int rows = 0;             // rows kept
  int other_arch = 0;       // rows for other archs, skipped
  std::vector<std::string> notes;  // merge decisions ("key ... in a.csv:3 and b.csv:7, kept b.csv:7 (12.1 us < 13.0 us)")
};

class TunedTable {
 public:
  using KernelKnown = std::function<bool(const std::string& kernel_name, const std::string& libtype)>;
  // Parses `path` and merges its rows in. Rows whose gfx is not an NVIDIA arch this build targets are
  // counted and skipped; a row naming a kernel `known` rejects is an error with file and line. Nothing is
  // merged from a file that has any error.
  Status load(const std::string& path, const KernelKnown& known, LoadStats* stats);
  Status load_text(const std::string& text, const std::string& name, const KernelKnown& known, LoadStats* stats);
  // Adds (or replaces, if faster) one row. Returns a note when a row was replaced or kept.
  std::string merge(const TableRow& row);
  // Adds or replaces the row of its key, whatever its time (a retuned shape).
  void put(const TableRow& row);
  Status save(const std::string& path) const;

  // Exact M, then padded M level 0, then level 1. `how` says which (or why none); `closeness`, if given, gets 0 for an
  // exact hit, 1 and 2 for the padded levels, 3 for none (the dispatcher ranks two tables' hits by it).
  const TableRow* lookup(const std::string& gfx, int cu_num, const Shape& s, std::string* how, int* closeness = nullptr) const;
  const TableRow* find(const std::string& gfx, int cu_num, const Shape& s) const;
  size_t size() const { return rows_.size(); }
  std::vector<TableRow> rows() const;

  static const char* header();
  static std::string format_row(const TableRow& r);

 private:
  using Key = std::tuple<std::string, int, Shape>;
  std::map<Key, TableRow> rows_;
};

// Untuned shapes: M,N,K,bias,dtype,outdtype,scaleAB,bpreshuffle
Status read_shapes(const std::string& path, std::vector<Shape>* out);
Status parse_shapes(const std::string& text, const std::string& name, std::vector<Shape>* out);
std::string format_shape(const Shape& s);
const char* shapes_header();

bool read_file(const std::string& path, std::string* text);

// Tables timed with plain launches, for launches outside a CUDA-graph capture (LaunchMode::eager), are told apart by
// their file name: it ends in "_eager.csv" (configs/sm90_132_bf16_eager.csv).
bool is_eager_table(const std::string& path);

}  // namespace tgemm
