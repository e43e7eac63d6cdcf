// Links against the installed library and plans the seed's shape (no GPU needed).
#include <tgemm/tgemm.h>

#include <cstdio>

int main() {
  tgemm::Problem p;
  p.m = 768000, p.n = 6144, p.k = 1280, p.ldx = 1280, p.ldw = 1280, p.ldy = 6144, p.has_bias = true;
  tgemm::Plan plan = tgemm::Dispatcher::global().make_plan(p, tgemm::DeviceInfo{});
  std::printf("%s", plan.to_string().c_str());
  tgemm::MatrixView x{nullptr, 2, 3, 2, tgemm::DType::bf16};  // ld < cols: rejected, nothing launched
  tgemm::MatrixView w{nullptr, 4, 3, 3, tgemm::DType::bf16};
  tgemm::MatrixView y{nullptr, 2, 4, 4, tgemm::DType::bf16};
  tgemm::Status s = tgemm::mm(x, w, nullptr, y);
  std::printf("bad input: %s\n", s.to_string().c_str());
  return plan.status.ok() && !s.ok() ? 0 : 1;
}
