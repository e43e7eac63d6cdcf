// Fuzz target: the untuned-shape reader (parse_shapes), what `tgemm tune -i` and TGEMM_UNTUNED_LOG read.
//
// Properties beyond "no crash, no sanitizer report":
//  - a rejected file is a parse_error naming "<name>:<line>:<column>: " and appends nothing to the output;
//  - an accepted file appends its shapes after what the vector held, each with M, N >= 1 and K >= 0;
//  - format_shape's lines (what the untuned log writes) read back to the same shapes;
//  - padded_m is defined for every accepted M and N, and level 0 never pads below M.
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_check.h"
#include "table/table.h"

using namespace tgemm;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string name = "fuzz_shapes.csv";
  std::string text(reinterpret_cast<const char*>(data), size);
  const Shape sentinel{7, 7, 7, true, DType::fp16, DType::fp32, false, false};
  std::vector<Shape> out = {sentinel};
  Status s = parse_shapes(text, name, &out);
  if (!s.ok()) {
    FUZZ_CHECK(s.code() == StatusCode::parse_error, s.to_string());
    FUZZ_CHECK(s.message().rfind(name + ":", 0) == 0, "error without the file name: " + s.message());
    FUZZ_CHECK(out.size() == 1 && out[0] == sentinel, "a failed parse changed the output");
    return 0;
  }
  FUZZ_CHECK(!out.empty() && out[0] == sentinel, "parse_shapes replaced what the vector held");
  std::string again = std::string(shapes_header()) + "\n";
  for (size_t i = 1; i < out.size(); ++i) {
    const Shape& sh = out[i];
    FUZZ_CHECK(sh.m >= 1 && sh.n >= 1 && sh.k >= 0, "out-of-range shape accepted: " + format_shape(sh));
    for (int level = 0; level < 2; ++level) {
      int64_t pm = padded_m(sh.m, sh.n, level);
      FUZZ_CHECK(pm >= 1, "padded_m < 1 for " + format_shape(sh));
      if (level == 0) FUZZ_CHECK(pm >= sh.m, "padded_m level 0 below M for " + format_shape(sh));
    }
    again += format_shape(sh) + "\n";
  }
  std::vector<Shape> back;
  Status s2 = parse_shapes(again, "again.csv", &back);
  FUZZ_CHECK(s2.ok(), "format_shape output does not parse: " + s2.to_string());
  FUZZ_CHECK(back.size() + 1 == out.size(), "round trip changed the shape count");
  for (size_t i = 0; i < back.size(); ++i) FUZZ_CHECK(back[i] == out[i + 1], "round trip changed " + format_shape(out[i + 1]));
  return 0;
}
