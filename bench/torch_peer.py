#!/usr/bin/python3
"""The PyTorch peer of our window benchmarks: DDP with and without no_sync.

The same models as bench/step_throughput.py (bench/README.md, section 1), in
PyTorch's DistributedDataParallel (gloo on 127.0.0.1, W = 2 processes, one
thread each, default bucket_cap_mb, float32, K = 4 micro-batches a window):
  toy     examples/gen_toy.py: Linear(12, 16) -> gelu (tanh) -> Linear(16, 8),
          MSE (mean over batch x out) / K, micro-batch 32
  wide    the same at 256 -> 1024 -> 256, micro-batch 1
  wide32  the same at 256 -> 1024 -> 256, micro-batch 32
  llama   one block of bench/gen_llama_ir.py (hidden 64, ffn 176, 16 tokens,
          one micro-batch = `tokens` samples), its simplified math: n = x *
          attn_norm, a = q * k + v, h = x + wo(a), n2 = h * ffn_norm, out = h
          + w_down(gate(n2) * up(n2)): no RMS, softmax or SiLU. It writes no
          loss; its @backward takes each parameter use's input and output
          gradient. --llama-step autograd (default): backpropagate
          sum(out * dy) / K, dy random. --llama-step generator: exactly its
          @backward (dW = dout^T in, norm grad = token sum of dout * in, dx =
          dout_wq @ wq) on random (in, dout), no forward (dist-run --entry
          backward).

Per model, after --warmup, --reps repeats in rotated order, medians of the
slowest rank's time (barrier, time the work, all_reduce MAX; the gradients
are zeroed after each sample, untimed):
  window_no_sync      micro-batches 1..K-1 under ddp.no_sync(), the K-th synced
  window_always_sync  K synced micro-steps
  compute             one micro-step under no_sync (no communication): our
                      `compute` is likewise the median no_sync micro-step
  sync_step           one synced micro-step
  round               one all_reduce per parameter gradient, async, then wait
                      all: our `round` is one round of the per-parameter
                      async collectives
samples/s = K * batch * W / window (all ranks together, as ours). Every run
checks that a no_sync window and an always-sync window give the same
accumulated .grad (rtol 1e-5, atol 1e-6); exit 1 otherwise or if a rank fails.

Usage: /usr/bin/python3 bench/torch_peer.py [--models toy,wide,wide32,llama]
           [--reps 15] [--warmup 2] [--json FILE]
Prints `torch_peer: skipped: <reason>` and exits 0 if torch cannot be imported.
"""

import argparse
import datetime
import json
import os
import queue
import socket
import statistics
import sys
import time
import traceback

try:
    import torch
    import torch.distributed as dist
    import torch.multiprocessing as mp
    import torch.nn.functional as F
    from torch import nn
    from torch.nn.parallel import DistributedDataParallel as DDP
except Exception as e:  # not installed, or a broken install
    print(f"torch_peer: skipped: {type(e).__name__}: {e}")
    sys.exit(0)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "python"))
from dist_torch import gloo  # noqa: E402

W, K = 2, 4
MLPS = {"toy": (12, 16, 8, 32), "wide": (256, 1024, 256, 1), "wide32": (256, 1024, 256, 32)}
TIMED = ["window_no_sync", "window_always_sync", "compute", "sync_step", "round"]


class MLP(nn.Module):
    """gen_toy.py's step: weights [out, in] and biases, loss MSE / K."""

    def __init__(self, i, h, o):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(i, h), nn.Linear(h, o)

    def forward(self, x, y):
        out = self.fc2(F.gelu(self.fc1(x), approximate="tanh"))
        return F.mse_loss(out, y) / K  # sum((o - y)^2) / (batch * out) / K


def llama_shapes(hidden, ffn):
    return [("attn_norm", [hidden]), ("wq", [hidden, hidden]), ("wk", [hidden, hidden]),
            ("wv", [hidden, hidden]), ("wo", [hidden, hidden]), ("ffn_norm", [hidden]),
            ("w_gate", [ffn, hidden]), ("w_up", [ffn, hidden]), ("w_down", [hidden, ffn])]


class GeneratorBackward(torch.autograd.Function):
    """gen_llama_ir.py's @backward: each gradient from its (in, dout) pair."""

    @staticmethod
    def forward(ctx, data, *params):
        ctx.data, ctx.dims = data, [p.dim() for p in params]
        ctx.save_for_backward(params[1])
        return params[0].new_zeros(())

    @staticmethod
    def backward(ctx, _):
        ins, douts = ctx.data
        grads = [(d * x).sum(0) if dim == 1 else d.t() @ x
                 for x, d, dim in zip(ins, douts, ctx.dims)]
        douts[1] @ ctx.saved_tensors[0]  # dx, the block input's gradient (work only)
        return (None, *grads)


class Llama(nn.Module):
    def __init__(self, hidden, ffn, step):
        super().__init__()
        self.step = step
        for name, shape in llama_shapes(hidden, ffn):  # registered in the generator's order
            w = torch.ones(shape) if len(shape) == 1 else \
                (torch.rand(shape) * 2 - 1) / shape[1] ** 0.5  # nn.Linear's range
            self.register_parameter(name, nn.Parameter(w))

    def forward(self, x, dy):
        if self.step == "generator":
            return GeneratorBackward.apply((x, dy), *self.parameters())
        n = x * self.attn_norm
        a = F.linear(n, self.wq) * F.linear(n, self.wk) + F.linear(n, self.wv)
        h = x + F.linear(a, self.wo)
        n2 = h * self.ffn_norm
        gu = F.linear(n2, self.w_gate) * F.linear(n2, self.w_up)
        out = h + F.linear(gu, self.w_down)
        return (out * dy).sum() / K


def build(name, a, rank):
    """The model (same parameters on every rank) and the rank's K micro-batches."""
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(1000 + rank)
    if name in MLPS:
        i, h, o, batch = MLPS[name]
        return MLP(i, h, o), [(torch.randn(batch, i, generator=g),
                               torch.randn(batch, o, generator=g)) for _ in range(K)], batch
    hid, ffn, t = a.llama_hidden, a.llama_ffn, a.llama_tokens
    model = Llama(hid, ffn, a.llama_step)
    if a.llama_step == "generator":
        shapes = [s for _, s in llama_shapes(hid, ffn)]
        data = [([torch.randn(t, s[-1], generator=g) for s in shapes],
                 [torch.randn(t, s[0], generator=g) for s in shapes]) for _ in range(K)]
    else:
        data = [(torch.randn(t, hid, generator=g), torch.randn(t, hid, generator=g))
                for _ in range(K)]
    return model, data, t


def bench(name, a, rank):
    model, data, batch = build(name, a, rank)
    ddp = DDP(model)
    params = list(model.parameters())
    bufs = [torch.zeros_like(p) for p in params]  # sums stay 0

    def step(mb):
        ddp(*mb).backward()

    def window_no_sync():
        with ddp.no_sync():
            for mb in data[:-1]:
                step(mb)
        step(data[-1])

    def window_always_sync():
        for mb in data:
            step(mb)

    def compute():
        with ddp.no_sync():
            step(data[0])

    def grad_round():  # one round of per-parameter collectives, in parameter order
        for h in [dist.all_reduce(b, async_op=True) for b in bufs]:
            h.wait()

    def check():  # both windows from zero, same data and parameters
        window_no_sync()
        one = [p.grad.clone() for p in params]
        ddp.zero_grad(set_to_none=False)
        window_always_sync()
        bad = [(i, (x - p.grad).abs().max().item()) for i, (x, p) in
               enumerate(zip(one, params)) if not torch.allclose(x, p.grad, rtol=1e-5, atol=1e-6)]
        ddp.zero_grad(set_to_none=False)
        flag = torch.tensor([len(bad)])
        dist.all_reduce(flag)  # every rank learns of a mismatch: they fail together
        if flag.item():
            raise RuntimeError(f"{name}: no_sync and always-sync gradients differ "
                               f"(parameter index, max |diff| on this rank: {bad})")

    fns = dict(zip(TIMED, [window_no_sync, window_always_sync, compute,
                           lambda: step(data[0]), grad_round]))

    def sample(fn):  # the slowest rank's time
        dist.barrier()
        begin = time.perf_counter()
        fn()
        t = torch.tensor([time.perf_counter() - begin], dtype=torch.float64)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        ddp.zero_grad(set_to_none=False)
        return t.item()

    times = {n: [] for n in TIMED}
    for rep in range(a.warmup + a.reps):
        if rep == a.warmup:  # the sanity check, after warm-up
            check()
        for j in range(len(TIMED)):
            n = TIMED[(j + rep) % len(TIMED)]
            s = sample(fns[n])
            if rep >= a.warmup:
                times[n].append(s)
    r = {"model": name, "batch": batch, "params": len(params),
         "grad_bytes": sum(p.numel() * p.element_size() for p in params)}
    r.update({n + "_ms": statistics.median(v) * 1e3 for n, v in times.items()})
    r["ideal_window_ms"] = K * r["compute_ms"] + r["round_ms"]
    r["ratio_to_ideal"] = r["window_no_sync_ms"] / r["ideal_window_ms"]
    r["speedup"] = r["window_always_sync_ms"] / r["window_no_sync_ms"]
    for w in ("no_sync", "always_sync"):
        r[w + "_samples_per_s"] = K * batch * W / (r[f"window_{w}_ms"] / 1e3)
    r["grads_agree"] = True
    return r


def rank_main(rank, port, a, q):
    try:
        torch.set_num_threads(1)
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                                world_size=W,
                                timeout=datetime.timedelta(seconds=a.timeout))
        out = [bench(m, a, rank) for m in a.models]
        dist.barrier()  # leave together: a gloo rank whose peer is gone can spin
        if rank == 0:
            q.put(("result", out))
        code = 0
    except BaseException:
        q.put(("error", rank, traceback.format_exc()))
        code = 1
    q.close()
    q.join_thread()  # the message is sent before the process ends
    gloo.leave(code)


def blas_info():
    torch.set_num_threads(1)
    torch.ones(8, 8) @ torch.ones(8, 8)  # load the BLAS
    with open("/proc/self/maps") as f:
        libs = sorted({l.split()[-1] for l in f if "blas" in l.lower() or "lapack" in l.lower()})
    show = torch.__config__.show().splitlines()
    build = next((l for l in show if "BLAS_INFO" in l), "")
    return {"config_first_lines": [l.strip() for l in show[:6]],
            "build_blas_info": build.split("BLAS_INFO=")[1].split(",")[0] if build else None,
            "mapped_libraries": libs,
            "openblas_in_use": any("openblas" in l for l in libs)}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def launch(a):
    """Runs the ranks; the results, or exits 1 with the failing rank's error."""
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=rank_main, args=(r, port, a, q)) for r in range(W)]
    for p in procs:
        p.start()
    result, error, deadline = None, None, time.time() + a.timeout
    while result is None and error is None and time.time() < deadline:
        try:
            msg = q.get(timeout=0.2)
        except queue.Empty:
            if any(p.exitcode not in (None, 0) for p in procs):
                time.sleep(0.5)  # let its error message arrive first
                if q.empty():
                    error = "a rank exited without a message"
            continue
        if msg[0] == "result":
            result = msg[1]
        else:
            error = f"rank {msg[1]}:\n{msg[2]}"
    if result is None and error is None:
        error = f"timed out after {a.timeout} s"
    for p in procs:  # a rank left waiting on a failed peer is killed
        p.join(timeout=10 if error is None else 1)
        if p.is_alive():
            p.kill()
            p.join()
    if error or any(p.exitcode for p in procs):
        sys.stderr.write(f"torch_peer: failed: {error or ''}\n"
                         f"(exit codes of the ranks: {[p.exitcode for p in procs]})\n")
        sys.exit(1)
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="toy,wide,wide32,llama")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--json")
    ap.add_argument("--llama-hidden", type=int, default=64)
    ap.add_argument("--llama-ffn", type=int, default=None,
                    help="default: 8/3 hidden rounded up to 16, as gen_llama_ir.py")
    ap.add_argument("--llama-tokens", type=int, default=16)
    ap.add_argument("--llama-step", choices=["autograd", "generator"], default="autograd")
    ap.add_argument("--timeout", type=int, default=900,
                    help="seconds for the whole run (and gloo's per-collective timeout)")
    a = ap.parse_args()
    a.models = [m for m in a.models.split(",") if m]
    a.llama_ffn = a.llama_ffn or (8 * a.llama_hidden // 3 + 15) // 16 * 16
    unknown = [m for m in a.models if m not in list(MLPS) + ["llama"]]
    if unknown or a.reps < 1 or a.warmup < 0:
        ap.error(f"bad --models {unknown} or --reps/--warmup")
    begin = time.time()
    rows = launch(a)
    took = time.time() - begin
    print(f"torch {torch.__version__}, gloo, W = {W}, K = {K}, 1 thread per rank, "
          f"reps {a.reps}, warmup {a.warmup}; ms are medians of the slowest rank")
    cols = [("model", "model", "{}"), ("grad bytes", "grad_bytes", "{:,}")]
    cols += [(n.replace("_", " ") + " ms", n + "_ms", "{:.4f}") for n in TIMED[2:] + TIMED[:2]]
    cols += [("samples/s no_sync", "no_sync_samples_per_s", "{:,.0f}"),
             ("always-sync", "always_sync_samples_per_s", "{:,.0f}"),
             ("speed-up", "speedup", "{:.2f}x"), ("ratio to ideal", "ratio_to_ideal", "{:.3f}")]
    print("| " + " | ".join(c[0] for c in cols) + " |\n" + "|---" * len(cols) + "|")
    for r in rows:
        print("| " + " | ".join(f.format(r[k]) for _, k, f in cols) + " |")
    print(f"gradients agree (no_sync vs always-sync) for every model; took {took:.1f} s")
    if a.json:
        env = {"torch_version": torch.__version__, "blas": blas_info(), "settings": {
            "world": W, "k": K, "backend": "gloo", "threads_per_rank": 1, "dtype": "float32",
            "bucket_cap_mb": 25, "reps": a.reps, "warmup": a.warmup,
            "llama": {"hidden": a.llama_hidden, "ffn": a.llama_ffn, "tokens": a.llama_tokens,
                      "step": a.llama_step},
            "timing": "median over reps of the slowest rank (barrier, time, all_reduce MAX); "
                      "grads zeroed after each sample, untimed",
            "samples_per_s": "K * batch * W / window (llama: batch = tokens)"}}
        with open(a.json, "w") as f:
            json.dump([dict(r, **env) for r in rows], f, indent=1)


if __name__ == "__main__":
    main()
