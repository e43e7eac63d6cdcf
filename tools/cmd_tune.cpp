// tgemm tune: every candidate of each shape, checked and timed in worker processes (one per GPU) that the
// parent restarts when a candidate faults or hangs; the table is saved after every shape, so an interrupted
// run leaves a valid file and a rerun resumes.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <deque>
#include <iostream>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "bench/tune.h"
#include "cli.h"
#include "registry/registry.h"

extern char** environ;

namespace tgemm::cli {

namespace {

volatile std::sig_atomic_t g_interrupted = 0;
void on_sigint(int) { g_interrupted = 1; }

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

// The profile's note on a candidate (no commas: the profile is CSV): why it failed, else its pairwise and confirm
// rounds' figures where they ran.
std::string profile_note(const bench::CandidateResult& r) {
  if (!r.note.empty()) return bench::one_line(r.note);
  std::string out;
  char b[96];
  if (r.pair_x > 0) {
    std::snprintf(b, sizeof b, "pair %.4fx the final round's pick (2-way)", r.pair_x);
    out = b;
  }
  if (r.confirm_x > 0) {
    std::snprintf(b, sizeof b, "confirm %.4fx over cuBLASLt's default (A B A B)", r.confirm_x);
    out += (out.empty() ? "" : "; ") + std::string(b);
  }
  return out.empty() ? "-" : out;
}

std::string shape_str(const Shape& s) {
  return "M=" + std::to_string(s.m) + " N=" + std::to_string(s.n) + " K=" + std::to_string(s.k) + (s.bias ? " bias" : "");
}

bool parse_libtypes(const std::string& s, std::vector<Backend>* out) {
  out->clear();
  if (s == "all") {
    *out = {Backend::sm90, Backend::skinny, Backend::cublaslt};
    return true;
  }
  for (const std::string& t : split(s, ',')) {
    Backend b;
    if (!parse_backend(t, &b) || b == Backend::reference) return false;
    out->push_back(b);
  }
  return !out->empty();
}

// One worker process on one GPU: fed one shape at a time on its stdin, so a free GPU always takes the next shape.
struct Worker {
  int gpu = 0;
  pid_t pid = -1;
  int out_fd = -1, in_fd = -1;
  std::string buf;
  long current = -1;                 // global index of the shape in progress, -1 when idle
  std::string current_kernel;        // last "begin"
  std::vector<bench::CandidateResult> results;  // of the shape in progress
  std::chrono::steady_clock::time_point last;
};

// What a tune worker takes from its parent: the parent forwards these as it was given them, and both parse them with
// parse_tune_options, so a worker runs with exactly the parent's options (and TuneOptions' defaults where none).
const std::set<std::string> kTuneFlags = {"--no-confirm", "--no-search"};
const std::set<std::string> kTuneOptions = {"--libtype",   "--warmup",           "--iters",            "--err-ratio",       "--timing",
                                            "--finalists", "--keep-default-pct", "--confirm-pause-ms", "--search",
                                            "--pair-repeats"};

std::set<std::string> with(std::set<std::string> a, const std::set<std::string>& b) {
  a.insert(b.begin(), b.end());
  return a;
}

bench::TuneOptions parse_tune_options(Args& a) {
  bench::TuneOptions opt;
  if (!parse_libtypes(a.str("--libtype", "all"), &opt.backends))
    a.fail("--libtype: '" + a.str("--libtype") + "' is not all or a list of sm90, skinny, cublaslt");
  opt.timing.warmup = int(a.int_opt("--warmup", opt.timing.warmup, 0, 100000));
  opt.timing.iters = int(a.int_opt("--iters", opt.timing.iters, 1, 100000));
  if (a.has("--timing") && !bench::parse_timing_mode(a.str("--timing"), &opt.timing.mode))
    a.fail("--timing: '" + a.str("--timing") + "' is not graph or plain");
  opt.max_err_ratio = a.double_opt("--err-ratio", opt.max_err_ratio, 0, 1);
  opt.finalists = int(a.int_opt("--finalists", opt.finalists, 0, 1000));
  opt.keep_default_pct = a.double_opt("--keep-default-pct", opt.keep_default_pct, 0, 100);
  opt.confirm = !a.flag("--no-confirm");
  if (a.has("--search") && !parse_search_depth(a.str("--search"), &opt.search))
    a.fail("--search: '" + a.str("--search") + "' is not none, near or wide");
  if (a.flag("--no-search")) {
    if (a.has("--search")) a.fail("--no-search and --search: give one");
    opt.search = SearchDepth::none;
  }
  opt.confirm_pause_ms = a.double_opt("--confirm-pause-ms", opt.confirm_pause_ms, 0, 60000);
  opt.pair_repeats = int(a.int_opt("--pair-repeats", opt.pair_repeats, 0, 100));
  if (opt.pair_repeats > 0 && opt.finalists == 0) a.fail("--pair-repeats: needs a final round (--finalists > 0)");
  return opt;
}

}  // namespace

// Hidden subcommand: tgemm tune --worker [the options of kTuneFlags and kTuneOptions].
// Reads "tune <i> <skip,list|-> <shape csv>" lines on stdin, one shape at a time, and answers on stdout with the
// lines of bench::WorkerLine (bench/tune.h).
int cmd_tune_worker(const std::vector<std::string>& argv) {
  Args a(argv, kTuneFlags, kTuneOptions);
  bench::TuneOptions opt = parse_tune_options(a);
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (!a.ok()) {
    std::printf("%s\n", bench::worker_error_line(-1, a.error()).c_str());
    return 2;
  }
  cudaStream_t stream;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
    std::printf("%s\n", bench::worker_error_line(-1, "no CUDA device").c_str());
    return 1;
  }
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream ls(line);
    std::string tag, skip, csv;
    long i = -1;
    ls >> tag >> i >> skip >> csv;
    std::vector<Shape> one;
    if (tag != "tune" || !parse_shapes(std::string(shapes_header()) + "\n" + csv + "\n", "stdin", &one).ok() || one.size() != 1) {
      std::printf("%s\n", bench::worker_error_line(i, "bad request '" + line + "'").c_str());
      return 2;
    }
    opt.skip = skip == "-" ? std::vector<std::string>{} : split(skip, ',');
    auto last_alive = std::chrono::steady_clock::now();
    opt.timing.heartbeat = [&] {
      const auto now = std::chrono::steady_clock::now();
      if (now - last_alive < std::chrono::seconds(1)) return;
      last_alive = now;
      std::printf("%s\n", bench::worker_alive_line(i).c_str());
    };
    std::vector<bench::CandidateResult> res;
    Status s = bench::tune_shape(one[0], opt, stream, &res,
                                 [&](const std::string& k) { std::printf("%s\n", bench::worker_begin_line(i, k).c_str()); });
    if (!s.ok()) {
      // A CUDA error poisons the context: report and exit; the parent restarts a worker past this candidate.
      std::printf("%s\n", bench::worker_error_line(i, s.to_string()).c_str());
      return 3;
    }
    for (const auto& r : res) std::printf("%s\n", bench::worker_cand_line(i, r).c_str());
    std::printf("%s\n", bench::worker_done_line(i).c_str());
  }
  return 0;
}

int cmd_tune(const std::vector<std::string>& argv) {
  if (!argv.empty() && argv[0] == "--worker") return cmd_tune_worker(std::vector<std::string>(argv.begin() + 1, argv.end()));
  Args a(argv, with({"--update-improved", "--retune", "--help"}, kTuneFlags),
         with({"-i", "-o", "--min-improvement-pct", "--profile-file", "--gpus", "--timeout-s"}, kTuneOptions));
  if (a.flag("--help")) {
    std::printf(
        "tgemm tune -i untuned.csv -o tuned.csv [options]\n"
        "  --libtype all|sm90,skinny,cublaslt   candidate backends (default all)\n"
        "  --warmup N --iters N                 timing (default 10, 50; medians, interleaved)\n"
        "  --timing graph|plain                 time CUDA-graph replays or plain launches (default graph); plain\n"
        "                                       tunes an eager table (-o name ending in _eager.csv: the rows mm takes\n"
        "                                       for launches outside a CUDA-graph capture)\n"
        "  --err-ratio F                        max fraction of outputs failing isclose (default 0.05)\n"
        "  --finalists N                        re-time the N fastest, cuBLASLt's default and each backend's fastest\n"
        "                                       with 2x iterations; the pick comes from that round (default 4; 0: one\n"
        "                                       round)\n"
        "  --keep-default-pct P                 keep cuBLASLt's default unless another is P%% faster (default 2)\n"
        "  --no-confirm                         no confirm round (by default a pick other than cuBLASLt's default is\n"
        "                                       timed against it again, A B A B as the bench does, and kept only if\n"
        "                                       faster there)\n"
        "  --confirm-pause-ms MS                idle this long before the confirm round and each pairwise call\n"
        "                                       (default 0; an A/B knob)\n"
        "  --pair-repeats N                     time each finalist 2-way against the final round's pick in N calls\n"
        "                                       and pick by the median ratios, as `bench --pairwise --pair-repeats`\n"
        "                                       re-checks (default 0: the final round decides)\n"
        "  --search none|near|wide              cuBLASLt algorithms beyond its heuristic's answers, named\n"
        "                                       cublaslt_a<id>_t<tile>_..._cl<cluster>: near, each answer with other\n"
        "                                       cluster shapes (<= 32); wide (default), also the first three answers\n"
        "                                       with every custom option (<= 96 more); --no-search is none\n"
        "  --update-improved [--min-improvement-pct P]  retune shapes already in -o, replace only if P%% faster (default 3)\n"
        "  --retune                             retune shapes already in -o unconditionally\n"
        "  --profile-file F                     every candidate's result, CSV\n"
        "  --gpus 0,1,...                       one worker process per GPU (default 0)\n"
        "  --timeout-s S                        a candidate silent this long is recorded as hung (default 120)\n");
    return 0;
  }
  const bench::TuneOptions opt = parse_tune_options(a);
  double min_pct = a.double_opt("--min-improvement-pct", 3, 0, 100);
  int timeout_s = int(a.int_opt("--timeout-s", 120, 1, 86400));
  std::vector<int> gpus;
  for (const std::string& g : split(a.str("--gpus", "0"), ',')) {
    int64_t v;
    if (!parse_int(g, 0, 1023, &v)) a.fail("--gpus: '" + g + "' is not a GPU index");
    gpus.push_back(int(v));
  }
  if (a.ok() && (!a.has("-i") || !a.has("-o"))) a.fail("needs -i untuned.csv and -o tuned.csv");
  if (a.ok() && !a.positional().empty()) a.fail("unexpected argument '" + a.positional()[0] + "'");
  // The dispatcher takes an "_eager.csv" table's rows for launches outside a capture, a plain one's for graphs.
  if (a.ok() && is_eager_table(a.str("-o")) != (opt.timing.mode == bench::TimingMode::plain))
    a.fail(is_eager_table(a.str("-o")) ? "-o " + a.str("-o") + " is an eager table (its rows serve plain launches): tune it with --timing plain"
                                       : "--timing plain: rows timed with plain launches go to an eager table, whose name ends in _eager.csv");
  std::vector<Shape> all;
  if (a.ok())
    if (Status s = read_shapes(a.str("-i"), &all); !s.ok()) a.fail(s.message());
  if (!a.ok()) {
    std::fprintf(stderr, "tgemm tune: %s\n", a.error().c_str());
    return 2;
  }
  int ndev = 0;
  if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
    std::fprintf(stderr, "tgemm tune: no CUDA device\n");
    return 1;
  }
  for (int g : gpus)
    if (g >= ndev) {
      std::fprintf(stderr, "tgemm tune: --gpus names GPU %d, this machine has %d\n", g, ndev);
      return 2;
    }
  cudaSetDevice(gpus[0]);
  DeviceInfo dev = DeviceInfo::current();
  const std::string out_path = a.str("-o");
  TunedTable table;
  auto known = [](const std::string& k, const std::string& lib) {
    const Kernel* kk = find_kernel(k);
    return kk && backend_name(kk->backend()) == lib;
  };
  if (std::filesystem::exists(out_path))
    if (Status s = table.load(out_path, known, nullptr); !s.ok()) {
      std::fprintf(stderr, "tgemm tune: existing output: %s\n", s.to_string().c_str());
      return 1;
    }
  // Unique shapes; those already tuned are skipped unless asked.
  std::vector<Shape> shapes;
  for (const Shape& s : all) {
    if (std::find(shapes.begin(), shapes.end(), s) != shapes.end()) continue;
    if (table.find(dev.arch, dev.sm_count, s) && !a.flag("--retune") && !a.flag("--update-improved")) continue;
    shapes.push_back(s);
  }
  std::printf("tune: %zu shapes (%zu in input, %zu already in %s), %zu GPU(s), device %s with %d SMs\n", shapes.size(), all.size(),
              all.size() - shapes.size(), out_path.c_str(), gpus.size(), dev.arch.c_str(), dev.sm_count);
  std::ofstream profile;
  if (a.has("--profile-file")) {
    bool fresh = !std::filesystem::exists(a.str("--profile-file"));
    profile.open(a.str("--profile-file"), std::ios::app);
    if (fresh) profile << shapes_header() << ",kernel,libtype,ok,us,err_ratio,rel_l2,max_rel,pieces,final,note\n";
  }
  std::deque<size_t> todo;
  for (size_t i = 0; i < shapes.size(); ++i) todo.push_back(i);
  std::map<size_t, std::vector<std::string>> skip;  // per shape: candidates that faulted or hung
  std::vector<Worker> workers(gpus.size());

  auto spawn = [&](Worker& w) {
    int out[2], in[2];
    if (pipe(out) != 0) return false;
    if (pipe(in) != 0) {
      close(out[0]), close(out[1]);
      return false;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    posix_spawn_file_actions_addclose(&fa, in[1]);
    std::vector<std::string> args = {"/proc/self/exe", "tune", "--worker"};
    for (const std::string& f : kTuneFlags)
      if (a.flag(f)) args.push_back(f);
    for (const std::string& o : kTuneOptions)
      if (a.has(o)) args.insert(args.end(), {o, a.str(o)});
    std::vector<char*> cargs;
    for (auto& x : args) cargs.push_back(x.data());
    cargs.push_back(nullptr);
    std::vector<std::string> env = {"CUDA_VISIBLE_DEVICES=" + std::to_string(w.gpu)};
    for (char** e = environ; *e; ++e)
      if (std::strncmp(*e, "CUDA_VISIBLE_DEVICES=", 21) != 0) env.push_back(*e);
    std::vector<char*> cenv;
    for (auto& x : env) cenv.push_back(x.data());
    cenv.push_back(nullptr);
    int rc = posix_spawn(&w.pid, "/proc/self/exe", &fa, nullptr, cargs.data(), cenv.data());
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]), close(in[0]);
    if (rc != 0) {
      close(out[0]), close(in[1]);
      w.pid = -1;
      return false;
    }
    w.out_fd = out[0], w.in_fd = in[1];
    w.buf.clear();
    w.current = -1;
    w.last = std::chrono::steady_clock::now();
    return true;
  };
  auto stop = [](Worker& w) {
    if (w.in_fd >= 0) close(w.in_fd), w.in_fd = -1;
    if (w.pid > 0) kill(w.pid, SIGKILL), waitpid(w.pid, nullptr, 0), w.pid = -1;
    if (w.out_fd >= 0) close(w.out_fd), w.out_fd = -1;
  };
  // Gives an idle worker the next shape; closes its stdin (it exits) when nothing is left.
  auto feed = [&](Worker& w) {
    if (w.current >= 0 || w.in_fd < 0) return;
    if (todo.empty()) {
      close(w.in_fd), w.in_fd = -1;
      return;
    }
    size_t gi = todo.front();
    todo.pop_front();
    std::string sk;
    for (const std::string& k : skip[gi]) sk += (sk.empty() ? "" : ",") + k;
    std::string req = "tune " + std::to_string(gi) + " " + (sk.empty() ? "-" : sk) + " " + format_shape(shapes[gi]) + "\n";
    w.current = long(gi);
    w.current_kernel.clear();
    w.results.clear();
    w.last = std::chrono::steady_clock::now();
    if (write(w.in_fd, req.data(), req.size()) != ssize_t(req.size())) w.last = {};  // the worker died: the timeout path restarts it
  };
  signal(SIGPIPE, SIG_IGN);
  for (size_t g = 0; g < gpus.size(); ++g) {
    workers[g].gpu = gpus[g];
    if (!todo.empty() && !spawn(workers[g])) {
      std::fprintf(stderr, "tgemm tune: cannot start a worker\n");
      return 1;
    }
    feed(workers[g]);
  }
  std::signal(SIGINT, on_sigint);
  std::signal(SIGTERM, on_sigint);
  const auto t0 = std::chrono::steady_clock::now();
  size_t done = 0, improved = 0, failed_shapes = 0, faults = 0, confirmed = 0, reverted = 0;

  auto finish_shape = [&](Worker& w) {
    size_t gi = size_t(w.current);
    const Shape& s = shapes[gi];
    for (const auto& r : w.results) {
      if (profile)
        profile << format_shape(s) << "," << r.kernel << "," << backend_name(r.backend) << "," << (r.ok ? 1 : 0) << "," << r.us << ","
                << r.err_ratio << "," << r.rel_l2 << "," << r.max_rel << "," << r.pieces << "," << (r.finalist ? 1 : 0) << ","
                << profile_note(r) << "\n";
      if (r.confirm_x > 0) ++(r.confirm_x > 1 ? confirmed : reverted);
    }
    for (const std::string& k : skip[gi])
      if (profile) profile << format_shape(s) << "," << k << ",-,0,0,1,0,0,0,0,faulted or hung\n";
    TableRow row;
    const Kernel* lt = Registry::get().cublaslt();
    if (bench::best_row(s, w.results, dev, &row, lt ? lt->name() : "", opt.keep_default_pct)) {
      row.file = out_path;
      const TableRow* old = table.find(dev.arch, dev.sm_count, s);
      if (!old || a.flag("--retune") || !a.flag("--update-improved") || row.us < old->us * (1 - min_pct / 100)) {
        table.put(row);
        ++improved;
      }
    } else {
      ++failed_shapes;
      std::fprintf(stderr, "\ntune: no candidate passed for %s\n", shape_str(s).c_str());
    }
    if (Status st = table.save(out_path); !st.ok()) std::fprintf(stderr, "\ntune: %s\n", st.to_string().c_str());
    if (profile) profile.flush();
    w.current = -1;
    ++done;
    double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double eta = el / double(done) * double(shapes.size() - done);
    std::fprintf(stderr, "\r[%zu/%zu] %-40s %-40s elapsed %.0fs ETA %.0fs   ", done, shapes.size(), shape_str(s).c_str(),
                 row.kernel_name.c_str(), el, eta);
  };
  auto restart_after_failure = [&](Worker& w, const std::string& why) {
    stop(w);
    if (w.current >= 0) {
      size_t gi = size_t(w.current);
      ++faults;
      if (!w.current_kernel.empty()) {
        std::fprintf(stderr, "\ntune: %s on %s (%s): recorded as failed, with its fault family (Kernel::fault_family), continuing\n",
                     w.current_kernel.c_str(), shape_str(shapes[gi]).c_str(), why.c_str());
        skip[gi].push_back(w.current_kernel);
        todo.push_front(gi);
      } else {
        std::fprintf(stderr, "\ntune: worker failed on %s (%s): skipping the shape\n", shape_str(shapes[gi]).c_str(), why.c_str());
        ++failed_shapes;
      }
      w.current = -1;
    }
    if (!todo.empty() && spawn(w)) feed(w);
  };

  while (!g_interrupted) {
    std::vector<pollfd> fds;
    std::vector<Worker*> who;
    for (Worker& w : workers)
      if (w.out_fd >= 0) fds.push_back({w.out_fd, POLLIN, 0}), who.push_back(&w);
    if (fds.empty()) break;
    if (poll(fds.data(), fds.size(), 1000) < 0) continue;
    for (size_t i = 0; i < fds.size(); ++i) {
      Worker& w = *who[i];
      if (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) {
        char chunk[4096];
        ssize_t got = read(w.out_fd, chunk, sizeof chunk);
        if (got <= 0) {
          int status = 0;
          if (w.pid > 0) waitpid(w.pid, &status, 0), w.pid = -1;
          if (w.current >= 0)
            restart_after_failure(w, WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                                         : "exited " + std::to_string(WEXITSTATUS(status)));
          else
            stop(w);
          continue;
        }
        w.last = std::chrono::steady_clock::now();
        w.buf.append(chunk, size_t(got));
        size_t nl;
        while ((nl = w.buf.find('\n')) != std::string::npos) {
          const bench::WorkerLine wl = bench::parse_worker_line(w.buf.substr(0, nl));
          w.buf.erase(0, nl + 1);
          using Tag = bench::WorkerLine::Tag;
          if (wl.tag == Tag::begin) {
            w.current_kernel = wl.kernel;  // "" in the timing rounds: a hang there is no single kernel's
          } else if (wl.tag == Tag::cand) {
            bench::CandidateResult r = wl.cand;
            if (const Kernel* k = find_kernel(r.kernel)) r.backend = k->backend();
            w.results.push_back(r);
          } else if (wl.tag == Tag::done && wl.shape == w.current) {
            finish_shape(w);
            feed(w);
          } else if (wl.tag == Tag::error) {
            restart_after_failure(w, wl.message);
            break;
          }
        }
      }
      if (w.out_fd >= 0 && w.current >= 0 && std::chrono::steady_clock::now() - w.last > std::chrono::seconds(timeout_s))
        restart_after_failure(w, "no progress for " + std::to_string(timeout_s) + " s (hung)");
    }
  }
  for (Worker& w : workers) stop(w);
  double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "\n");
  std::printf("tune: %zu of %zu shapes done in %.0f s, %zu rows written or improved, %zu shapes without a passing candidate, %zu candidate faults/hangs; %s\n",
              done, shapes.size(), el, improved, failed_shapes, faults, out_path.c_str());
  if (confirmed + reverted > 0)
    std::printf("tune: confirm round: %zu picks faster than cuBLASLt's default again, %zu not (their rows took the default)\n",
                confirmed, reverted);
  if (g_interrupted) {
    std::printf("tune: interrupted; %s holds every shape finished so far (rerun to resume)\n", out_path.c_str());
    return 130;
  }
  return failed_shapes ? 1 : 0;
}

}  // namespace tgemm::cli
