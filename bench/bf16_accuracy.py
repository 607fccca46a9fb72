#!/usr/bin/env python3
"""What an f32 gradient stash buys a bf16 model, against a float64 reference.

The ToyModel step of examples/gen_toy.py wholly in bf16 (--dtype bf16:
parameters, data and compute), W = 2 ranks, one window of K = 8 micro-batches
(7 x @step_no_sync, then @step), in modes ddp and zero2, for the ToyModel
(12 -> 16 -> 8, batch 32) and a wide 64 -> 256 -> 64. Rows per mode and model:
  bf16 stash   -dist-no-sync-pipeline: stash, pre-averaging, collective in bf16
  f32 stash    -dist-no-sync-pipeline=reduce-dtype=f32: the same in f32, the
               synced gradient truncated to bf16 at the end
  f32 model    --dtype f32, plain pipeline: the harness check; its error must
               be at f32 level (< 1e-5), or data, reference or parsing is wrong
  ref in bf16  no run: the reference rounded once to bf16, the floor of any
               bf16 gradient
All with the default buckets (bucket-cap-bytes unset).

Parameters (normal * 0.3) and data (normal) are drawn with numpy (--seed) and
rounded to bf16 (nearest even), so dist and the reference start from the same
values. They go into a @main appended to the pipeline's module, the technique
of test/Integration/reduce-dtype.mlir, as f32 constants truncated to the
model's type (exact); each rank slices its micro-batches, and in zero2 its
rows r*n/W .. of the parameters, by distrt_rank(). Each rank prints every
gradient it returns (zero2: its shard) as the bits of its f32 value
(printMemrefI32 of a bitcast: exact, where printMemrefF32 prints 6 digits)
into its own file (mpirun --output-filename).

The reference is the model in float64 numpy as gen_toy.py writes it (Linear,
gelu tanh approximation, Linear, loss sum((o - y)^2) / (batch * out) / K, and
its backward), with gen_toy's constants rounded to the model's type as the
compiled model holds them, so only the arithmetic differs. The synced gradient
is G = (1/W) sum_ranks sum_k g (../shared/BACKGROUND.md).

Errors: per gradient max |dist - ref| / max |ref|, their max, and the norm
||dist - ref|| / ||ref|| over all four; the ratio is bf16 stash / f32 stash of
the max. Bytes per window from -dist-comm-report=micro-batches=8: the
"no_sync (one round)" total (zero2: with its parameter all_gathers) and the
gradient collectives alone. Exits non-zero if a run fails, if the f32 stash's
max error is not below the bf16 stash's, or if the f32 model's is over 1e-5.

Usage: bench/bf16_accuracy.py [--build build] [--seed 0] [--json FILE]
                              [--in 12 --hidden 16 --out 8 --batch 32]
(any layer size given: only that model, the others at the ToyModel's).
About 30 s on 2 cores.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LLVM = "/usr/lib/llvm-22"
K, W = 8, 2
NAMES = ["fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
RUNS = [("bf16 stash", "bf16", "--dist-no-sync-pipeline"),
        ("f32 stash", "bf16", "--dist-no-sync-pipeline=reduce-dtype=f32"),
        ("f32 model", "f32", "--dist-no-sync-pipeline")]


def bf16(a):
    """Rounds to bf16 (nearest, ties to even) on the float32 bits."""
    b = np.array(a, np.float32, ndmin=1).view(np.uint32).astype(np.uint64)
    b = ((b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    return b.view(np.float32).astype(np.float64).reshape(np.shape(a))


def reference(params, xs, ys, dtype):
    """G = (1/W) sum_r sum_k grad of the micro-batch loss, in float64."""
    rnd = bf16 if dtype == "bf16" else lambda v: np.float64(np.float32(v))
    c, k1, k3 = (rnd(v) for v in (0.7978845608028654, 0.044715, 0.134145))
    w1, b1, w2, b2 = params
    grads = [np.zeros_like(p) for p in params]
    for r in range(W):
        for i in range(K):
            x, y = xs[r, i], ys[r, i]
            h = x @ w1.T + b1
            th = np.tanh(c * (h + k1 * h ** 3))
            a = 0.5 * h * (1 + th)
            o = a @ w2.T + b2
            do = (o - y) * rnd(2 / (y.size * K))
            da = do @ w2
            dh = da * (0.5 * (1 + th) + 0.5 * h * (1 - th * th) * c * (1 + k3 * h * h))
            for g, v in zip(grads, (dh.T @ x, dh.sum(0), do.T @ a, do.sum(0))):
                g += v / W
    return grads


def ty(shape, dtype):
    return "tensor<" + "x".join(map(str, shape)) + f"x{dtype}>"


def const(name, a, dtype, lines):
    """%name: the f32 constant a (hex: exact), truncated to dtype."""
    f32, data = ty(a.shape, "f32"), np.ascontiguousarray(a, "<f4").tobytes().hex().upper()
    cst = f'arith.constant dense<"0x{data}"> : {f32}'
    lines += ([f"%{name} = {cst}"] if dtype == "f32" else [
        f"%{name}_f = {cst}", f"%{name} = arith.truncf %{name}_f : {f32} to {ty(a.shape, dtype)}"])


def main_ir(params, xs, ys, dtype, sharded):
    """The @main appended into the pipeline's module: one window, then prints."""
    local = [[p.shape[0] // W, *p.shape[1:]] if sharded else list(p.shape) for p in params]
    lines = ["func.func private @distrt_init(i64) -> i32",
             "func.func private @distrt_finalize() -> i32",
             "func.func private @distrt_check(i32)", "func.func private @distrt_rank() -> i64",
             "func.func private @printMemrefI32(memref<*xi32>)"]
    for i, s in enumerate(local):  # @show_i: gradient i as the bits of its f32 value
        t, f, m = ty(s, dtype), ty(s, "f32"), "memref<" + "x".join(map(str, s)) + "xi32>"
        ext = [f"%f = arith.extf %t : {t} to {f}"] if dtype != "f32" else []
        lines += [f"func.func @show_{i}(%{'t' if ext else 'f'}: {t}) {{", *ext,
                  f"%b = arith.bitcast %f : {f} to {ty(s, 'i32')}",
                  f"%m = bufferization.to_buffer %b read_only : {ty(s, 'i32')} to {m}",
                  f"%u = memref.cast %m : {m} to memref<*xi32>",
                  "call @printMemrefI32(%u) : (memref<*xi32>) -> ()", "return", "}"]
    lines += ["func.func @main() {", "%c0 = arith.constant 0 : i64",
              "%s = call @distrt_init(%c0) : (i64) -> i32",
              "call @distrt_check(%s) : (i32) -> ()", "%r64 = call @distrt_rank() : () -> i64",
              "%r = arith.index_cast %r64 : i64 to index"]
    for i, (p, s) in enumerate(zip(params, local)):
        const(f"p{i}", p, dtype, lines)
        if sharded:  # this rank's rows r*n/W .. of the parameter
            lines += [f"%n{i} = arith.constant {s[0]} : index",
                      f"%off{i} = arith.muli %r, %n{i} : index",
                      f"%p{i}s = tensor.extract_slice %p{i}[%off{i}{', 0' * (len(s) - 1)}] "
                      f"[{', '.join(map(str, s))}] [{', '.join(['1'] * len(s))}] : "
                      f"{ty(p.shape, dtype)} to {ty(s, dtype)}"]
    params_in = [f"%p{i}s" if sharded else f"%p{i}" for i in range(len(params))]
    const("xall", xs, dtype, lines)
    const("yall", ys, dtype, lines)
    types = ", ".join(ty(s, dtype) for s in local + [xs.shape[2:], ys.shape[2:]])

    def micro(k, call, results):  # micro-batch %k of this rank, then the call
        for v, a in (("x", xs), ("y", ys)):
            lines.append(f"%{v}{k} = tensor.extract_slice %{v}all[%r, %{k}, 0, 0] "
                         f"[1, 1, {a.shape[2]}, {a.shape[3]}] [1, 1, 1, 1] : "
                         f"{ty(a.shape, dtype)} to {ty(a.shape[2:], dtype)}")
        lines.append(f"{call}({', '.join(params_in)}, %x{k}, %y{k}) : ({types}) -> ({results})")

    lines += ["%lo = arith.constant 0 : index", f"%last = arith.constant {K - 1} : index",
              "%one = arith.constant 1 : index", "scf.for %k = %lo to %last step %one {"]
    micro("k", "func.call @step_no_sync", ty([1], dtype))  # returns the loss only
    lines.append("}")
    micro("last", "%g:5 = func.call @step", ", ".join(ty(s, dtype) for s in [[1]] + local))
    lines += [f"call @show_{i}(%g#{i + 1}) : ({ty(s, dtype)}) -> ()" for i, s in enumerate(local)]
    lines += ["%f = call @distrt_finalize() : () -> i32", "call @distrt_check(%f) : (i32) -> ()",
              "return", "}", "}"]
    return "\n".join(lines) + "\n"


def sh(cmd, stdin=None):
    out = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{out.stdout[-3000:]}{out.stderr[-3000:]}")
    return out.stdout


def run_one(a, tmp, mode, dims, dtype, pipeline, params, xs, ys):
    """Compiles and runs one configuration: the synced gradients (ddp: each
    rank's copy, zero2: the shards joined), the window's and gradients' bytes."""
    dist_opt = f"{a.build}/bin/dist-opt"
    step = sh([sys.executable, f"{ROOT}/examples/gen_toy.py", "--mode", mode, "--world", str(W),
               "--k", str(K), "--in", str(dims[0]), "--hidden", str(dims[1]), "--out",
               str(dims[2]), "--batch", str(dims[3]), "--dtype", dtype])
    piped = sh([dist_opt, pipeline], step)
    report = sh([dist_opt, "-dist-comm-report=micro-batches=8", "-o", os.devnull], piped)
    total = int(re.search(r"no_sync \(one round\)\s+(\d+) bytes", report).group(1))
    grad = sum(int(m.group(1)) * int(m.group(2)) for m in re.finditer(
        r"^step\s+\S+\s+\d+\s+\S+\s+(\d+)\s+\S+\s+(\d+)\s+@", report, re.M))
    module = "".join(l for l in piped.splitlines(True) if l.rstrip("\n") != "}")
    src = os.path.join(tmp, "run.mlir")
    with open(src, "w") as f:
        f.write(module + main_ir(params, xs, ys, dtype, mode != "ddp"))
    llvm = os.path.join(tmp, "run.ll.mlir")
    sh([dist_opt, src, "--dist-lower-to-llvm", "-o", llvm])
    outdir = tempfile.mkdtemp(dir=tmp)
    mpi = ["mpirun", "--oversubscribe", "--output-filename", outdir, "-np", str(W)]
    if os.geteuid() == 0:
        mpi.insert(1, "--allow-run-as-root")
    libs = [f"{LLVM}/lib/libmlir_runner_utils.so", f"{LLVM}/lib/libmlir_c_runner_utils.so",
            f"{a.build}/lib/libdist_runtime.so"]
    sh(mpi + [f"{LLVM}/bin/mlir-runner", llvm, "-e", "main", "-entry-point-result=void",
              "-shared-libs=" + ",".join(libs)])
    grads = []
    for r in range(W):
        with open(os.path.join(outdir, "1", f"rank.{r}", "stdout")) as f:
            chunks = f.read().split("Unranked Memref")[1:]
        if len(chunks) != 4:
            sys.exit(f"rank {r}: expected 4 printed gradients, got {len(chunks)}")
        grads.append([np.array([int(v) for v in re.findall(r"-?\d+", c.split("data =")[1])],
                               np.int64).astype(np.uint32).view(np.float32).astype(np.float64)
                      for c in chunks])
    if mode == "zero2":  # the shards in rank order make the gradient
        grads = [[np.concatenate([g[i] for g in grads]) for i in range(4)]]
    return [[g.reshape(p.shape) for g, p in zip(c, params)] for c in grads], total, grad


def errors(copies, ref):
    """Per gradient max |dist - ref| / max |ref|, and ||dist - ref|| / ||ref|| over
    all four; the worst over the copies (ddp: each rank's)."""
    per = [max(np.abs(c[i] - g).max() for c in copies) / np.abs(g).max()
           for i, g in enumerate(ref)]
    norm = max(np.sqrt(sum(((c[i] - g) ** 2).sum() for i, g in enumerate(ref))) for c in copies)
    return per, norm / np.sqrt(sum((g ** 2).sum() for g in ref))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.environ.get("BUILD_DIR", f"{ROOT}/build"))
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", help="write the raw figures here")
    for opt in ("in", "hidden", "out", "batch"):
        p.add_argument(f"--{opt}", dest=opt, type=int)
    a = p.parse_args()
    sizes = [getattr(a, o) for o in ("in", "hidden", "out", "batch")]
    models = ({"model": [v or d for v, d in zip(sizes, (12, 16, 8, 32))]} if any(sizes) else
              {"toy": (12, 16, 8, 32), "wide": (64, 256, 64, 32)})
    rows, failed = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for model, dims in models.items():
            IN, HID, OUT, B = dims
            rng = np.random.default_rng(a.seed)
            params = [bf16(rng.standard_normal(s) * 0.3) for s in
                      ([HID, IN], [HID], [OUT, HID], [OUT])]
            xs = bf16(rng.standard_normal((W, K, B, IN)))
            ys = bf16(rng.standard_normal((W, K, B, OUT)))
            ref = {d: reference(params, xs, ys, d) for d in ("bf16", "f32")}
            for mode in ("ddp", "zero2"):
                got = {}
                for name, dtype, pipeline in RUNS:
                    copies, total, grad = run_one(a, tmp, mode, dims, dtype, pipeline,
                                                  params, xs, ys)
                    per, norm = errors(copies, ref[dtype])
                    got[name] = dict(mode=mode, model=model, dims=list(dims), run=name,
                                     pipeline=pipeline, errors=dict(zip(NAMES, per)),
                                     max_error=max(per), norm_error=norm,
                                     window_bytes=total, grad_bytes=grad)
                    rows.append(got[name])
                    print(f"{mode} {model} {name}: max error {max(per):.3g}", flush=True)
                # The floor: the exact gradient rounded once to bf16.
                per, norm = errors([[bf16(g) for g in ref["bf16"]]], ref["bf16"])
                rows.append(dict(mode=mode, model=model, dims=list(dims), run="ref in bf16",
                                 errors=dict(zip(NAMES, per)), max_error=max(per),
                                 norm_error=norm))
                ratio = got["bf16 stash"]["max_error"] / got["f32 stash"]["max_error"]
                got["bf16 stash"]["ratio"] = ratio
                if not ratio > 1:
                    failed.append(f"{mode} {model}: the f32 stash is not more accurate")
                if got["f32 model"]["max_error"] > 1e-5:
                    failed.append(f"{mode} {model}: the f32 model's error is not at f32 level")
    print(f"\nW = {W}, K = {K}, seed {a.seed}; error per gradient = max |dist - ref| / max |ref|,"
          " norm = ||dist - ref|| / ||ref|| over the four")
    print("| mode | model | run | " + " | ".join(NAMES) + " | max | norm | bf16/f32 stash "
          "| window bytes | gradient bytes |\n|" + "---|" * 12)
    for r in rows:
        ratio = f"{r['ratio']:.2f}" if "ratio" in r else ""
        print(f"| {r['mode']} | {r['model']} {'x'.join(map(str, r['dims'][:3]))} | {r['run']} | "
              + " | ".join(f"{e:.2e}" for e in r["errors"].values())
              + f" | {r['max_error']:.2e} | {r['norm_error']:.2e} | {ratio} | "
              f"{r.get('window_bytes', '')} | {r.get('grad_bytes', '')} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    for msg in failed:
        print("FAILED:", msg)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
