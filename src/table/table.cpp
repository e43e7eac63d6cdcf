#include "table/table.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace tgemm {

namespace {

const char* kTableColumns[] = {"gfx", "cu_num", "M", "N", "K", "bias", "dtype", "outdtype", "scaleAB",
                               "bpreshuffle", "libtype", "solidx", "splitK", "us", "kernelName",
                               "err_ratio", "tflops", "bw"};
const char* kShapeColumns[] = {"M", "N", "K", "bias", "dtype", "outdtype", "scaleAB", "bpreshuffle"};

struct Field {
  std::string text;
  int column;  // 1-based character column where it starts
};

// One CSV line split on commas (the AITER tables never quote).
std::vector<Field> split_line(const std::string& line) {
  std::vector<Field> out;
  size_t start = 0;
  for (size_t i = 0; i <= line.size(); ++i) {
    if (i == line.size() || line[i] == ',') {
      out.push_back({line.substr(start, i - start), int(start) + 1});
      start = i + 1;
    }
  }
  return out;
}

// Parses a CSV with a named header into records; errors carry name:line:column.
class CsvReader {
 public:
  CsvReader(const std::string& text, std::string name) : name_(std::move(name)) {
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      std::string line = text.substr(start, end - start);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      lines_.push_back(std::move(line));
      start = end + 1;
    }
  }

  Status error(int line, int column, const std::string& msg) const {
    return {StatusCode::parse_error, name_ + ":" + std::to_string(line) + ":" + std::to_string(column) + ": " + msg};
  }

  // Maps each required column to its index in the header.
  template <size_t N>
  Status header(const char* const (&cols)[N], std::vector<int>* index) {
    if (lines_.empty() || lines_[0].empty()) return error(1, 1, "empty file: expected a header line");
    auto fields = split_line(lines_[0]);
    index->assign(N, -1);
    for (size_t f = 0; f < fields.size(); ++f) {
      bool found = false;
      for (size_t c = 0; c < N; ++c)
        if (fields[f].text == cols[c]) {
          if ((*index)[c] >= 0) return error(1, fields[f].column, "duplicate column '" + fields[f].text + "'");
          (*index)[c] = int(f);
          found = true;
        }
      if (!found) return error(1, fields[f].column, "unknown column '" + fields[f].text + "'");
    }
    for (size_t c = 0; c < N; ++c)
      if ((*index)[c] < 0) return error(1, 1, std::string("missing column '") + cols[c] + "'");
    ncols_ = fields.size();
    return Status::Ok();
  }

  size_t lines() const { return lines_.size(); }
  bool blank(size_t i) const { return lines_[i].find_first_not_of(" \t") == std::string::npos; }
  Status record(size_t i, std::vector<Field>* fields) const {
    *fields = split_line(lines_[i]);
    if (fields->size() != ncols_)
      return error(int(i) + 1, fields->size() > ncols_ ? fields->at(ncols_).column : int(lines_[i].size()) + 1,
                   "expected " + std::to_string(ncols_) + " fields, found " + std::to_string(fields->size()));
    return Status::Ok();
  }

 private:
  std::string name_;
  std::vector<std::string> lines_;
  size_t ncols_ = 0;
};

// Field parsers: each returns an error naming the column.
struct FieldParser {
  const CsvReader& csv;
  int line;

  Status i64(const Field& f, const char* col, int64_t lo, int64_t* out) const {
    const std::string& s = f.text;
    if (s.empty() || s.find_first_not_of("0123456789-+") != std::string::npos)
      return csv.error(line, f.column, std::string(col) + ": '" + s + "' is not an integer");
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(s.c_str(), &end, 10);
    if (errno == ERANGE || end != s.c_str() + s.size())
      return csv.error(line, f.column, std::string(col) + ": '" + s + "' is not an integer in range");
    if (v < lo) return csv.error(line, f.column, std::string(col) + ": " + s + " < " + std::to_string(lo));
    *out = v;
    return Status::Ok();
  }
  Status f64(const Field& f, const char* col, double* out) const {
    const std::string& s = f.text;
    char* end = nullptr;
    errno = 0;
    double v = s.empty() ? 0 : std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size() || std::isnan(v))
      return csv.error(line, f.column, std::string(col) + ": '" + s + "' is not a number");
    *out = v;
    return Status::Ok();
  }
  Status boolean(const Field& f, const char* col, bool* out) const {
    const std::string& s = f.text;
    if (s == "True" || s == "true" || s == "1") *out = true;
    else if (s == "False" || s == "false" || s == "0") *out = false;
    else return csv.error(line, f.column, std::string(col) + ": '" + s + "' is not True or False");
    return Status::Ok();
  }
  Status dtype(const Field& f, const char* col, DType* out) const {
    if (!parse_dtype(f.text, out))
      return csv.error(line, f.column, std::string(col) + ": '" + f.text + "' is not torch.bfloat16, torch.float16 or torch.float32");
    return Status::Ok();
  }
};

// The 8 shape columns, at positions idx[0..7] within `fields`.
Status parse_shape(const FieldParser& fp, const std::vector<Field>& fields, const int* idx, Shape* s) {
  Status st;
  if (!(st = fp.i64(fields[idx[0]], "M", 1, &s->m)).ok()) return st;
  if (!(st = fp.i64(fields[idx[1]], "N", 1, &s->n)).ok()) return st;
  if (!(st = fp.i64(fields[idx[2]], "K", 0, &s->k)).ok()) return st;
  if (!(st = fp.boolean(fields[idx[3]], "bias", &s->bias)).ok()) return st;
  if (!(st = fp.dtype(fields[idx[4]], "dtype", &s->dtype)).ok()) return st;
  if (!(st = fp.dtype(fields[idx[5]], "outdtype", &s->outdtype)).ok()) return st;
  if (!(st = fp.boolean(fields[idx[6]], "scaleAB", &s->scale_ab)).ok()) return st;
  return fp.boolean(fields[idx[7]], "bpreshuffle", &s->bpreshuffle);
}

const char* py_bool(bool b) { return b ? "True" : "False"; }

std::string fmt_double(double v, int prec) {
  char buf[400];  // "%.4f" of the largest double is 316 characters; a smaller buffer truncated the number
  std::snprintf(buf, sizeof buf, "%.*f", prec, v);
  return buf;
}

}  // namespace

bool read_file(const std::string& path, std::string* text) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return false;  // opens, reads as empty: not a file
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return false;
  std::string out;
  char buf[65536];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, f)) > 0) out.append(buf, got);
  bool ok = !std::ferror(f);
  std::fclose(f);
  if (ok) *text = std::move(out);
  return ok;
}

int64_t padded_m(int64_t m, int64_t n, int level) {
  // Saturating: an M within `to` of INT64_MAX (no real problem, but a table or explain may name it) keeps its value.
  auto round_up = [](int64_t v, int64_t to) { return v > INT64_MAX - (to - 1) ? v : (v + (to - 1)) / to * to; };
  if (level == 0) {
    if (m <= 256) return round_up(m, 16);
    if (m <= 1024) return round_up(m, 32);
    if (m <= 4096) return round_up(m, 64);
    return round_up(m, 128);
  }
  if (m > 8192 && n > 4096) return 8192;
  int64_t p = 1;
  while (p < m && p < (int64_t(1) << 62)) p <<= 1;
  return p;
}

const char* TunedTable::header() {
  return "gfx,cu_num,M,N,K,bias,dtype,outdtype,scaleAB,bpreshuffle,libtype,solidx,splitK,us,kernelName,err_ratio,tflops,bw";
}

std::string TunedTable::format_row(const TableRow& r) {
  return r.gfx + "," + std::to_string(r.cu_num) + "," + format_shape(r.shape) + "," + r.libtype + "," +
         std::to_string(r.solidx) + "," + std::to_string(r.split_k) + "," + fmt_double(r.us, 4) + "," +
         r.kernel_name + "," + fmt_double(r.err_ratio, 4) + "," + fmt_double(r.tflops, 2) + "," + fmt_double(r.bw, 2);
}

Status TunedTable::load(const std::string& path, const KernelKnown& known, LoadStats* stats) {
  std::string text;
  if (!read_file(path, &text)) return {StatusCode::io_error, "cannot read tuned table '" + path + "'"};
  return load_text(text, path, known, stats);
}

Status TunedTable::load_text(const std::string& text, const std::string& name, const KernelKnown& known,
                             LoadStats* stats) {
  CsvReader csv(text, name);
  std::vector<int> idx;
  if (Status s = csv.header(kTableColumns, &idx); !s.ok()) return s;
  std::vector<TableRow> parsed;
  LoadStats local;
  for (size_t i = 1; i < csv.lines(); ++i) {
    if (csv.blank(i)) continue;
    std::vector<Field> f;
    if (Status s = csv.record(i, &f); !s.ok()) return s;
    FieldParser fp{csv, int(i) + 1};
    TableRow r;
    r.file = name;
    r.line = int(i) + 1;
    r.gfx = f[idx[0]].text;
    if (r.gfx.empty()) return csv.error(r.line, f[idx[0]].column, "gfx: empty");
    int64_t cu = 0;
    Status st;
    if (!(st = fp.i64(f[idx[1]], "cu_num", 1, &cu)).ok()) return st;
    if (cu > 100000) return csv.error(r.line, f[idx[1]].column, "cu_num: " + std::to_string(cu) + " is not a plausible SM count");
    r.cu_num = int(cu);
    if (!(st = parse_shape(fp, f, &idx[2], &r.shape)).ok()) return st;
    r.libtype = f[idx[10]].text;
    if (!(st = fp.i64(f[idx[11]], "solidx", INT64_MIN, &r.solidx)).ok()) return st;
    if (!(st = fp.i64(f[idx[12]], "splitK", 0, &r.split_k)).ok()) return st;
    if (!(st = fp.f64(f[idx[13]], "us", &r.us)).ok()) return st;
    r.kernel_name = f[idx[14]].text;
    if (!(st = fp.f64(f[idx[15]], "err_ratio", &r.err_ratio)).ok()) return st;
    if (!(st = fp.f64(f[idx[16]], "tflops", &r.tflops)).ok()) return st;
    if (!(st = fp.f64(f[idx[17]], "bw", &r.bw)).ok()) return st;
    // AMD (gfx*) and other archs' rows are legal in the format; this build only runs NVIDIA sm_* rows.
    if (r.gfx.rfind("sm", 0) != 0) {
      ++local.other_arch;
      continue;
    }
    Backend b;
    if (!parse_backend(r.libtype, &b))
      return csv.error(r.line, f[idx[10]].column, "libtype: '" + r.libtype + "' is not sm90, skinny, cublaslt or reference");
    if (known && !known(r.kernel_name, r.libtype))
      return csv.error(r.line, f[idx[14]].column,
                       "kernelName: '" + r.kernel_name + "' is not a " + r.libtype + " kernel in this build (see `tgemm kernels`)");
    parsed.push_back(std::move(r));
  }
  for (const TableRow& r : parsed) {
    std::string note = merge(r);
    if (!note.empty()) local.notes.push_back(note);
  }
  local.rows = int(parsed.size());
  if (stats) {
    stats->rows += local.rows;
    stats->other_arch += local.other_arch;
    stats->notes.insert(stats->notes.end(), local.notes.begin(), local.notes.end());
  }
  return Status::Ok();
}

std::string TunedTable::merge(const TableRow& row) {
  Key key{row.gfx, row.cu_num, row.shape};
  auto it = rows_.find(key);
  if (it == rows_.end()) {
    rows_.emplace(key, row);
    return "";
  }
  const TableRow& old = it->second;
  std::string where_old = old.file + ":" + std::to_string(old.line), where_new = row.file + ":" + std::to_string(row.line);
  std::string what = "M=" + std::to_string(row.shape.m) + " N=" + std::to_string(row.shape.n) + " K=" +
                     std::to_string(row.shape.k) + " in " + where_old + " and " + where_new + ": kept ";
  if (row.us < old.us) {
    std::string note = what + where_new + " (" + fmt_double(row.us, 2) + " us < " + fmt_double(old.us, 2) + " us)";
    it->second = row;
    return note;
  }
  return what + where_old + " (" + fmt_double(old.us, 2) + " us <= " + fmt_double(row.us, 2) + " us)";
}

void TunedTable::put(const TableRow& row) { rows_[Key{row.gfx, row.cu_num, row.shape}] = row; }

Status TunedTable::save(const std::string& path) const {
  // Written to a temporary file and renamed, so an interrupted save never leaves a partial table.
  std::string tmp = path + ".tmp";
  {
    FILE* f = std::fopen(tmp.c_str(), "w");
    if (!f) return {StatusCode::io_error, "cannot write '" + tmp + "'"};
    std::string text = std::string(header()) + "\n";
    for (const auto& [key, row] : rows_) text += format_row(row) + "\n";
    bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    ok = (std::fclose(f) == 0) && ok;
    if (!ok) return {StatusCode::io_error, "write to '" + tmp + "' failed"};
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return {StatusCode::io_error, "cannot rename '" + tmp + "' to '" + path + "'"};
  return Status::Ok();
}

const TableRow* TunedTable::find(const std::string& gfx, int cu_num, const Shape& s) const {
  auto it = rows_.find(Key{gfx, cu_num, s});
  return it == rows_.end() ? nullptr : &it->second;
}

const TableRow* TunedTable::lookup(const std::string& gfx, int cu_num, const Shape& s, std::string* how, int* closeness) const {
  std::string h;
  int c = 0;
  const TableRow* r = find(gfx, cu_num, s);
  if (r) {
    h = "exact M=" + std::to_string(s.m) + " hit";
  } else {
    h = "exact M=" + std::to_string(s.m) + " miss";
    for (int level = 0; level < 2 && !r; ++level) {
      Shape q = s;
      q.m = padded_m(s.m, s.n, level);
      r = find(gfx, cu_num, q);
      c = level + 1;
      h += "; padded M level " + std::to_string(level) + " = " + std::to_string(q.m) + (r ? " hit" : " miss");
    }
  }
  if (how) *how = h;
  if (closeness) *closeness = r ? c : 3;
  return r;
}

std::vector<TableRow> TunedTable::rows() const {
  std::vector<TableRow> out;
  for (const auto& [k, r] : rows_) out.push_back(r);
  return out;
}

const char* shapes_header() { return "M,N,K,bias,dtype,outdtype,scaleAB,bpreshuffle"; }

std::string format_shape(const Shape& s) {
  return std::to_string(s.m) + "," + std::to_string(s.n) + "," + std::to_string(s.k) + "," + py_bool(s.bias) + "," +
         std::string(dtype_torch_name(s.dtype)) + "," + std::string(dtype_torch_name(s.outdtype)) + "," +
         py_bool(s.scale_ab) + "," + py_bool(s.bpreshuffle);
}

Status parse_shapes(const std::string& text, const std::string& name, std::vector<Shape>* out) {
  CsvReader csv(text, name);
  std::vector<int> idx;
  if (Status s = csv.header(kShapeColumns, &idx); !s.ok()) return s;
  std::vector<Shape> shapes;
  for (size_t i = 1; i < csv.lines(); ++i) {
    if (csv.blank(i)) continue;
    std::vector<Field> f;
    if (Status s = csv.record(i, &f); !s.ok()) return s;
    Shape s;
    if (Status st = parse_shape(FieldParser{csv, int(i) + 1}, f, idx.data(), &s); !st.ok()) return st;
    shapes.push_back(s);
  }
  out->insert(out->end(), shapes.begin(), shapes.end());
  return Status::Ok();
}

Status read_shapes(const std::string& path, std::vector<Shape>* out) {
  std::string text;
  if (!read_file(path, &text)) return {StatusCode::io_error, "cannot read shapes file '" + path + "'"};
  return parse_shapes(text, path, out);
}

bool is_eager_table(const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  static const std::string kSuffix = "_eager.csv";
  return name.size() >= kSuffix.size() && name.compare(name.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0;
}

}  // namespace tgemm
