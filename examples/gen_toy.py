#!/usr/bin/env python3
"""Writes the ToyModel training step of ../shared/BACKGROUND.md in linalg.

ToyModel: Linear(12, 16) -> gelu (tanh approximation) -> Linear(16, 8), MSE
loss over a micro-batch of 32, divided by the K micro-batches of a window.
One joint function does forward, loss and backward:

  @step(fc1.weight, fc1.bias, fc2.weight, fc2.bias, x, y)
      -> (loss, d fc1.weight, d fc1.bias, d fc2.weight, d fc2.bias)

Parameters enter through dist.synchronize; gradients are returned local and
tied to their parameters. Modes:
  ddp    parameters replicated
  zero2  parameters sharded along dim 0; the backward uses the weights
         gathered by the forward
  zero3  parameters sharded; the backward gathers them again
  hsdp   like zero3 on a 2-D mesh [2, W/2]: sharded along axis 1 (within a
         node), replicated along axis 0 (across nodes); with the pipeline's
         hsdp-partial option no_sync keeps the intra-node reduce_scatter

The layer widths are options (defaults: the ToyModel's 12, 16, 8), so the
benchmarks can build a wider MLP of the same shape (bench/README.md).
--stash NAME=POINT gives a parameter its own `stash` attribute (local, shard
or synced), which the pipeline's stash-budget keeps and counts.

Usage: gen_toy.py --mode zero3 --world 2 [--k 4] [--batch 32]
                  [--in 12] [--hidden 16] [--out 8] [--stash NAME=POINT]...
"""

import argparse
import re


def t(shape):
    return "tensor<" + "x".join(map(str, shape)) + "xf32>"


class W:
    def __init__(self):
        self.lines, self.n = [], 0

    def v(self, stem):
        self.n += 1
        return f"%{stem}{self.n}"

    def emit(self, s):
        self.lines.append("  " + s)

    def empty(self, shape):
        e = self.v("e")
        self.emit(f"{e} = tensor.empty() : {t(shape)}")
        return e

    def zeros(self, shape):
        z = self.v("z")
        self.emit(f"{z} = linalg.fill ins(%zero : f32) outs({self.empty(shape)} : {t(shape)}) -> {t(shape)}")
        return z

    def generic(self, maps, iters, ins, outs_shape, body, init=None):
        """body: list of lines using %a0.. for inputs and %acc for the output."""
        out = init or self.empty(outs_shape)
        r = self.v("g")
        ins_s = ", ".join(v for v, _ in ins)
        ins_t = ", ".join(t(s) for _, s in ins)
        its = ", ".join(f'"{i}"' for i in iters)
        self.emit(f"{r} = linalg.generic {{indexing_maps = [{', '.join(maps)}], iterator_types = [{its}]}}")
        self.emit(f"    ins({ins_s} : {ins_t}) outs({out} : {t(outs_shape)}) {{")
        args = ", ".join(f"%a{i}: f32" for i in range(len(ins)))
        self.emit(f"^bb0({args}, %acc: f32):")
        for line in body:
            self.emit("  " + line)
        self.emit(f"}} -> {t(outs_shape)}")
        return r

    def matmul(self, maps, a, sa, b, sb, out):
        return self.generic(maps, ["parallel", "parallel", "reduction"],
                            [(a, sa), (b, sb)], out,
                            ["%p = arith.mulf %a0, %a1 : f32", "%s = arith.addf %acc, %p : f32",
                             "linalg.yield %s : f32"], init=self.zeros(out))

    def mm_abt(self, a, sa, b, sb):  # y[m, n] = sum_k a[m, k] b[n, k]
        return self.matmul(["#m_k", "#n_k", "#m_n"], a, sa, b, sb, [sa[0], sb[0]])

    def mm_atb(self, a, sa, b, sb):  # y[n, k] = sum_m a[m, n] b[m, k]
        return self.matmul(["#tn_m", "#tk_m", "#t_nk"], a, sa, b, sb, [sa[1], sb[1]])

    def mm_ab(self, a, sa, b, sb):  # y[m, k] = sum_n a[m, n] b[n, k]
        return self.matmul(["#am_n", "#bn_k", "#cm_k"], a, sa, b, sb, [sa[0], sb[1]])

    def add_bias(self, a, sa, b):
        return self.generic(["#rows", "#bias", "#rows"], ["parallel", "parallel"],
                            [(a, sa), (b, [sa[1]])], sa,
                            ["%s = arith.addf %a0, %a1 : f32", "linalg.yield %s : f32"])

    def colsum(self, a, sa):
        out = [sa[1]]
        return self.generic(["#rows", "#bias"], ["parallel", "reduction"], [(a, sa)], out,
                            ["%s = arith.addf %acc, %a0 : f32", "linalg.yield %s : f32"],
                            init=self.zeros(out))


GELU = [  # a0 = h: gelu(h) = 0.5 h (1 + tanh(c (h + 0.044715 h^3)))
    "%c = arith.constant 0.7978845608028654 : f32",
    "%k = arith.constant 0.044715 : f32",
    "%half = arith.constant 0.5 : f32",
    "%one = arith.constant 1.0 : f32",
    "%h2 = arith.mulf %a0, %a0 : f32",
    "%h3 = arith.mulf %h2, %a0 : f32",
    "%kh3 = arith.mulf %k, %h3 : f32",
    "%in = arith.addf %a0, %kh3 : f32",
    "%u = arith.mulf %c, %in : f32",
    "%th = math.tanh %u : f32",
    "%op = arith.addf %one, %th : f32",
    "%hh = arith.mulf %half, %a0 : f32",
    "%g = arith.mulf %hh, %op : f32",
    "linalg.yield %g : f32",
]

GELU_GRAD = [  # a0 = h, a1 = upstream: a1 * gelu'(h)
    "%c = arith.constant 0.7978845608028654 : f32",
    "%k = arith.constant 0.044715 : f32",
    "%k3 = arith.constant 0.134145 : f32",
    "%half = arith.constant 0.5 : f32",
    "%one = arith.constant 1.0 : f32",
    "%h2 = arith.mulf %a0, %a0 : f32",
    "%h3 = arith.mulf %h2, %a0 : f32",
    "%kh3 = arith.mulf %k, %h3 : f32",
    "%in = arith.addf %a0, %kh3 : f32",
    "%u = arith.mulf %c, %in : f32",
    "%th = math.tanh %u : f32",
    "%op = arith.addf %one, %th : f32",
    "%left = arith.mulf %half, %op : f32",
    "%th2 = arith.mulf %th, %th : f32",
    "%sech2 = arith.subf %one, %th2 : f32",
    "%k3h2 = arith.mulf %k3, %h2 : f32",
    "%du0 = arith.addf %one, %k3h2 : f32",
    "%du = arith.mulf %c, %du0 : f32",
    "%hh = arith.mulf %half, %a0 : f32",
    "%r0 = arith.mulf %hh, %sech2 : f32",
    "%right = arith.mulf %r0, %du : f32",
    "%d = arith.addf %left, %right : f32",
    "%g = arith.mulf %d, %a1 : f32",
    "linalg.yield %g : f32",
]

MAPS = """#m_k = affine_map<(m, n, k) -> (m, k)>
#n_k = affine_map<(m, n, k) -> (n, k)>
#m_n = affine_map<(m, n, k) -> (m, n)>
#tn_m = affine_map<(n, k, m) -> (m, n)>
#tk_m = affine_map<(n, k, m) -> (m, k)>
#t_nk = affine_map<(n, k, m) -> (n, k)>
#am_n = affine_map<(m, k, n) -> (m, n)>
#bn_k = affine_map<(m, k, n) -> (n, k)>
#cm_k = affine_map<(m, k, n) -> (m, k)>
#rows = affine_map<(m, n) -> (m, n)>
#bias = affine_map<(m, n) -> (n)>
#all = affine_map<(m, n) -> (0)>
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mode", choices=["ddp", "zero2", "zero3", "hsdp"], required=True)
    ap.add_argument("--world", type=int, required=True)
    ap.add_argument("--k", type=int, default=4)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--in", dest="inp", type=int, default=12)
    ap.add_argument("--hidden", type=int, default=16)
    ap.add_argument("--out", type=int, default=8)
    ap.add_argument("--dtype", choices=["f32", "f16", "bf16", "f64"], default="f32",
                    help="element type of parameters, data and compute")
    ap.add_argument("--stash", action="append", default=[], metavar="NAME=POINT",
                    help="the `stash` attribute of parameter NAME (e.g. fc1.bias=synced)")
    a = ap.parse_args()
    w, k, b = a.world, a.k, a.batch
    IN, HID, OUT = a.inp, a.hidden, a.out
    PARAMS = [("fc1.weight", [HID, IN]), ("fc1.bias", [HID]),
              ("fc2.weight", [OUT, HID]), ("fc2.bias", [OUT])]
    stash = {}
    for item in a.stash:
        name, _, point = item.partition("=")
        if name not in dict(PARAMS) or point not in ("local", "shard", "synced"):
            ap.error(f"--stash {item}: expected NAME=POINT with NAME one of "
                     + ", ".join(n for n, _ in PARAMS) + " and POINT local, shard or synced")
        stash[name] = point
    sharded = a.mode != "ddp"
    if a.mode == "hsdp" and (w % 2 or w < 4):
        ap.error("hsdp needs an even --world of at least 4 (a [2, W/2] mesh)")
    shards = w // 2 if a.mode == "hsdp" else w
    if sharded and (HID % shards or OUT % shards):
        ap.error(f"--hidden {HID} and --out {OUT} must be divisible by {shards} "
                 "to shard the parameters along dim 0")

    def local(shape):
        return [shape[0] // shards] + shape[1:] if sharded else shape

    out = [f"// Generated by examples/gen_toy.py --mode {a.mode} --world {w} --k {k} --batch {b}"
           f" --in {IN} --hidden {HID} --out {OUT}"
           + "".join(f" --stash {n}={p}" for n, p in stash.items()),
           f"dist.mesh @world shape = [{w}]" if a.mode != "hsdp" else
           f"dist.mesh @world shape = [2, {shards}]"]
    kind = "fully_sharded" if sharded else "replicated"
    group = "@world axes = [1]" if a.mode == "hsdp" else "@world"
    placement = f"{kind} on {group}" + (" replicate_axes = [0]" if a.mode == "hsdp" else "")
    for name, shape in PARAMS:
        own = f" stash = {stash[name]}" if name in stash else ""
        out.append(f'dist.parameter @"{name}" : {t(local(shape))} {placement}{own}')
    out.append(MAPS)

    g = W()
    g.emit("%zero = arith.constant 0.0 : f32")

    def sync(i):
        name, shape = PARAMS[i]
        r = g.v("p")
        g.emit(f"{r} = dist.synchronize %arg{i} on {group} kind = {kind} : {t(local(shape))} -> {t(shape)}")
        return r

    w1, b1, w2, b2 = (sync(i) for i in range(4))
    h = g.add_bias(g.mm_abt("%x", [b, IN], w1, [HID, IN]), [b, HID], b1)
    act = g.generic(["#rows", "#rows"], ["parallel", "parallel"], [(h, [b, HID])], [b, HID], GELU)
    o = g.add_bias(g.mm_abt(act, [b, HID], w2, [OUT, HID]), [b, OUT], b2)
    # loss = sum((o - y)^2) / (batch * OUT) / K ; do = 2 (o - y) / (batch * OUT * K)
    scale = 1.0 / (b * OUT * k)
    diff = g.generic(["#rows", "#rows", "#rows"], ["parallel", "parallel"],
                     [(o, [b, OUT]), ("%y", [b, OUT])], [b, OUT],
                     ["%s = arith.subf %a0, %a1 : f32", "linalg.yield %s : f32"])
    loss = g.generic(["#rows", "#all"], ["reduction", "reduction"], [(diff, [b, OUT])], [1],
                     ["%sq = arith.mulf %a0, %a0 : f32",
                      f"%sc = arith.constant {scale!r} : f32",
                      "%t = arith.mulf %sq, %sc : f32",
                      "%s = arith.addf %acc, %t : f32", "linalg.yield %s : f32"],
                     init=g.zeros([1]))
    do = g.generic(["#rows", "#rows"], ["parallel", "parallel"], [(diff, [b, OUT])], [b, OUT],
                   [f"%sc = arith.constant {2 * scale!r} : f32",
                    "%s = arith.mulf %a0, %sc : f32", "linalg.yield %s : f32"])
    # Backward. ZeRO-3 gathers the weights again; the others reuse them.
    if a.mode in ("zero3", "hsdp"):
        w1b, _, w2b, _ = (sync(i) for i in range(4))
    else:
        w1b, w2b = w1, w2
    gw2 = g.mm_atb(do, [b, OUT], act, [b, HID])
    gb2 = g.colsum(do, [b, OUT])
    da = g.mm_ab(do, [b, OUT], w2b, [OUT, HID])
    dh = g.generic(["#rows", "#rows", "#rows"], ["parallel", "parallel"],
                   [(h, [b, HID]), (da, [b, HID])], [b, HID], GELU_GRAD)
    gw1 = g.mm_atb(dh, [b, HID], "%x", [b, IN])
    gb1 = g.colsum(dh, [b, HID])
    g.emit(f"return {loss}, {gw1}, {gb1}, {gw2}, {gb2} : tensor<1xf32>, "
           + ", ".join(t(s) for _, s in PARAMS))
    args = ", ".join(f'%arg{i}: {t(local(s))} {{dist.param = @"{n}"}}'
                     for i, (n, s) in enumerate(PARAMS))
    results = ", ".join(f'{t(s)} {{dist.grad = @"{n}"}}' for n, s in PARAMS)
    out.append(f"func.func @step({args}, %x: {t([b, IN])}, %y: {t([b, OUT])})")
    out.append(f"    -> (tensor<1xf32>, {results}) {{")
    out += g.lines
    out.append("}")
    text = "\n".join(out)
    if a.dtype != "f32":
        # Every value of the model in the other type (its constants round).
        text = re.sub(r"\bf32\b", a.dtype, text.replace("xf32>", f"x{a.dtype}>"))
    print(text)


if __name__ == "__main__":
    main()
