#!/usr/bin/env python3
"""A ViT encoder "profile pass" through tgemm, with a linear layer of M*N >= 2^31 outputs (issue 7's proof).

The seed's incident: with the vision encoder run data-parallel, each rank runs the whole ViT on the profile batch,
so its MLP GEMM is M=768000 tokens x N=6144 x K=1280 with bias, and a tuned kernel with 32-bit output offsets wrote
out of bounds; the stack around it also leaked 10.6 GiB at that step. This script builds a ViT encoder of that shape
(embed 1280, MLP 6144, 16 heads; random weights, built from a config — never downloaded: timm's VisionTransformer
or transformers' ViTModel where installed, else the small ViT written below), in bf16, routes every nn.Linear
through tgemm with tgemm.torch.patch_linear, runs the profile pass (3000 images of 224^2, patch 14: M = 768000
tokens) and reports:
  - correctness: the biggest linear alone (Y poisoned first: every element written; relative error against
    F.linear), and the encoder output against stock PyTorch (relative error);
  - time: the encoder pass and the biggest linear, stock vs tgemm (CUDA events, interleaved pairs, medians);
  - memory over 20 repetitions: torch.cuda.memory_allocated and the driver's free memory (cudaMemGetInfo) back to
    where they started, and tgemm's own persistent memory (bounded by its workspace).
Exit status 0 when every check passes.

    python3 examples/vit_encoder_profile.py            # the full pass (about 1-2 minutes on an H200)
    python3 examples/vit_encoder_profile.py --quick    # 4 layers, 1400 images (M*N still >= 2^31)

Run from the repository with the in-tree build: PYTHONPATH=build/python python3 examples/vit_encoder_profile.py
"""

import argparse
import math
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

try:
    import tgemm
except ImportError:  # running from a checkout: use the in-tree build if there is one
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for d in sorted(os.listdir(here)):
        if d.startswith("build") and os.path.isdir(os.path.join(here, d, "python", "tgemm")):
            sys.path.insert(0, os.path.join(here, d, "python"))
            break
    import tgemm
import tgemm.torch as tt

GiB, MiB = 1 << 30, 1 << 20


# ---- a small ViT, for machines without timm or transformers -------------------------------------------------------

class Block(nn.Module):
    def __init__(self, dim, heads, mlp):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.fc1 = nn.Linear(dim, mlp)
        self.fc2 = nn.Linear(mlp, dim)

    def forward(self, x):
        b, n, c = x.shape
        qkv = self.qkv(self.norm1(x)).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2])
        x = x + self.proj(a.transpose(1, 2).reshape(b, n, c))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class SmallViT(nn.Module):
    def __init__(self, img, patch, dim, depth, heads, mlp):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, patch, patch)
        self.pos_embed = nn.Parameter(torch.randn(1, (img // patch) ** 2, dim) * 0.02)
        self.blocks = nn.ModuleList(Block(dim, heads, mlp) for _ in range(depth))
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.trunc_normal_(m.weight, std=0.02)
                nn.init.zeros_(m.bias)

    def forward(self, images):
        x = self.patch_embed(images).flatten(2).transpose(1, 2) + self.pos_embed
        for blk in self.blocks:
            x = blk(x)
        return self.norm(x)


def build_encoder(kind, a):
    """(name, module, forward(images) -> tokens [B, T, C], tokens per image)."""
    mlp_ratio = a.mlp / a.embed
    if kind in ("auto", "timm"):
        try:
            from timm.models.vision_transformer import VisionTransformer
            m = VisionTransformer(img_size=a.img, patch_size=a.patch, embed_dim=a.embed, depth=a.depth,
                                  num_heads=a.heads, mlp_ratio=mlp_ratio, qkv_bias=True, class_token=False,
                                  global_pool="avg", num_classes=0)
            import timm
            return f"timm {timm.__version__} VisionTransformer", m, m.forward_features, (a.img // a.patch) ** 2
        except ImportError:
            if kind == "timm":
                raise
    if kind in ("auto", "transformers"):
        try:
            import transformers
            from transformers import ViTConfig, ViTModel
            cfg = ViTConfig(hidden_size=a.embed, num_hidden_layers=a.depth, num_attention_heads=a.heads,
                            intermediate_size=a.mlp, image_size=a.img, patch_size=a.patch, hidden_act="gelu")
            try:
                m = ViTModel._from_config(cfg, attn_implementation="sdpa", add_pooling_layer=False)
            except Exception:  # noqa: BLE001 - older transformers
                m = ViTModel(cfg, add_pooling_layer=False)
            return f"transformers {transformers.__version__} ViTModel", m, \
                lambda images: m(pixel_values=images).last_hidden_state, (a.img // a.patch) ** 2 + 1
        except ImportError:
            if kind == "transformers":
                raise
    m = SmallViT(a.img, a.patch, a.embed, a.depth, a.heads, a.mlp)
    return "built-in ViT (this file)", m, m, (a.img // a.patch) ** 2


# ---- measuring -------------------------------------------------------------------------------------------------

def rel_err(y, ref, rows=65536):
    """||y - ref|| / ||ref|| over all elements, in row chunks (fp32 copies stay small)."""
    y2, r2 = y.reshape(-1, y.shape[-1]), ref.reshape(-1, ref.shape[-1])
    num = torch.zeros((), dtype=torch.float64, device=y.device)
    den = torch.zeros((), dtype=torch.float64, device=y.device)
    for i in range(0, y2.shape[0], rows):
        a, b = y2[i:i + rows].float(), r2[i:i + rows].float()
        num += (a - b).pow(2).sum(dtype=torch.float64)
        den += b.pow(2).sum(dtype=torch.float64)
    return math.sqrt(num.item() / max(den.item(), 1e-300))


def count_nan(y, rows=65536):
    y2 = y.reshape(-1, y.shape[-1])
    return sum(int(torch.isnan(y2[i:i + rows]).sum()) for i in range(0, y2.shape[0], rows))


def timed(fn):
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    out = fn()
    e.record()
    e.synchronize()
    return out, s.elapsed_time(e)


def mem():
    torch.cuda.synchronize()
    free, total = torch.cuda.mem_get_info()
    return {"alloc": torch.cuda.memory_allocated(), "reserved": torch.cuda.memory_reserved(), "free": free,
            "total": total, "other": total - free - torch.cuda.memory_reserved()}


def check_biggest_linear(fc1, M, dev, rep):
    """fc1 alone at the profile pass's M: Y poisoned with NaN first (every element must be written), compared with
    F.linear over all rows and over the last rows (past 2^31 elements of Y); then timed. Returns the medians (ms)."""
    N, K = fc1.out_features, fc1.in_features
    x = torch.randn(M, K, device=dev, dtype=torch.bfloat16)
    out = torch.full((M, N), float("nan"), device=dev, dtype=torch.bfloat16)
    tgemm.mm(x, fc1.weight, fc1.bias, out=out)
    torch.cuda.synchronize()
    unwritten = count_nan(out)
    ref = F.linear(x, fc1.weight, fc1.bias)
    err, tail = rel_err(out, ref), rel_err(out[-65536:], ref[-65536:])
    del ref
    rep.check(unwritten == 0, f"fc1 alone ({M}x{N}x{K}, bias): every element of Y written ({unwritten} left NaN)")
    rep.check(err < 1e-2, f"fc1 alone vs F.linear: relative error {err:.2e}, last 65536 rows {tail:.2e} (< 1e-2)")
    ts, tg = [], []
    for _ in range(5):
        ts.append(timed(lambda: F.linear(x, fc1.weight, fc1.bias))[1])
        tg.append(timed(lambda: tgemm.mm(x, fc1.weight, fc1.bias, out=out))[1])
    return statistics.median(ts), statistics.median(tg)


class Report:
    def __init__(self):
        self.ok = True

    def check(self, cond, text):
        self.ok &= bool(cond)
        print(f"  {text:<92} {'PASS' if cond else 'FAIL'}", flush=True)


def add_model_args(ap):
    """The encoder's shape: the seed's ViT (embed 1280, MLP 6144, 16 heads, 224 px, 14 px patches, depth 32)."""
    ap.add_argument("--depth", type=int, default=32)
    ap.add_argument("--embed", type=int, default=1280)
    ap.add_argument("--mlp", type=int, default=6144)
    ap.add_argument("--heads", type=int, default=16)
    ap.add_argument("--img", type=int, default=224)
    ap.add_argument("--patch", type=int, default=14)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", choices=["auto", "timm", "transformers", "builtin"], default="auto")
    ap.add_argument("--images", type=int, default=3000, help="images in the profile batch (3000: M = 768000)")
    add_model_args(ap)
    ap.add_argument("--reps", type=int, default=20, help="repetitions of the memory check")
    ap.add_argument("--pairs", type=int, default=3, help="interleaved stock/tgemm pairs timed")
    ap.add_argument("--quick", action="store_true", help="4 layers, 1400 images (M*N still >= 2^31)")
    ap.add_argument("--device", default="cuda", help="CUDA device (default: the current one)")
    ap.add_argument("--max-rel-err", type=float, default=5e-2, help="encoder output vs stock PyTorch")
    ap.add_argument("--persistent-bound-mib", type=float, default=96.0,
                    help="bound on tgemm's own persistent device memory (its 32 MiB cuBLASLt workspace per stream, "
                         "plus the code of the kernels it loads)")
    a = ap.parse_args()
    if a.quick:
        a.depth, a.images, a.pairs = min(a.depth, 4), min(a.images, 1400), min(a.pairs, 2)
    dev = torch.device(a.device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        print("vit_encoder_profile: no CUDA device", file=sys.stderr)
        return 2
    if dev.type == "cuda" and dev.index is not None:
        torch.cuda.set_device(dev)
    torch.manual_seed(0)
    t_start = time.time()

    with torch.device(dev):
        name, model, forward, tokens = build_encoder(a.model, a)
    model = model.to(torch.bfloat16).eval()
    fc1 = next(m for m in model.modules()  # the MLP's first linear: the biggest
               if isinstance(m, nn.Linear) and (m.in_features, m.out_features) == (a.embed, a.mlp))
    M, N, K = a.images * tokens, fc1.out_features, fc1.in_features
    print(f"tgemm {tgemm.__version__} | torch {torch.__version__} | {torch.cuda.get_device_name()}")
    print(f"encoder: {name}, random weights, bf16: depth {a.depth}, embed {a.embed}, MLP {a.mlp}, heads {a.heads}")
    print(f"profile pass: {a.images} images of {a.img}^2, patch {a.patch} -> M = {M} tokens; biggest linear "
          f"(MLP fc1) {M} x {N} x {K}: M*N = {M * N} {'>=' if M * N >= 2**31 else '<'} 2^31")
    chain = tgemm.explain(M, N, K, bias=True).splitlines()
    print("tgemm plan for it: " + " | ".join(ln.strip() for ln in chain if ln.strip().startswith(("split", "plan"))))
    rep = Report()
    if M * N < 2**31:
        print("  (warning: M*N < 2^31 with these sizes: the large-shape path is not exercised)")

    images = torch.randn(a.images, 3, a.img, a.img, device=dev, dtype=torch.bfloat16)

    with torch.inference_mode():
        # ---- stock pass, then tgemm's first pass (warm-up: plans, workspace, kernels loaded) ----
        ref, t_stock0 = timed(lambda: forward(images))
        m0 = mem()
        handle = tt.patch_linear(model)
        n_lin = len(handle)
        y, t_tg0 = timed(lambda: forward(images))
        err = rel_err(y, ref)
        del y
        m1 = mem()
        persistent = (m0["free"] - m1["free"]) - (m1["reserved"] - m0["reserved"])
        print(f"nn.Linear layers routed through tgemm: {n_lin}; first passes: stock {t_stock0:.0f} ms, "
              f"tgemm {t_tg0:.0f} ms (includes warm-up)")

        print("correctness")
        rep.check(err < a.max_rel_err,
                  f"encoder output vs stock PyTorch: relative error {err:.2e} (< {a.max_rel_err:g})")

        # ---- time: interleaved pairs ----
        ts, tg = [], []
        for _ in range(a.pairs):
            handle.undo()
            y, t = timed(lambda: forward(images))
            del y
            ts.append(t)
            handle = tt.patch_linear(model)
            y, t = timed(lambda: forward(images))
            del y
            tg.append(t)

        # ---- memory over repetitions ----
        torch.cuda.empty_cache()
        base = mem()
        per_rep = []
        for _ in range(a.reps):
            y = forward(images)
            del y
            per_rep.append(mem())
        torch.cuda.empty_cache()
        end = mem()

        handle.undo()
        lin = check_biggest_linear(fc1, M, dev, rep)

    ms, mg = statistics.median(ts), statistics.median(tg)
    ls_m, lg_m = lin
    flops = 2.0 * M * N * K
    print(f"time (CUDA events, median of {a.pairs} interleaved pairs; fc1: of 5)")
    print(f"  encoder pass: stock {ms:9.1f} ms   tgemm {mg:9.1f} ms   stock/tgemm = {ms / mg:.3f}x")
    print(f"  fc1 alone:    stock {ls_m:9.2f} ms   tgemm {lg_m:9.2f} ms   stock/tgemm = {ls_m / lg_m:.3f}x   "
          f"({flops / ls_m / 1e9:.0f} vs {flops / lg_m / 1e9:.0f} TFLOP/s)")

    print(f"memory over {a.reps} repetitions of the encoder pass (after warm-up)")
    d_alloc = max(abs(m["alloc"] - base["alloc"]) for m in per_rep)
    rep.check(d_alloc == 0, f"torch.cuda.memory_allocated: {base['alloc'] / GiB:.3f} GiB at start, max change after a "
                            f"repetition {d_alloc} B")
    d_other = max(abs(m["other"] - base["other"]) for m in per_rep)
    rep.check(d_other <= 2 * MiB, f"device memory outside PyTorch's cache (total - free - reserved): max change "
                                  f"{d_other / MiB:.1f} MiB")
    frees = [m["free"] for m in per_rep[1:]] or [per_rep[0]["free"]]
    spread = (max(frees) - min(frees)) / MiB
    rep.check(spread <= 2, f"driver free memory (cudaMemGetInfo) from repetition 2 to {a.reps}: spread "
                           f"{spread:.1f} MiB (PyTorch's cache kept)")
    d_free = (end["free"] - base["free"]) / MiB
    rep.check(abs(d_free) <= 2, f"driver free memory after the repetitions, caches emptied: "
                                f"{end['free'] / GiB:.3f} GiB, {d_free:+.1f} MiB vs start")
    rep.check(persistent <= a.persistent_bound_mib * MiB,
              f"tgemm's own persistent memory (first pass, outside PyTorch's cache): {persistent / MiB:.1f} MiB "
              f"(<= {a.persistent_bound_mib:g} MiB)")
    print(f"RESULT: {'PASS' if rep.ok else 'FAIL'} in {time.time() - t_start:.0f} s")
    return 0 if rep.ok else 1


if __name__ == "__main__":
    sys.exit(main())
