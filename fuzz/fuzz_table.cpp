// Fuzz target: the tuned-table loader (TunedTable::load_text), as Dispatcher::load_tables calls it, with a
// `known` callback that accepts a fixed set of kernel names (each with its libtype, as the registry would).
//
// Properties checked on every input, beyond "no crash, no sanitizer report":
//  - a rejected file is a parse_error whose message starts "<name>:<line>:<column>: ", and nothing of it is merged;
//  - every kept row is for an sm* arch, has a known kernel of its libtype, and is found again by lookup();
//  - padded_m is defined for every M and N the loader accepts;
//  - save's format (header + format_row) reads back to the same keys, kernels and times (round trip);
//  - loading the same text twice keeps the row count (merge is idempotent on keys).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>

#include "fuzz_check.h"
#include "table/table.h"

namespace {

using namespace tgemm;

// What a real build registers, in kind: names of each backend, including ones for other dtypes.
const std::map<std::string, std::string>& known_kernels() {
  static const std::map<std::string, std::string> k = {
      {"cublaslt", "cublaslt"},
      {"cublaslt_h1", "cublaslt"},
      {"cublaslt_h7", "cublaslt"},
      {"sm90_bf16_128x256x64_s3_c2x1_i32", "sm90"},
      {"sm90_bf16_128x256x64_s4_c2x1_i64", "sm90"},
      {"sm90_fp16_128x128x64_s4_c1x1_ed_i64", "sm90"},
      {"skinny_bf16_m8_sk4_i64", "skinny"},
      {"skinny_fp16_m16_skauto_i64", "skinny"},
      {"skinny_bf16_m64_skauto_scalar_i64", "skinny"},
      {"reference_simt_64x64_i64", "reference"},
  };
  return k;
}

bool known(const std::string& name, const std::string& libtype) {
  auto it = known_kernels().find(name);
  return it != known_kernels().end() && it->second == libtype;
}

// "<name>:<line>:<column>: " with line, column >= 1.
bool has_location(const std::string& msg, const std::string& name) {
  if (msg.compare(0, name.size() + 1, name + ":") != 0) return false;
  size_t i = name.size() + 1;
  for (int part = 0; part < 2; ++part) {
    size_t start = i;
    while (i < msg.size() && msg[i] >= '0' && msg[i] <= '9') ++i;
    if (i == start || msg[start] == '0' || i >= msg.size() || msg[i] != ':') return false;
    ++i;
  }
  return i < msg.size() && msg[i] == ' ';
}

bool same_time(double a, double b, double abs_tol) {
  if (std::isinf(a) || std::isinf(b)) return a == b;
  return std::fabs(a - b) <= abs_tol + 1e-9 * std::fabs(a);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string name = "fuzz.csv";
  std::string text(reinterpret_cast<const char*>(data), size);
  TunedTable t;
  LoadStats st;
  Status s = t.load_text(text, name, known, &st);
  if (!s.ok()) {
    FUZZ_CHECK(s.code() == StatusCode::parse_error, s.to_string());
    FUZZ_CHECK(has_location(s.message(), name), "error without file:line:column: " + s.message());
    FUZZ_CHECK(t.size() == 0, "rows merged from a file with an error: " + s.message());
    FUZZ_CHECK(st.rows == 0 && st.other_arch == 0 && st.notes.empty(), "stats changed by a failed load");
    return 0;
  }
  FUZZ_CHECK(st.rows >= 0 && size_t(st.rows) >= t.size(), "rows kept < table size");
  for (const TableRow& r : t.rows()) {
    FUZZ_CHECK(r.gfx.rfind("sm", 0) == 0, "kept a row for arch " + r.gfx);
    FUZZ_CHECK(known(r.kernel_name, r.libtype), "kept unknown kernel " + r.kernel_name);
    FUZZ_CHECK(r.cu_num >= 1 && r.shape.m >= 1 && r.shape.n >= 1 && r.shape.k >= 0 && r.split_k >= 0, "out-of-range field kept");
    FUZZ_CHECK(!std::isnan(r.us) && !std::isnan(r.err_ratio) && !std::isnan(r.tflops) && !std::isnan(r.bw), "NaN kept");
    FUZZ_CHECK(r.file == name && r.line >= 2, "row without its origin");
    std::string how;
    const TableRow* hit = t.lookup(r.gfx, r.cu_num, r.shape, &how);
    FUZZ_CHECK(hit != nullptr && hit->kernel_name == r.kernel_name, "lookup misses a kept row: " + how);
    // The padded-M levels for this M and N (what a lookup of a nearby M computes).
    for (int level = 0; level < 2; ++level) {
      int64_t pm = padded_m(r.shape.m, r.shape.n, level);
      FUZZ_CHECK(pm >= 1, "padded_m < 1");
      if (level == 0) FUZZ_CHECK(pm >= r.shape.m, "padded_m level 0 < M");
    }
    Shape near = r.shape;
    near.m = r.shape.m > 1 ? r.shape.m - 1 : r.shape.m + 1;
    (void)t.lookup(r.gfx, r.cu_num, near, &how);
  }
  // Round trip through save's format.
  std::string saved = std::string(TunedTable::header()) + "\n";
  for (const TableRow& r : t.rows()) saved += TunedTable::format_row(r) + "\n";
  TunedTable u;
  Status s2 = u.load_text(saved, "roundtrip.csv", known, nullptr);
  FUZZ_CHECK(s2.ok(), "saved table does not load: " + s2.to_string() + "\n" + saved);
  FUZZ_CHECK(u.size() == t.size(), "round trip changed the row count");
  for (const TableRow& r : t.rows()) {
    const TableRow* b = u.find(r.gfx, r.cu_num, r.shape);
    FUZZ_CHECK(b != nullptr, "round trip lost key M=" + std::to_string(r.shape.m));
    FUZZ_CHECK(b->kernel_name == r.kernel_name && b->libtype == r.libtype && b->solidx == r.solidx && b->split_k == r.split_k,
               "round trip changed row " + TunedTable::format_row(r));
    FUZZ_CHECK(same_time(b->us, r.us, 5e-5), "round trip changed us: " + TunedTable::format_row(r) + " -> " + TunedTable::format_row(*b));
  }
  // Merging the same rows again keeps one row per key.
  size_t before = t.size();
  FUZZ_CHECK(t.load_text(text, name, known, nullptr).ok(), "second load of an accepted text failed");
  FUZZ_CHECK(t.size() == before, "second load changed the row count");
  return 0;
}
