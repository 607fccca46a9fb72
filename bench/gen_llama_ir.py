#!/usr/bin/env python3
"""Writes a Llama-shaped training step in the frontend model of docs/Design.md.

Each layer has the nine parameters of a Llama block: attn_norm, wq, wk, wv,
wo, ffn_norm, w_gate, w_up, w_down, with Llama's shapes. The math is a
simplified block (no softmax, no rotary embedding, SwiGLU without the SiLU),
enough to give every parameter a realistic gradient computation: each weight
gradient is dY^T X over the tokens, each norm gradient a token reduction.

The forward brings every parameter in with dist.synchronize; the backward
returns each local gradient tied to its parameter with dist.grad, plus the
gradient of the block input. Modes:
  ddp    every parameter replicated
  zero2  every parameter fully sharded; the backward reads the gathered
         weights kept from the forward (untied arguments)
  zero3  every parameter fully sharded; the backward gathers them again
  hsdp   like zero3 on a 2-D mesh [W/S, S] (S: --shard-size, default W/2):
         sharded in the node, replicated
         across the two nodes

Example:
  bench/gen_llama_ir.py --layers 32 --hidden 4096 --ffn 11008 --mode zero3
"""

import argparse
import sys


# The compute type (--param-dtype); parameters are held in f32.
DT = "f32"


def tensor(shape, dtype=None):
    return "tensor<" + "x".join(str(d) for d in shape) + "x" + (dtype or DT) + ">"


class Writer:
    def __init__(self):
        self.lines = []
        self.n = 0

    def fresh(self, stem):
        self.n += 1
        return f"%{stem}{self.n}"

    def emit(self, line):
        self.lines.append("  " + line)

    def zeros(self, shape):
        e, z = self.fresh("e"), self.fresh("z")
        self.emit(f"{e} = tensor.empty() : {tensor(shape)}")
        self.emit(f"{z} = linalg.fill ins(%zero : {DT}) outs({e} : {tensor(shape)}) -> {tensor(shape)}")
        return z

    def matmul(self, a, a_shape, b, b_shape, out_shape, maps):
        """out = sum_k a*b with the given indexing maps (3-D iteration)."""
        init = self.zeros(out_shape)
        r = self.fresh("mm")
        self.emit(f"{r} = linalg.generic {{indexing_maps = [{maps}], "
                  f"iterator_types = [\"parallel\", \"parallel\", \"reduction\"]}} "
                  f"ins({a}, {b} : {tensor(a_shape)}, {tensor(b_shape)}) "
                  f"outs({init} : {tensor(out_shape)}) {{")
        self.emit(f"^bb0(%a: {DT}, %b: {DT}, %acc: {DT}):")
        self.emit(f"  %p = arith.mulf %a, %b : {DT}")
        self.emit(f"  %s = arith.addf %acc, %p : {DT}")
        self.emit(f"  linalg.yield %s : {DT}")
        self.emit(f"}} -> {tensor(out_shape)}")
        return r

    def elementwise(self, op, a, b, shape, b_map="#rows"):
        e = self.fresh("e")
        r = self.fresh("ew")
        self.emit(f"{e} = tensor.empty() : {tensor(shape)}")
        b_shape = shape if b_map == "#rows" else [shape[1]]
        self.emit(f"{r} = linalg.generic {{indexing_maps = [#rows, {b_map}, #rows], "
                  f"iterator_types = [\"parallel\", \"parallel\"]}} "
                  f"ins({a}, {b} : {tensor(shape)}, {tensor(b_shape)}) "
                  f"outs({e} : {tensor(shape)}) {{")
        self.emit(f"^bb0(%a: {DT}, %b: {DT}, %o: {DT}):")
        self.emit(f"  %r = arith.{op} %a, %b : {DT}")
        self.emit(f"  linalg.yield %r : {DT}")
        self.emit(f"}} -> {tensor(shape)}")
        return r

    def column_sum(self, a, b, shape):
        """sum over tokens of a*b: the gradient of a norm weight."""
        init = self.zeros([shape[1]])
        r = self.fresh("ns")
        self.emit(f"{r} = linalg.generic {{indexing_maps = [#tok, #tok, #col_out], "
                  f"iterator_types = [\"parallel\", \"reduction\"]}} "
                  f"ins({a}, {b} : {tensor(shape)}, {tensor(shape)}) "
                  f"outs({init} : {tensor([shape[1]])}) {{")
        self.emit(f"^bb0(%a: {DT}, %b: {DT}, %acc: {DT}):")
        self.emit(f"  %p = arith.mulf %a, %b : {DT}")
        self.emit(f"  %s = arith.addf %acc, %p : {DT}")
        self.emit(f"  linalg.yield %s : {DT}")
        self.emit(f"}} -> {tensor([shape[1]])}")
        return r


# y[t, n] = sum_k x[t, k] * W[n, k]
MM_XWT = "#mm_x, #mm_w, #mm_y"
# dW[n, k] = sum_t dy[t, n] * x[t, k]
MM_DW = "#dw_dy, #dw_x, #dw_out"
# dx[t, k] = sum_n dy[t, n] * W[n, k]
MM_DX = "#dx_dy, #dx_w, #dx_out"

MAPS = """#mm_x = affine_map<(t, n, k) -> (t, k)>
#mm_w = affine_map<(t, n, k) -> (n, k)>
#mm_y = affine_map<(t, n, k) -> (t, n)>
#dw_dy = affine_map<(n, k, t) -> (t, n)>
#dw_x = affine_map<(n, k, t) -> (t, k)>
#dw_out = affine_map<(n, k, t) -> (n, k)>
#dx_dy = affine_map<(t, k, n) -> (t, n)>
#dx_w = affine_map<(t, k, n) -> (n, k)>
#dx_out = affine_map<(t, k, n) -> (t, k)>
#rows = affine_map<(t, h) -> (t, h)>
#bcast = affine_map<(t, h) -> (h)>
#tok = affine_map<(h, t) -> (t, h)>
#col_out = affine_map<(h, t) -> (h)>
"""


def parameters(layers, hidden, ffn, vocab):
    params = [("tok_embeddings", [vocab, hidden])] if vocab else []
    for l in range(layers):
        p = f"layers.{l}."
        params += [
            (p + "attn_norm", [hidden]),
            (p + "wq", [hidden, hidden]),
            (p + "wk", [hidden, hidden]),
            (p + "wv", [hidden, hidden]),
            (p + "wo", [hidden, hidden]),
            (p + "ffn_norm", [hidden]),
            (p + "w_gate", [ffn, hidden]),
            (p + "w_up", [ffn, hidden]),
            (p + "w_down", [hidden, ffn]),
        ]
    if vocab:
        params.append(("output", [vocab, hidden]))
    return params


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--layers", type=int, default=1)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--ffn", type=int, default=None, help="default: 8/3 hidden rounded to 16")
    ap.add_argument("--tokens", type=int, default=16)
    ap.add_argument("--world", type=int, default=2)
    ap.add_argument("--mode", choices=["ddp", "zero2", "zero3", "hsdp"], default="zero3")
    ap.add_argument("--shard-size", type=int, default=0,
                    help="hsdp: ranks a parameter is sharded over (default W/2)")
    ap.add_argument("--param-dtype", choices=["f32", "bf16"], default="f32",
                    help="FSDP's MixedPrecisionPolicy: compute (and gather) "
                         "in this type, parameters held and gradients "
                         "reduced in f32 (not with --mode ddp)")
    ap.add_argument("--vocab", type=int, default=0,
                    help="add Llama's token embedding and output head, "
                         "[vocab, hidden] each (the embedding is gathered "
                         "and gets a gradient; its lookup computes nothing)")
    args = ap.parse_args()
    global DT
    DT = args.param_dtype
    if DT != "f32" and args.mode == "ddp":
        sys.exit("gen_llama_ir.py: --param-dtype needs a sharded --mode")
    policy = f" param_dtype = {DT} reduce_dtype = f32" if DT != "f32" else ""
    hidden, tokens, world = args.hidden, args.tokens, args.world
    ffn = args.ffn or ((8 * hidden // 3 + 15) // 16 * 16)
    sharded = args.mode != "ddp"
    if args.mode == "hsdp":
        shard_w = args.shard_size or world // 2
        if shard_w < 1 or world % shard_w or world == shard_w:
            sys.exit("gen_llama_ir.py: hsdp needs a --shard-size that divides "
                     "--world into two or more replicas (an even --world by default)")
        mesh = f"dist.mesh @mesh shape = [{world // shard_w}, {shard_w}]"
        kind = "fully_sharded on @mesh axes = [1] replicate_axes = [0]"
        sync_group = "@mesh axes = [1]"
    else:
        shard_w = world
        mesh = f"dist.mesh @mesh shape = [{world}]"
        kind = ("fully_sharded" if sharded else "replicated") + " on @mesh"
        sync_group = "@mesh"
    params = parameters(args.layers, hidden, ffn, args.vocab)
    for name, shape in params:
        if sharded and shape[0] % shard_w:
            sys.exit(f"gen_llama_ir.py: dim 0 of {name} ({shape[0]}) is not divisible by {shard_w}")

    def local(shape):
        return [shape[0] // shard_w] + shape[1:] if sharded else shape

    out = [f"// Generated by bench/gen_llama_ir.py --layers {args.layers} --hidden {hidden} "
           f"--ffn {ffn} --tokens {tokens} --world {world} --mode {args.mode}"
           + (f" --vocab {args.vocab}" if args.vocab else "")
           + (f" --param-dtype {DT}" if DT != "f32" else "")
           + (f" --shard-size {args.shard_size}" if args.shard_size else ""), "", mesh]
    for name, shape in params:
        out.append(f"dist.parameter @\"{name}\" : {tensor(local(shape), 'f32')} {kind}{policy}")
    out.append("")
    out.append(MAPS)

    sync_kind = "fully_sharded" if sharded else "replicated"

    def synchronize(w, arg, shape):
        full = w.fresh("p")
        w.emit(f"{full} = dist.synchronize {arg} on {sync_group} kind = {sync_kind} "
               f": {tensor(local(shape), 'f32')} -> {tensor(shape)}")
        return full

    # Forward.
    fw = Writer()
    fw.emit(f"%zero = arith.constant 0.0 : {DT}")
    full = {}
    for i, (name, shape) in enumerate(params):
        full[name] = synchronize(fw, f"%arg{i}", shape)
    h = "%x"
    act = [tokens, hidden]
    for l in range(args.layers):
        p = f"layers.{l}."
        n = fw.elementwise("mulf", h, full[p + "attn_norm"], act, "#bcast")
        q = fw.matmul(n, act, full[p + "wq"], [hidden, hidden], act, MM_XWT)
        k = fw.matmul(n, act, full[p + "wk"], [hidden, hidden], act, MM_XWT)
        v = fw.matmul(n, act, full[p + "wv"], [hidden, hidden], act, MM_XWT)
        a = fw.elementwise("addf", fw.elementwise("mulf", q, k, act), v, act)
        o = fw.matmul(a, act, full[p + "wo"], [hidden, hidden], act, MM_XWT)
        h = fw.elementwise("addf", h, o, act)
        n2 = fw.elementwise("mulf", h, full[p + "ffn_norm"], act, "#bcast")
        g = fw.matmul(n2, act, full[p + "w_gate"], [ffn, hidden], [tokens, ffn], MM_XWT)
        u = fw.matmul(n2, act, full[p + "w_up"], [ffn, hidden], [tokens, ffn], MM_XWT)
        gu = fw.elementwise("mulf", g, u, [tokens, ffn])
        d = fw.matmul(gu, [tokens, ffn], full[p + "w_down"], [hidden, ffn], act, MM_XWT)
        h = fw.elementwise("addf", h, d, act)
    out_act = act
    if args.vocab:
        out_act = [tokens, args.vocab]
        h = fw.matmul(h, act, full["output"], [args.vocab, hidden], out_act, MM_XWT)
    fw.emit(f"return {h} : {tensor(out_act)}")
    fargs = ", ".join(f"%arg{i}: {tensor(local(s), 'f32')} {{dist.param = @\"{n}\"}}"
                      for i, (n, s) in enumerate(params))
    out.append(f"func.func @forward({fargs}, %x: {tensor(act)}) -> {tensor(out_act)} {{")
    out += fw.lines
    out.append("}")
    out.append("")

    # Backward: the saved input and output gradient of every parameter use.
    bw = Writer()
    bw.emit(f"%zero = arith.constant 0.0 : {DT}")
    bargs = []
    grads = []
    weights = {}
    for i, (name, shape) in enumerate(params):
        if args.mode in ("zero3", "hsdp"):
            bargs.append(f"%w{i}: {tensor(local(shape), 'f32')} {{dist.param = @\"{name}\"}}")
            weights[name] = synchronize(bw, f"%w{i}", shape)
        elif args.mode == "ddp":
            bargs.append(f"%w{i}: {tensor(shape)} {{dist.param = @\"{name}\"}}")
            weights[name] = f"%w{i}"
        else:  # zero2: the gathered weights kept from the forward
            bargs.append(f"%w{i}: {tensor(shape)}")
            weights[name] = f"%w{i}"
    for i, (name, shape) in enumerate(params):
        rows = [tokens, shape[1]] if len(shape) == 2 else act
        outs = [tokens, shape[0]]
        bargs.append(f"%in{i}: {tensor(rows)}")
        bargs.append(f"%dout{i}: {tensor(outs)}")
        if len(shape) == 1:
            grads.append(bw.column_sum(f"%dout{i}", f"%in{i}", act))
        else:
            grads.append(bw.matmul(f"%dout{i}", outs, f"%in{i}", rows, shape, MM_DW))
    # The gradient of the block input flows through the first projection.
    wq = next(p for p in params if p[0] == "layers.0.wq")
    dx = bw.matmul(f"%dout{params.index(wq)}", [tokens, hidden], weights[wq[0]],
                   wq[1], act, MM_DX)
    results = ", ".join(f"{tensor(s)} {{dist.grad = @\"{n}\"}}" for n, s in params)
    bw.emit(f"return {', '.join(grads)}, {dx} : "
            f"{', '.join(tensor(s) for _, s in params)}, {tensor(act)}")
    out.append(f"func.func @backward({', '.join(bargs)}) -> ({results}, {tensor(act)}) {{")
    out += bw.lines
    out.append("}")
    print("\n".join(out))


if __name__ == "__main__":
    main()
