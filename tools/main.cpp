// tgemm: explain, kernels, bench, tune, repro, check.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cli.h"

namespace {

const char* kUsage =
    "usage: tgemm <command> [args]\n"
    "  explain M N K [--bias] [--bias-dtype D] [--dtype bf16|fp16] [--out bf16|fp16|fp32] [--kernel NAME]\n"
    "                [--ldx N] [--ldw N] [--ldy N] [--arch sm90] [--sms 132] [--eager]\n"
    "                                            the dispatch decision, step by step; --eager: for a launch outside\n"
    "                                            a CUDA-graph capture (the \"_eager.csv\" tables first)\n"
    "  kernels                                   every registered kernel with its limits\n"
    "  bench [-i shapes.csv] [--warmup N] [--iters N] [--timing graph|plain|sustained] [--sustain-ms MS]\n"
    "        [--csv out.csv] [--kernel A,B] [--top-from profile.csv [--top 3]] [--no-ceilings] [--no-check]\n"
    "        [--shuffle-order] [--pairwise [--pair-repeats N]] [--settle-ms MS]\n"
    "                                            time mm per shape beside cuBLASLt, check against the reference;\n"
    "                                            --pairwise: other candidates 2-way against the pick, not in shared rounds\n"
    "                                            (--pair-repeats: each pair in N calls, their median); --settle-ms: the\n"
    "                                            GPU idles MS before every timing round\n"
    "                                            graph (default): CUDA-graph replays, plain: one launch per sample,\n"
    "                                            sustained: each sample MS (200) ms of one candidate back to back\n"
    "  tune -i untuned.csv -o tuned.csv [...]    tune shapes into a table (tgemm tune --help)\n"
    "  repro                                     the seed incident's table on this GPU\n"
    "  check [--quick]                           boundary sweep of every kernel's declared limits\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  std::string cmd = argv[1];
  std::vector<std::string> rest(argv + 2, argv + argc);
  using namespace tgemm::cli;
  if (cmd == "explain") return cmd_explain(rest);
  if (cmd == "kernels") return cmd_kernels(rest);
  if (cmd == "bench") return cmd_bench(rest);
  if (cmd == "tune") return cmd_tune(rest);
  if (cmd == "repro") return cmd_repro(rest);
  if (cmd == "check") return cmd_check(rest);
  std::fprintf(stderr, "tgemm: unknown command '%s'\n%s", cmd.c_str(), kUsage);
  return 2;
}
