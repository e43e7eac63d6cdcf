#!/usr/bin/env python3
"""The ViT encoder of vit_encoder_profile.py on several GPUs over NCCL, with its linear layers through tgemm (issue 9).

One process per GPU (torch.multiprocessing), talking through torch.distributed over NCCL; nothing home-made for
communication. The encoder is vit_encoder_profile.py's built-in ViT (embed 1280, MLP 6144, 16 heads, depth 32,
patch 14 on 224^2 images: 256 tokens an image), bf16, random weights fixed by --seed (built on every rank, then
broadcast from rank 0, so every rank holds the same weights and images). It runs:
  - 1 GPU: the whole batch on one GPU, every nn.Linear through tgemm (tgemm.torch.patch_linear): the reference;
    also checked once against stock PyTorch (F.linear);
  - tensor parallel: every rank runs the whole batch with a shard of each block. qkv and fc1 are column-parallel
    (each rank holds N/world rows of W and its bias slice; attention heads split across ranks), proj and fc2
    row-parallel (each rank holds K/world columns; partial outputs summed with dist.all_reduce, the bias added once,
    by rank 0's GEMM). Each rank's GEMMs go through tgemm.mm;
  - data parallel: every rank runs the whole encoder on its 1/world of the images (what an engine does with
    --mm-encoder-tp-mode data, the seed's setting). fc1, the largest GEMM, then has M = tokens on the rank, and at
    the default size M*N >= 2^31: it must run on a split plan, never on an int32 kernel past its reach.
It reports each mode's output against the 1-GPU run (relative error over all elements) and its throughput
(images/s, CUDA events, median of --iters passes after --warmup) against one GPU, and tgemm's plan for fc1 in
each mode (tgemm.explain, and for data parallel also the plan each rank logged when it ran fc1: TGEMM_LOG=1).

Tables (--table): by default the seed's tuned table is loaded in every process: one row, M=8192 N=6144 K=1280 with
bias, naming an sm90 kernel with 32-bit Y offsets (the i32 twin of the heuristic's first choice, as `tgemm repro`
picks it). AITER's padded-M lookup maps every fc1 with M > 8192 onto that row, which is how the seed's engine
reached its int32 kernel with M = 768000; tgemm must split. `--table shipped` keeps the tables tgemm loaded itself
(shipped, or TGEMM_CONFIG); `--table a.csv[:b.csv]` loads those files.

    python3 examples/vit_multi_gpu.py            # 3000 images, depth 32 (about a minute on two H200s)
    python3 examples/vit_multi_gpu.py --quick    # 2800 images, depth 2 (1400 a GPU: fc1 M*N still >= 2^31)

Run from the repository with the in-tree build: PYTHONPATH=build-dev/python python3 examples/vit_multi_gpu.py
(configured with -DTGEMM_BUILD_PYTHON=ON). NVLink multicast is never used: NCCL_NVLS_ENABLE=0,
TORCH_SYMM_MEM_DISABLE_MULTICAST=1 and NVSHMEM_DISABLE_NVLS=1 are set here, before torch or NCCL start.
Exit status 0 when every check passes, 1 when one fails, 2 when the machine cannot run it (fewer GPUs, no NCCL).
"""

import os

# NVLink multicast stays off, in this process and in every process it starts (they inherit the environment).
for _name, _value in (("NCCL_NVLS_ENABLE", "0"), ("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1"),
                      ("NVSHMEM_DISABLE_NVLS", "1")):
    os.environ[_name] = _value
# tgemm logs each new plan once on stderr ("[tgemm] new plan for ..."); the workers capture it around each mode's
# first pass to show the plan fc1 really ran with. Read when tgemm's dispatcher is created: set before any tgemm call.
os.environ["TGEMM_LOG"] = "1"

import argparse  # noqa: E402
import datetime  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import re  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402
import torch.nn.functional as F  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vit_encoder_profile as vep  # noqa: E402  (the model, timing and reporting; it imports tgemm and tgemm.torch)

tgemm = vep.tgemm
tt = vep.tt

TABLE_HEADER = ("gfx,cu_num,M,N,K,bias,dtype,outdtype,scaleAB,bpreshuffle,libtype,solidx,splitK,us,kernelName,"
                "err_ratio,tflops,bw")
PLAN_LOG = "[tgemm] new plan for "


# ---- tensor parallel -------------------------------------------------------------------------------------------

class TPBlock:
    """One vep.Block sharded over `world` ranks: qkv and fc1 column-parallel, proj and fc2 row-parallel."""

    def __init__(self, blk, rank, world):
        C, H = blk.qkv.in_features, blk.heads
        hd, hl = C // H, H // world  # head size, heads on this rank
        mlp_l = blk.fc1.out_features // world
        heads = slice(rank * hl, (rank + 1) * hl)
        cols = slice(rank * hl * hd, (rank + 1) * hl * hd)  # proj's input columns = this rank's heads' outputs
        mlp_cols = slice(rank * mlp_l, (rank + 1) * mlp_l)
        self.norm1, self.norm2, self.hl, self.hd = blk.norm1, blk.norm2, hl, hd
        # qkv's rows are ordered (q|k|v, head, dim): this rank's heads of each of q, k and v.
        self.qkv_w = blk.qkv.weight.view(3, H, hd, C)[:, heads].reshape(3 * hl * hd, C).contiguous()
        self.qkv_b = blk.qkv.bias.view(3, H, hd)[:, heads].reshape(-1).contiguous()
        self.proj_w = blk.proj.weight[:, cols].contiguous()
        self.proj_b = blk.proj.bias if rank == 0 else None  # row-parallel: the bias is added once
        self.fc1_w = blk.fc1.weight[mlp_cols].contiguous()
        self.fc1_b = blk.fc1.bias[mlp_cols].contiguous()
        self.fc2_w = blk.fc2.weight[:, mlp_cols].contiguous()
        self.fc2_b = blk.fc2.bias if rank == 0 else None

    def __call__(self, x):  # vep.Block.forward, sharded
        b, n, _ = x.shape
        qkv = tgemm.mm(self.norm1(x), self.qkv_w, self.qkv_b).reshape(b, n, 3, self.hl, self.hd).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2])
        y = tgemm.mm(a.transpose(1, 2).reshape(b, n, self.hl * self.hd), self.proj_w, self.proj_b)
        dist.all_reduce(y)
        x = x + y
        y = tgemm.mm(F.gelu(tgemm.mm(self.norm2(x), self.fc1_w, self.fc1_b)), self.fc2_w, self.fc2_b)
        dist.all_reduce(y)
        return x + y


class TPEncoder:
    """vep.SmallViT.forward with sharded blocks; the patch embedding and the norms are replicated."""

    def __init__(self, model, rank, world):
        self.m = model
        self.blocks = [TPBlock(b, rank, world) for b in model.blocks]

    def __call__(self, images):
        x = self.m.patch_embed(images).flatten(2).transpose(1, 2) + self.m.pos_embed
        for blk in self.blocks:
            x = blk(x)
        return self.m.norm(x)


# ---- plans: tgemm.explain and the TGEMM_LOG lines ----------------------------------------------------------------

class CaptureStderr:
    """File descriptor 2 into a temporary file: the C++ library's TGEMM_LOG lines land there. `plans` maps each
    logged problem ("M=... N=... K=... bf16 -> bf16, bias bf16, ...") to its chain lines; everything else that was
    written to stderr meanwhile is passed on when the block ends."""

    def __enter__(self):
        sys.stderr.flush()
        self._file = tempfile.TemporaryFile()
        self._saved = os.dup(2)
        os.dup2(self._file.fileno(), 2)
        return self

    def __exit__(self, *exc):
        sys.stderr.flush()
        os.dup2(self._saved, 2)
        os.close(self._saved)
        self._file.seek(0)
        text = self._file.read().decode("utf-8", "replace")
        self._file.close()
        self.plans, other, cur = {}, [], None
        for line in text.splitlines():
            if line.startswith(PLAN_LOG):
                cur = line[len(PLAN_LOG):]
                self.plans[cur] = []
            elif cur is not None and line.startswith("  "):
                self.plans[cur].append(line.strip())
            else:
                cur = None
                other.append(line)
        if any(s.strip() for s in other):
            sys.stderr.write("\n".join(other) + "\n")
            sys.stderr.flush()
        return False


def logged_plan(plans, M, N, K):
    """The chain lines tgemm logged for the bias GEMM M x N x K, or None."""
    for head, lines in plans.items():
        if head.startswith(f"M={M} N={N} K={K} ") and ", bias " in head:
            return [f"{PLAN_LOG}{head}"] + lines
    return None


def plan_of(lines):
    """(kernel, pieces) from a decision chain's 'plan:' line, or (None, 0)."""
    for ln in lines:
        m = re.match(r"plan: (\S+), (\d+) pieces?\b", ln.strip())
        if m:
            return m.group(1), int(m.group(2))
    return None, 0


def explain_fc1(M, N, K):
    """tgemm.explain for fc1 (bias): (kernel, pieces, the relevant lines)."""
    lines = [ln.strip() for ln in tgemm.explain(M, N, K, bias=True).splitlines()]
    keep = [ln for ln in lines if ln.startswith(("table:", "candidate ", "cannot split", "split:", "plan:"))]
    kernel, pieces = plan_of(lines)
    return kernel, pieces, keep


def seed_kernel(N, K):
    """The int32-offset twin of the heuristic's first sm90 choice at M=8192 (as `tgemm repro` picks it), else any
    sm90 bf16 kernel with 32-bit Y offsets, else None."""
    ks = {k["name"]: k for k in tgemm.kernels()}
    m = re.search(r"heuristic candidates: (.*)", tgemm.explain(8192, N, K, bias=True))
    for name in (m.group(1).split(", ") if m else []):
        name = name.strip()
        if not name.startswith("sm90_"):
            continue
        twin = name[:-4] + "_i32" if name.endswith("_i64") else name
        if twin in ks and ks[twin]["y_index_bits"] == 32:
            return twin
    for k in ks.values():
        if k["backend"] == "sm90" and k["y_index_bits"] == 32 and "bf16" in k["in_dtypes"]:
            return k["name"]
    return None


def load_tables(a, dev, tmpdir):
    """Loads --table in this process. Returns (tables summary, a note)."""
    if a.table == "shipped":
        return tgemm.tables_summary(), "the tables tgemm loaded itself"
    if a.table != "seed":
        return tgemm.load_config(a.table.split(os.pathsep)), "--table"
    kernel = seed_kernel(a.mlp, a.embed)
    if kernel is None:
        raise SystemExit("vit_multi_gpu: --table seed needs an sm90 bf16 kernel with 32-bit Y offsets; this build "
                         "has none (pass --table shipped)")
    major, minor = torch.cuda.get_device_capability(dev)
    sms = torch.cuda.get_device_properties(dev).multi_processor_count
    path = os.path.join(tmpdir, f"seed_table_rank{dev.index}.csv")
    with open(path, "w") as f:
        f.write(f"{TABLE_HEADER}\nsm{major}{minor},{sms},8192,{a.mlp},{a.embed},True,torch.bfloat16,torch.bfloat16,"
                f"False,False,sm90,0,1,100.0,{kernel},0.0,0,0\n")
    return tgemm.load_config(path), (f"the seed's tuned table: M=8192 N={a.mlp} K={a.embed} bias -> {kernel} "
                                     f"(32-bit Y offsets); padded M maps every fc1 with M > 8192 onto it")


# ---- measuring ------------------------------------------------------------------------------------------------

def global_rel_err(y, ref, rows=65536):
    """||y - ref|| / ||ref|| over every rank's elements (sums in fp64, all-reduced): NaN if any element is NaN."""
    y2, r2 = y.reshape(-1, y.shape[-1]), ref.reshape(-1, ref.shape[-1])
    s = torch.zeros(2, dtype=torch.float64, device=y.device)
    for i in range(0, y2.shape[0], rows):
        u, v = y2[i:i + rows].float(), r2[i:i + rows].float()
        s[0] += (u - v).pow(2).sum(dtype=torch.float64)
        s[1] += v.pow(2).sum(dtype=torch.float64)
    dist.all_reduce(s)
    num, den = s.tolist()
    return math.sqrt(num / den) if den > 0 else float("nan")


def all_max(v, dev):
    t = torch.tensor([float(v)], dtype=torch.float64, device=dev)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return t.item()


def run_mode(fn, rank, a):
    """The first pass (stderr captured: the plans tgemm logs as it makes them) and its output, then the rest of the
    warm-up, then --iters passes each started together on every rank (barrier) and timed with CUDA events.
    Returns (output of the first pass, captured plans, median ms on this rank)."""
    dist.barrier(device_ids=[rank])
    with CaptureStderr() as cap:
        y = fn()
        torch.cuda.synchronize()
    for _ in range(a.warmup - 1):
        fn()  # output dropped at once
    ts = []
    for _ in range(a.iters):
        dist.barrier(device_ids=[rank])
        out, t = vep.timed(fn)
        del out
        ts.append(t)
    return y, cap.plans, statistics.median(ts)


# ---- one process per GPU ----------------------------------------------------------------------------------------

def worker(rank, a, init_file, result_path):
    world = a.gpus
    dev = torch.device("cuda", rank)
    torch.cuda.set_device(dev)
    kw = dict(backend="nccl", init_method=f"file://{init_file}", rank=rank, world_size=world,
              timeout=datetime.timedelta(minutes=10))
    try:
        dist.init_process_group(device_id=dev, **kw)
    except TypeError:  # PyTorch without device_id
        dist.init_process_group(**kw)
    try:
        with tempfile.TemporaryDirectory() as tmpdir:
            res = run(rank, world, dev, a, tmpdir)
        if rank == 0:
            with open(result_path, "w") as f:
                json.dump(res, f)
    finally:
        dist.destroy_process_group()


def run(rank, world, dev, a, tmpdir):
    t_start = time.time()

    def say(*args):
        if rank == 0:
            print(*args, flush=True)

    # ---- the same model and images on every rank ----
    torch.manual_seed(a.seed)
    with torch.device(dev):
        _, model, _, tokens = vep.build_encoder("builtin", a)  # its SmallViT, whose blocks TPBlock shards
    name = "built-in ViT of vit_encoder_profile.py"
    model = model.to(torch.bfloat16).eval()
    with torch.no_grad():
        for p in model.parameters():
            dist.broadcast(p.data, 0)
        g = torch.Generator(device=dev).manual_seed(a.seed + 1)
        images = torch.randn(a.images, 3, a.img, a.img, generator=g, device=dev, dtype=torch.bfloat16)
        dist.broadcast(images, 0)
    summary, table_note = load_tables(a, dev, tmpdir)

    B, per, N, K = a.images, a.images // world, a.mlp, a.embed
    fc1 = {"1 GPU": (B * tokens, N), "tensor parallel": (B * tokens, N // world), "data parallel": (per * tokens, N)}
    nccl = torch.cuda.nccl.version()
    nccl = ".".join(map(str, nccl)) if isinstance(nccl, tuple) else str(nccl)
    names = sorted({torch.cuda.get_device_name(i) for i in range(world)})
    say(f"tgemm {tgemm.__version__} | torch {torch.__version__} | NCCL {nccl} | {world} x {', '.join(names)} | "
        f"NCCL_NVLS_ENABLE={os.environ['NCCL_NVLS_ENABLE']} "
        f"TORCH_SYMM_MEM_DISABLE_MULTICAST={os.environ['TORCH_SYMM_MEM_DISABLE_MULTICAST']}")
    say(f"encoder: {name}, random weights (seed {a.seed}, broadcast from rank 0), bf16: depth {a.depth}, embed {K}, "
        f"MLP {N}, heads {a.heads}; {B} images of {a.img}^2, patch {a.patch} ({tokens} tokens an image)")
    say(f"tables: {summary.strip()}\n  ({table_note})")

    rep = vep.Report()
    plans = {}
    say("fc1, the largest GEMM, per rank, and tgemm's plan for it (tgemm.explain):")
    for mode, (M, n) in fc1.items():
        kernel, pieces, lines = explain_fc1(M, n, K)
        plans[mode] = (kernel, pieces, lines)
        say(f"  {mode:<16} {M} x {n} x {K} + bias: M*N = {M * n} {'>=' if M * n >= 2**31 else '<'} 2^31 -> "
            f"{kernel}, {pieces} piece{'s' if pieces != 1 else ''}")
    M_dp = fc1["data parallel"][0]
    say(f"data-parallel fc1, tgemm.explain({M_dp}, {N}, {K}, bias=True):")
    for ln in plans["data parallel"][2]:
        say(f"  {ln}")

    times, errs = {}, {}
    with torch.inference_mode():
        # ---- 1 GPU: the whole batch on each GPU at once (each is its own reference) ----
        handle = tt.patch_linear(model)
        n_lin = len(handle)
        ref, logs_1, times["1 GPU"] = run_mode(lambda: model(images), rank, a)
        say(f"nn.Linear layers through tgemm: {n_lin} (1 GPU and data parallel: tgemm.torch.patch_linear; tensor "
            f"parallel: tgemm.mm on each rank's shards)")
        handle.undo()
        y = model(images)  # stock PyTorch: F.linear
        errs["stock"] = global_rel_err(ref, y)
        del y

        # ---- tensor parallel ----
        tp = TPEncoder(model, rank, world)
        y, logs_tp, t = run_mode(lambda: tp(images), rank, a)
        times["tensor parallel"] = all_max(t, dev)
        errs["tensor parallel"] = global_rel_err(y, ref)
        del y
        tp = None  # its shards freed

        # ---- data parallel ----
        handle = tt.patch_linear(model)
        mine = images[rank * per:(rank + 1) * per]
        y, logs_dp, t = run_mode(lambda: model(mine), rank, a)
        times["data parallel"] = all_max(t, dev)
        errs["data parallel"] = global_rel_err(y, ref[rank * per:(rank + 1) * per])
        del y
        handle.undo()

    # What each rank logged for data-parallel fc1 when it ran it; the 1-GPU times of every GPU.
    gathered = [None] * world
    dist.all_gather_object(gathered, {"dp_fc1": logged_plan(logs_dp, M_dp, N, K), "t1": times["1 GPU"],
                                      "all_logs": {"1 GPU": logs_1, "tensor parallel": logs_tp,
                                                   "data parallel": logs_dp} if a.log_plans else None})
    if rank != 0:
        return None

    if a.log_plans:
        for r, gd in enumerate(gathered):
            for mode, logs in gd["all_logs"].items():
                for head, lines in logs.items():
                    print(f"[rank {r}, {mode}] {PLAN_LOG}{head}\n" + "".join(f"    {ln}\n" for ln in lines),
                          file=sys.stderr, end="", flush=True)
    dp_logged = [gd["dp_fc1"] for gd in gathered]
    say("data-parallel fc1 as each rank's dispatcher planned it when it ran (TGEMM_LOG=1), rank 0:")
    for ln in dp_logged[0] or ["(nothing logged for this shape)"]:
        if ln.startswith(PLAN_LOG) or ln.startswith(("table:", "candidate ", "split:", "plan:")):
            say(f"  {ln}")

    tol = a.max_rel_err
    print("checks", flush=True)
    rep.check(errs["stock"] < tol, f"1 GPU through tgemm vs stock PyTorch (F.linear): relative error "
                                   f"{errs['stock']:.2e} (< {tol:g})")
    rep.check(errs["tensor parallel"] < tol, f"tensor parallel ({world} GPUs) vs 1 GPU: relative error "
                                             f"{errs['tensor parallel']:.2e} (< {tol:g})")
    rep.check(errs["data parallel"] < tol, f"data parallel ({world} GPUs) vs 1 GPU: relative error "
                                           f"{errs['data parallel']:.2e} (< {tol:g})")
    rep.check(M_dp * N >= 2**31, f"data parallel: fc1 on each rank is {M_dp} x {N} x {K}, M*N = {M_dp * N} >= 2^31")
    k_dp, p_dp, _ = plans["data parallel"]
    hint = "" if p_dp > 1 else " (whole: its kernel addresses it; --table seed maps it onto an int32 kernel)"
    rep.check(p_dp > 1, f"data parallel: fc1 runs on a split plan (tgemm.explain): {p_dp} pieces of {k_dp}{hint}")
    ran = [plan_of(lg or []) for lg in dp_logged]
    seen = ", ".join(f"rank {r}: {k or 'none logged'} x {p}" for r, (k, p) in enumerate(ran))
    rep.check(all(r == (k_dp, p_dp) for r in ran), f"data parallel: the plan each rank logged as it ran fc1 is that "
                                                     f"one: {seen}")

    t1 = times["1 GPU"]
    t1_all = [gd["t1"] for gd in gathered]
    print(f"throughput: CUDA events, median of {a.iters} passes after {a.warmup} warm-up; 1 GPU: GPU 0 "
          f"(each GPU ran it at once: {', '.join(f'{t:.1f}' for t in t1_all)} ms); {world}-GPU modes: the slower "
          f"rank", flush=True)
    rows = []
    hdr = (f"{'mode':<16} {'GPUs':>4}  {'fc1 per rank (M x N x K)':<26} {'fc1 plan':<38} {'ms/pass':>9} "
           f"{'images/s':>9} {'vs 1 GPU':>8} {'rel.err vs 1 GPU':>16}")
    print(hdr, flush=True)
    print("-" * len(hdr), flush=True)
    for mode in ("1 GPU", "tensor parallel", "data parallel"):
        M, n = fc1[mode]
        kernel, pieces, _ = plans[mode]
        t = times[mode]
        ips = B / (t / 1e3)
        err = errs.get(mode)
        gpus = 1 if mode == "1 GPU" else world
        rows.append({"mode": mode, "gpus": gpus, "M": M, "N": n, "K": K, "kernel": kernel, "pieces": pieces,
                     "ms": t, "images_per_s": ips, "speedup": t1 / t, "rel_err": err})
        print(f"{mode:<16} {gpus:>4}  {f'{M} x {n} x {K}':<26} {f'{kernel} x{pieces}':<38} {t:>9.1f} {ips:>9.1f} "
              f"{t1 / t:>7.2f}x {'-' if err is None else f'{err:.2e}':>16}", flush=True)
    print(f"RESULT: {'PASS' if rep.ok else 'FAIL'} in {time.time() - t_start:.0f} s", flush=True)
    return {"ok": rep.ok, "rows": rows, "stock_rel_err": errs["stock"], "t1_all_gpus_ms": t1_all}


# ---- the launcher -----------------------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gpus", type=int, default=2, help="processes, one a GPU (default 2)")
    ap.add_argument("--images", type=int, default=3000,
                    help="images in the batch (3000: data parallel on 2 GPUs puts 1500 on each, fc1 M = 384000)")
    vep.add_model_args(ap)
    ap.add_argument("--iters", type=int, default=3, help="timed passes of each mode")
    ap.add_argument("--warmup", type=int, default=1, help="untimed passes of each mode first (>= 1)")
    ap.add_argument("--seed", type=int, default=0, help="random weights and images")
    ap.add_argument("--table", default="seed", help="seed (default), shipped, or table files a.csv[:b.csv]")
    ap.add_argument("--max-rel-err", type=float, default=5e-2, help="each output vs the 1-GPU run's")
    ap.add_argument("--log-plans", action="store_true", help="print every plan tgemm logged (TGEMM_LOG=1), on stderr")
    ap.add_argument("--quick", action="store_true",
                    help="depth 2, 2800 images (1400 a GPU: data-parallel fc1 M*N = 2.2e9, still >= 2^31), 2 passes")
    a = ap.parse_args()
    if a.quick:
        a.depth, a.images, a.iters = min(a.depth, 2), min(a.images, 2800), min(a.iters, 2)
    a.warmup, a.iters = max(a.warmup, 1), max(a.iters, 1)
    bad = [f"--{k} {v} is not a multiple of --gpus {a.gpus}"
           for k, v in (("images", a.images), ("heads", a.heads), ("mlp", a.mlp)) if a.gpus < 1 or v % a.gpus]
    if a.embed % a.heads:
        bad.append(f"--embed {a.embed} is not a multiple of --heads {a.heads}")
    if a.gpus < 2:
        bad.append("--gpus must be at least 2")
    if bad:
        ap.error("; ".join(bad))
    n = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if n < a.gpus:
        print(f"vit_multi_gpu: needs {a.gpus} CUDA devices, this machine has {n}", file=sys.stderr)
        return 2
    if not dist.is_available() or not dist.is_nccl_available():
        print("vit_multi_gpu: this PyTorch has no torch.distributed with NCCL", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as td:
        result = os.path.join(td, "result.json")
        try:
            mp.spawn(worker, args=(a, os.path.join(td, "rendezvous"), result), nprocs=a.gpus, join=True)
        except Exception as e:  # noqa: BLE001 - a worker raised or died: its traceback is above
            print(f"vit_multi_gpu: a worker failed: {e}", file=sys.stderr)
            return 1
        if not os.path.exists(result):
            print("vit_multi_gpu: rank 0 wrote no result", file=sys.stderr)
            return 1
        with open(result) as f:
            ok = json.load(f)["ok"]
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
