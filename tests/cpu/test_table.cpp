// Tuned tables: round trip, merge, malformed files with file:line:column, other archs, unknown kernels, padded M.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "common/temp_path.h"
#include "table/table.h"

namespace tgemm {
namespace {

const char* kHeader = "gfx,cu_num,M,N,K,bias,dtype,outdtype,scaleAB,bpreshuffle,libtype,solidx,splitK,us,kernelName,err_ratio,tflops,bw\n";

std::string row(const std::string& gfx, int64_t m, double us, const std::string& kernel = "cublaslt", const std::string& lib = "cublaslt") {
  return gfx + ",132," + std::to_string(m) + ",6144,1280,True,torch.bfloat16,torch.bfloat16,False,False," + lib + ",0,1," +
         std::to_string(us) + "," + kernel + ",0.0,700.0,900.0\n";
}

bool known(const std::string& k, const std::string&) { return k == "cublaslt" || k == "cublaslt_h1"; }

std::string tmp(const std::string& name) { return tgemm::testing::temp_path("test_" + name); }

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(PaddedM, AiterLevels) {
  EXPECT_EQ(padded_m(1, 4096, 0), 16);
  EXPECT_EQ(padded_m(256, 4096, 0), 256);
  EXPECT_EQ(padded_m(257, 4096, 0), 288);
  EXPECT_EQ(padded_m(1024, 4096, 0), 1024);
  EXPECT_EQ(padded_m(1025, 4096, 0), 1088);
  EXPECT_EQ(padded_m(4097, 4096, 0), 4224);
  EXPECT_EQ(padded_m(768000, 6144, 0), 768000);
  EXPECT_EQ(padded_m(768000, 6144, 1), 8192);  // the seed's lookup
  EXPECT_EQ(padded_m(768000, 4096, 1), 1048576);
  EXPECT_EQ(padded_m(5000, 6144, 1), 8192);
  EXPECT_EQ(padded_m(9000, 1024, 1), 16384);
  EXPECT_EQ(padded_m(1, 1, 1), 1);
}

TEST(Table, RoundTrip) {
  TunedTable t;
  LoadStats st;
  ASSERT_TRUE(t.load_text(std::string(kHeader) + row("sm90", 8192, 123.5) + row("sm90", 16, 7.25, "cublaslt_h1"), "a.csv", known, &st).ok());
  EXPECT_EQ(st.rows, 2);
  std::string path = tmp("roundtrip.csv");
  ASSERT_TRUE(t.save(path).ok());
  TunedTable u;
  ASSERT_TRUE(u.load(path, known, nullptr).ok());
  ASSERT_EQ(u.size(), 2u);
  auto a = t.rows(), b = u.rows();
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(TunedTable::format_row(a[i]), TunedTable::format_row(b[i]));
    EXPECT_EQ(a[i].shape, b[i].shape);
    EXPECT_EQ(a[i].kernel_name, b[i].kernel_name);
  }
  std::remove(path.c_str());
}

TEST(Table, MergeKeepsLowestUsAndSaysSo) {
  TunedTable t;
  LoadStats st;
  ASSERT_TRUE(t.load_text(std::string(kHeader) + row("sm90", 8192, 130.0), "a.csv", known, &st).ok());
  ASSERT_TRUE(t.load_text(std::string(kHeader) + row("sm90", 8192, 120.0, "cublaslt_h1"), "b.csv", known, &st).ok());
  ASSERT_TRUE(t.load_text(std::string(kHeader) + row("sm90", 8192, 125.0), "c.csv", known, &st).ok());
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t.rows()[0].kernel_name, "cublaslt_h1");
  EXPECT_EQ(t.rows()[0].file, "b.csv");
  ASSERT_EQ(st.notes.size(), 2u);
  EXPECT_NE(st.notes[0].find("kept b.csv:2"), std::string::npos) << st.notes[0];
  EXPECT_NE(st.notes[1].find("kept b.csv:2"), std::string::npos) << st.notes[1];
}

TEST(Table, OtherArchRowsSkippedAndCounted) {
  TunedTable t;
  LoadStats st;
  ASSERT_TRUE(t.load_text(std::string(kHeader) + row("gfx950", 8192, 50.0, "flydsl_a16w16", "flydsl") + row("gfx942", 64, 5.0, "x", "hipblaslt") +
                              row("sm90", 8192, 120.0),
                          "mixed.csv", known, &st)
                  .ok());
  EXPECT_EQ(st.rows, 1);
  EXPECT_EQ(st.other_arch, 2);
  EXPECT_EQ(t.size(), 1u);
}

TEST(Table, UnknownKernelRejectedWithLine) {
  TunedTable t;
  LoadStats st;
  Status s = t.load_text(std::string(kHeader) + row("sm90", 8192, 120.0) + row("sm90", 16, 1.0, "sm90_nope"), "k.csv", known, &st);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::parse_error);
  EXPECT_NE(s.message().find("k.csv:3:"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("sm90_nope"), std::string::npos) << s.message();
  EXPECT_EQ(t.size(), 0u) << "nothing is merged from a file with an error";
}

struct Malformed {
  std::string text, where, what;
};

TEST(Table, MalformedFilesNameFileLineColumn) {
  std::string good = row("sm90", 8192, 120.0);
  std::vector<Malformed> cases = {
      {"", "m.csv:1:1", "empty file"},
      {"gfx,cu_num\n", "m.csv:1:1", "missing column 'M'"},
      {std::string(kHeader).substr(0, std::string(kHeader).size() - 1) + ",extra\n", "m.csv:1:", "unknown column 'extra'"},
      {std::string(kHeader) + "sm90,132,abc,6144,1280,True,torch.bfloat16,torch.bfloat16,False,False,cublaslt,0,1,1.0,cublaslt,0,1,1\n", "m.csv:2:10", "M: 'abc'"},
      {std::string(kHeader) + "sm90,132,8192,6144,1280,Maybe,torch.bfloat16,torch.bfloat16,False,False,cublaslt,0,1,1.0,cublaslt,0,1,1\n", "m.csv:2:", "bias: 'Maybe'"},
      {std::string(kHeader) + "sm90,132,8192,6144,1280,True,torch.int8,torch.bfloat16,False,False,cublaslt,0,1,1.0,cublaslt,0,1,1\n", "m.csv:2:", "dtype: 'torch.int8'"},
      {std::string(kHeader) + "sm90,132,8192,6144,1280,True,torch.bfloat16,torch.bfloat16,False,False,cublaslt,0,1\n", "m.csv:2:", "expected 18 fields, found 13"},
      {std::string(kHeader) + good + "sm90,132,8192,6144,1280,True,torch.bfloat16,torch.bfloat16,False,False,cublaslt,0,1,fast,cublaslt,0,1,1\n", "m.csv:3:", "us: 'fast'"},
      {std::string(kHeader) + "sm90,132,99999999999999999999,6144,1280,True,torch.bfloat16,torch.bfloat16,False,False,cublaslt,0,1,1,cublaslt,0,1,1\n", "m.csv:2:10", "not an integer in range"},
      {std::string(kHeader) + "sm90,132,0,6144,1280,True,torch.bfloat16,torch.bfloat16,False,False,cublaslt,0,1,1,cublaslt,0,1,1\n", "m.csv:2:10", "M: 0 < 1"},
      {std::string(kHeader) + "sm90,132,8,6144,1280,True,torch.bfloat16,torch.bfloat16,False,False,cudnn,0,1,1,cublaslt,0,1,1\n", "m.csv:2:", "libtype: 'cudnn'"},
  };
  for (const Malformed& c : cases) {
    TunedTable t;
    Status s = t.load_text(c.text, "m.csv", known, nullptr);
    ASSERT_FALSE(s.ok()) << c.what;
    EXPECT_EQ(s.code(), StatusCode::parse_error);
    EXPECT_NE(s.message().find(c.where), std::string::npos) << s.message() << " (want " << c.where << ")";
    EXPECT_NE(s.message().find(c.what), std::string::npos) << s.message() << " (want " << c.what << ")";
    EXPECT_EQ(t.size(), 0u);
  }
}

TEST(Table, UnreadableFile) {
  TunedTable t;
  Status s = t.load("/nonexistent/dir/t.csv", known, nullptr);
  EXPECT_EQ(s.code(), StatusCode::io_error);
  EXPECT_NE(s.message().find("/nonexistent/dir/t.csv"), std::string::npos);
}

TEST(Table, LookupExactThenPaddedLevels) {
  TunedTable t;
  ASSERT_TRUE(t.load_text(std::string(kHeader) + row("sm90", 8192, 120.0) + row("sm90", 352, 10.0), "a.csv", known, nullptr).ok());
  Shape s{8192, 6144, 1280, true, DType::bf16, DType::bf16, false, false};
  std::string how;
  ASSERT_NE(t.lookup("sm90", 132, s, &how), nullptr);
  EXPECT_EQ(how, "exact M=8192 hit");
  s.m = 340;  // level 0: 352
  const TableRow* r = t.lookup("sm90", 132, s, &how);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->shape.m, 352);
  EXPECT_NE(how.find("padded M level 0 = 352 hit"), std::string::npos) << how;
  s.m = 768000;  // level 1: 8192, as AITER maps the seed's shape
  r = t.lookup("sm90", 132, s, &how);
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->shape.m, 8192);
  EXPECT_NE(how.find("padded M level 1 = 8192 hit"), std::string::npos) << how;
  EXPECT_EQ(t.lookup("sm90", 114, s, &how), nullptr) << "other SM counts do not match";
  s.bias = false;
  EXPECT_EQ(t.lookup("sm90", 132, s, &how), nullptr);
}

TEST(Shapes, ReadSuiteFiles) {
  std::vector<Shape> s;
  ASSERT_TRUE(read_shapes(std::string(TGEMM_SOURCE_DIR) + "/shapes/seed.csv", &s).ok());
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[2].m, 768000);
  EXPECT_TRUE(s[2].bias);
  std::vector<Shape> models;
  ASSERT_TRUE(read_shapes(std::string(TGEMM_SOURCE_DIR) + "/shapes/models.csv", &models).ok());
  EXPECT_EQ(models.size(), 240u);
  Status bad = parse_shapes("M,N,K,bias,dtype,outdtype,scaleAB,bpreshuffle\n1,2,3,True,torch.bfloat16,torch.bfloat16,False\n", "u.csv", &s);
  EXPECT_NE(bad.message().find("u.csv:2:"), std::string::npos) << bad.message();
}

}  // namespace
}  // namespace tgemm
