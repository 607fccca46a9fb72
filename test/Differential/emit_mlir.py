"""Writes a gen_case.Case as @step in the frontend model of docs/Design.md.

One function: forward (each parameter brought in with dist.synchronize),
the MSE loss scaled by 1/K, and the hand-written backward returning each
parameter's local, unsynchronized gradient (unsharded type) tied with
{dist.grad = @p}, plus untied results (loss, dx, a gradient norm). ZeRO-3
and HSDP-3 parameters are synchronized again in the backward; ZeRO-2, HSDP-2
(and half of the DDP ones) reuse the forward's value. `style` picks the
spelling of matmuls and sums: linalg.generic, or named linalg ops and
arith on tensors.
"""

from emit_sync import explicit_sync
from mlir_text import f32, group as _group, ty  # ty: emit_epilogue.py imports it here


MAPS = """#mm_a = affine_map<(m, n, k) -> (m, k)>
#mm_b = affine_map<(m, n, k) -> (n, k)>
#mm_c = affine_map<(m, n, k) -> (m, n)>
#tn_a = affine_map<(n, k, m) -> (m, n)>
#tn_b = affine_map<(n, k, m) -> (m, k)>
#tn_c = affine_map<(n, k, m) -> (n, k)>
#nn_a = affine_map<(m, k, n) -> (m, n)>
#nn_b = affine_map<(m, k, n) -> (n, k)>
#nn_c = affine_map<(m, k, n) -> (m, k)>
#id2 = affine_map<(m, n) -> (m, n)>
#col = affine_map<(m, n) -> (n)>
#to0 = affine_map<(m, n) -> (0)>
#tos = affine_map<(m, n) -> ()>
#id1 = affine_map<(n) -> (n)>
#to0_1 = affine_map<(n) -> (0)>
#tos1 = affine_map<(n) -> ()>
"""

GELU_C = "0.7978845608028654"  # sqrt(2 / pi)


class Emitter:
    def __init__(self, style):
        self.lines = []
        self.n = 0
        self.style = style

    def fresh(self, stem="v"):
        self.n += 1
        return "%%_%s%d" % (stem, self.n)  # "_": never an SSA name of a region body

    def emit(self, text):
        self.lines.append("  " + text)

    def init(self, shape, value="%zero"):
        e, z = self.fresh("e"), self.fresh("z")
        self.emit("%s = tensor.empty() : %s" % (e, ty(shape)))
        self.emit("%s = linalg.fill ins(%s : f32) outs(%s : %s) -> %s"
                  % (z, value, e, ty(shape), ty(shape)))
        return z

    def generic(self, maps, iters, ins, out, out_shape, body):
        """ins: [(value, shape)]; out: the init value; body: lines using
        %a0.. for the inputs and %acc, ending in a value named by `yield`."""
        r = self.fresh("g")
        in_vals = ", ".join(v for v, _ in ins)
        in_tys = ", ".join(ty(s) for _, s in ins)
        self.emit("%s = linalg.generic {indexing_maps = [%s], iterator_types = [%s]}"
                  % (r, ", ".join(maps), ", ".join('"%s"' % i for i in iters)))
        self.emit("    ins(%s : %s) outs(%s : %s) {" % (in_vals, in_tys, out, ty(out_shape)))
        args = ", ".join("%%a%d: f32" % i for i in range(len(ins)))
        self.lines.append("  ^bb0(%s, %%acc: f32):" % args)
        for line in body[:-1]:
            self.emit("  " + line)
        self.emit("  linalg.yield %s : f32" % body[-1])
        self.emit("} -> %s" % ty(out_shape))
        return r

    def elementwise(self, ins, shape, body):
        maps = ["#id2"] * (len(ins) + 1) if len(shape) == 2 else ["#id1"] * (len(ins) + 1)
        e = self.fresh("e")
        self.emit("%s = tensor.empty() : %s" % (e, ty(shape)))
        iters = ["parallel"] * len(shape)
        return self.generic(maps, iters, [(v, shape) for v in ins], e, shape, body)

    def transpose(self, value, shape):
        out = (shape[1], shape[0])
        e, r = self.fresh("e"), self.fresh("t")
        self.emit("%s = tensor.empty() : %s" % (e, ty(out)))
        self.emit("%s = linalg.transpose ins(%s : %s) outs(%s : %s) permutation = [1, 0]"
                  % (r, value, ty(shape), e, ty(out)))
        return r

    def matmul(self, a, a_shape, b, b_shape):
        """a [m, k] @ b [k, n] with linalg.matmul."""
        out = (a_shape[0], b_shape[1])
        z = self.init(out)
        r = self.fresh("mm")
        self.emit("%s = linalg.matmul ins(%s, %s : %s, %s) outs(%s : %s) -> %s"
                  % (r, a, b, ty(a_shape), ty(b_shape), z, ty(out), ty(out)))
        return r

    MAC = ["%p = arith.mulf %a0, %a1 : f32", "%s = arith.addf %acc, %p : f32", "%s"]

    def matmul_nt(self, a, m, k, b, n):
        """a [m, k] times b [n, k] transposed: [m, n]."""
        if self.style == "named":
            return self.matmul(a, (m, k), self.transpose(b, (n, k)), (k, n))
        return self.generic(["#mm_a", "#mm_b", "#mm_c"], ["parallel", "parallel", "reduction"],
                            [(a, (m, k)), (b, (n, k))], self.init((m, n)), (m, n), self.MAC)

    def matmul_tn(self, a, m, n, b, k):
        """a [m, n] transposed times b [m, k]: [n, k]."""
        if self.style == "named":
            return self.matmul(self.transpose(a, (m, n)), (n, m), b, (m, k))
        return self.generic(["#tn_a", "#tn_b", "#tn_c"], ["parallel", "parallel", "reduction"],
                            [(a, (m, n)), (b, (m, k))], self.init((n, k)), (n, k), self.MAC)

    def matmul_nn(self, a, m, n, b, k):
        """a [m, n] times b [n, k]: [m, k]."""
        if self.style == "named":
            return self.matmul(a, (m, n), b, (n, k))
        return self.generic(["#nn_a", "#nn_b", "#nn_c"], ["parallel", "parallel", "reduction"],
                            [(a, (m, n)), (b, (n, k))], self.init((m, k)), (m, k), self.MAC)

    def add(self, a, b, shape):
        if self.style == "named":
            r = self.fresh("s")
            self.emit("%s = arith.addf %s, %s : %s" % (r, a, b, ty(shape)))
            return r
        return self.elementwise([a, b], shape, ["%s = arith.addf %a0, %a1 : f32", "%s"])

    def scale(self, value, shape, c):
        """value * c: arith on tensors in the named style (which bufferizes in
        place when it can), a linalg.generic into a new tensor otherwise."""
        if self.style == "named":
            cst, r = self.fresh("c"), self.fresh("w")
            self.emit("%s = arith.constant dense<%s> : %s" % (cst, f32(c), ty(shape)))
            self.emit("%s = arith.mulf %s, %s : %s" % (r, value, cst, ty(shape)))
            return r
        return self.elementwise([value], shape, ["%%c = arith.constant %s : f32" % f32(c),
                                                 "%s = arith.mulf %a0, %c : f32", "%s"])

    def slice(self, value, shape, offsets, sizes, out_shape):
        r = self.fresh("sl")
        self.emit("%s = tensor.extract_slice %s[%s] [%s] [1, 1] : %s to %s"
                  % (r, value, ", ".join(map(str, offsets)), ", ".join(map(str, sizes)),
                     ty(shape), ty(out_shape)))
        return r

    def insert(self, value, value_shape, into, shape, offsets, sizes):
        r = self.fresh("ins")
        self.emit("%s = tensor.insert_slice %s into %s[%s] [%s] [1, 1] : %s into %s"
                  % (r, value, into, ", ".join(map(str, offsets)), ", ".join(map(str, sizes)),
                     ty(value_shape), ty(shape)))
        return r

    def zeros(self, shape):
        if self.style == "named":
            r = self.fresh("zc")
            self.emit("%s = arith.constant dense<0.0> : %s" % (r, ty(shape)))
            return r
        return self.init(shape)

    def matmul_tn_loop(self, a, m, n, b, k):
        """matmul_tn accumulated one row of a and b at a time in an scf.for."""
        c0, c1, cm = self.fresh("i"), self.fresh("i"), self.fresh("i")
        self.emit("%s = arith.constant 0 : index" % c0)
        self.emit("%s = arith.constant 1 : index" % c1)
        self.emit("%s = arith.constant %d : index" % (cm, m))
        r, i, acc = self.fresh("loop"), self.fresh("row"), self.fresh("acc")
        self.emit("%s = scf.for %s = %s to %s step %s iter_args(%s = %s) -> (%s) {"
                  % (r, i, c0, cm, c1, acc, self.init((n, k)), ty((n, k))))
        ra, rb = self.fresh("ra"), self.fresh("rb")
        self.emit("%s = tensor.extract_slice %s[%s, 0] [1, %d] [1, 1] : %s to %s"
                  % (ra, a, i, n, ty((m, n)), ty((1, n))))
        self.emit("%s = tensor.extract_slice %s[%s, 0] [1, %d] [1, 1] : %s to %s"
                  % (rb, b, i, k, ty((m, k)), ty((1, k))))
        part = self.matmul_tn(ra, 1, n, rb, k)
        # Into the iteration argument (destination-passing style): One-Shot
        # Bufferize refuses a yield that is not equivalent to it.
        total = self.generic(["#id2", "#id2"], ["parallel", "parallel"], [(part, (n, k))], acc,
                             (n, k), ["%s = arith.addf %acc, %a0 : f32", "%s"])
        self.emit("scf.yield %s : %s" % (total, ty((n, k))))
        self.emit("}")
        return r

    def bias_add(self, z, b, m, n):
        e = self.fresh("e")
        self.emit("%s = tensor.empty() : %s" % (e, ty((m, n))))
        return self.generic(["#id2", "#col", "#id2"], ["parallel", "parallel"],
                            [(z, (m, n)), (b, (n,))], e, (m, n),
                            ["%s = arith.addf %a0, %a1 : f32", "%s"])

    def colsum(self, a, m, n):
        return self.generic(["#id2", "#col"], ["reduction", "parallel"], [(a, (m, n))],
                            self.init((n,)), (n,), ["%s = arith.addf %acc, %a0 : f32", "%s"])

    def sum_squares(self, a, shape, scale, scalar):
        """sum(a * a) * scale as tensor<1xf32> (tensor<f32> if `scalar`)."""
        out = () if scalar else (1,)
        if len(shape) == 2:
            maps = ["#id2", "#tos" if scalar else "#to0"]
        else:
            maps = ["#id1", "#tos1" if scalar else "#to0_1"]
        return self.generic(maps, ["reduction"] * len(shape), [(a, shape)], self.init(out), out,
                            ["%%c = arith.constant %s : f32" % f32(scale),
                             "%q = arith.mulf %a0, %a0 : f32", "%t = arith.mulf %q, %c : f32",
                             "%s = arith.addf %acc, %t : f32", "%s"])

    def act_forward(self, act, z, shape):
        if act == "identity":
            return z
        if act == "relu":
            body = ["%z0 = arith.constant 0.0 : f32", "%r = arith.maximumf %a0, %z0 : f32", "%r"]
        elif act == "tanh":
            body = ["%r = math.tanh %a0 : f32", "%r"]
        else:  # gelu, tanh approximation: x/2 (1 + tanh(c (x + 0.044715 x^3)))
            body = ["%c = arith.constant " + GELU_C + " : f32",
                    "%k = arith.constant 0.044715 : f32", "%h = arith.constant 0.5 : f32",
                    "%one = arith.constant 1.0 : f32", "%x2 = arith.mulf %a0, %a0 : f32",
                    "%x3 = arith.mulf %x2, %a0 : f32", "%kx3 = arith.mulf %k, %x3 : f32",
                    "%in = arith.addf %a0, %kx3 : f32", "%u = arith.mulf %c, %in : f32",
                    "%t = math.tanh %u : f32", "%opt = arith.addf %one, %t : f32",
                    "%hx = arith.mulf %h, %a0 : f32", "%r = arith.mulf %hx, %opt : f32", "%r"]
        return self.elementwise([z], shape, body)

    def act_backward(self, act, z, dh, shape):
        """dh * act'(z)."""
        if act == "identity":
            return dh
        if act == "relu":
            body = ["%z0 = arith.constant 0.0 : f32",
                    "%pos = arith.cmpf ogt, %a0, %z0 : f32",
                    "%r = arith.select %pos, %a1, %z0 : f32", "%r"]
        elif act == "tanh":
            body = ["%one = arith.constant 1.0 : f32", "%t = math.tanh %a0 : f32",
                    "%t2 = arith.mulf %t, %t : f32", "%d = arith.subf %one, %t2 : f32",
                    "%r = arith.mulf %d, %a1 : f32", "%r"]
        else:
            # d/dx = (1 + t)/2 + x/2 (1 - t^2) c (1 + 3 * 0.044715 x^2)
            body = ["%c = arith.constant " + GELU_C + " : f32",
                    "%k = arith.constant 0.044715 : f32", "%k3 = arith.constant 0.134145 : f32",
                    "%h = arith.constant 0.5 : f32", "%one = arith.constant 1.0 : f32",
                    "%x2 = arith.mulf %a0, %a0 : f32", "%x3 = arith.mulf %x2, %a0 : f32",
                    "%kx3 = arith.mulf %k, %x3 : f32", "%in = arith.addf %a0, %kx3 : f32",
                    "%u = arith.mulf %c, %in : f32", "%t = math.tanh %u : f32",
                    "%opt = arith.addf %one, %t : f32", "%l = arith.mulf %h, %opt : f32",
                    "%t2 = arith.mulf %t, %t : f32", "%s2 = arith.subf %one, %t2 : f32",
                    "%k3x2 = arith.mulf %k3, %x2 : f32", "%du0 = arith.addf %one, %k3x2 : f32",
                    "%du = arith.mulf %c, %du0 : f32", "%hx = arith.mulf %h, %a0 : f32",
                    "%r0 = arith.mulf %hx, %s2 : f32", "%rr = arith.mulf %r0, %du : f32",
                    "%d = arith.addf %l, %rr : f32", "%r = arith.mulf %d, %a1 : f32", "%r"]
        return self.elementwise([z, dh], shape, body)


def emit_mlir(case):
    out = ["// Generated by test/Differential/gen_case.py, seed %d (%s)"
           % (case.seed, " ".join(case.tags()))]
    if case.stash_budget is not None:
        out.append("// Compiled with --stash-budget %d (least %d, all local %d)"
                   % (case.stash_budget, case.stash_bytes_least(), case.stash_bytes_all()))
    for name, shape in case.meshes.items():
        out.append("dist.mesh @%s shape = [%s]" % (name, ", ".join(map(str, shape))))
    for p in case.params.values():
        decl = 'dist.parameter @"%s" : %s %s %s' % (
            p.name, ty(p.local_shape, p.held), "fully_sharded" if p.sharded else "replicated",
            _group(p))
        if p.replicate_axes:
            decl += " replicate_axes = [%s]" % ", ".join(map(str, p.replicate_axes))
        if p.padded:
            decl += " unsharded_dim0 = %d" % p.shape[0]
        if p.compute != p.held:
            decl += " param_dtype = %s" % p.compute
        if p.compute != "f32":  # reduce_dtype spelled: no pipeline default
            decl += " reduce_dtype = %s" % p.reduce
        out.append(decl)
    out.append(MAPS.rstrip())

    em = Emitter(case.style)
    B, K = case.batch, case.k
    d0, dl = case.layers[0].din, case.layers[-1].dout
    arg_names, arg_decls = {}, []
    for i, a in enumerate(case.args):
        if a[0] == "param":
            p = case.params[a[1]]
            arg_names[a[1]] = "%%arg%d" % i
            arg_decls.append('%%arg%d: %s {dist.param = @"%s"}'
                             % (i, ty(p.local_shape, p.held), p.name))
        elif a[0] in ("state", "step"):  # the epilogue's optimizer state
            shape = case.params[a[1]].local_shape if a[0] == "state" else ()
            arg_decls.append("%%arg%d: %s" % (i, ty(shape)))
        else:
            arg_names[a[0]] = "%%%s" % a[0]
            shape = (B, d0 if a[0] == "x" else dl)
            arg_decls.append("%%%s: %s" % (a[0], ty(((K,) if case.window_loop else ()) + shape)))

    em.emit("%zero = arith.constant 0.0 : f32")
    if case.window_loop:
        # Accumulators from zeros; the loop body is the micro-step.
        accs = {}
        for r in case.results:
            if r[0] == "loss":
                accs[r] = ("%_acc_loss", em.zeros(() if case.loss_rank0 else (1,)),
                           ty(() if case.loss_rank0 else (1,)))
            else:
                p = case.params[r[1]]
                shape = p.local_shape if r[1] in case.sync_forms else p.shape
                accs[r] = ("%%_acc%d" % len(accs), em.zeros(shape), ty(shape))
        em.emit("%_c0 = arith.constant 0 : index")
        em.emit("%_c1 = arith.constant 1 : index")
        em.emit("%%_ck = arith.constant %d : index" % K)
        em.emit("%%_win:%d = scf.for %%_k = %%_c0 to %%_ck step %%_c1 iter_args(%s) -> (%s) {"
                % (len(accs), ", ".join("%s = %s" % (a, z) for a, z, _ in accs.values()),
                   ", ".join(t for _, _, t in accs.values())))
        for a in ("x", "y"):
            width = d0 if a == "x" else dl
            sliced = em.fresh(a)
            em.emit("%s = tensor.extract_slice %s[%%_k, 0, 0] [1, %d, %d] [1, 1, 1] : %s to %s"
                    % (sliced, arg_names[a], B, width, ty((K, B, width)), ty((B, width))))
            arg_names[a] = sliced

    def sync(p, when):
        r = em.fresh(when)
        kind = "fully_sharded" if p.sharded else "replicated"
        em.emit("%s = dist.synchronize %s %s kind = %s : %s -> %s"
                % (r, arg_names[p.name], _group(p), kind, ty(p.local_shape, p.held),
                   ty(p.shape, p.compute)))
        if p.compute != "f32":  # the model computes in f32 on the rounded values
            wide = em.fresh(when)
            em.emit("%s = arith.extf %s : %s to %s" % (wide, r, ty(p.shape, p.compute), ty(p.shape)))
            r = wide
        return r

    fwd = {name: sync(p, "f") for name, p in case.params.items()}
    h, saved = arg_names["x"], []
    def weight_of(l, full):
        if not l.packed:
            return full
        return em.slice(full, (l.dout, l.din + 1), (0, 0), (l.dout, l.din), (l.dout, l.din))

    scaled_fwd = []
    for l in case.layers:
        w = weight_of(l, fwd[l.weight])
        if l.scale is not None:
            w = em.scale(w, (l.dout, l.din), l.scale)
        scaled_fwd.append(w)
        z = em.matmul_nt(h, B, l.din, w, l.dout)
        if l.packed:
            b = em.slice(fwd[l.weight], (l.dout, l.din + 1), (0, l.din), (l.dout, 1), (l.dout,))
            z = em.bias_add(z, b, B, l.dout)
        for bias in (l.bias, l.bias2):
            if bias:
                z = em.bias_add(z, fwd[bias], B, l.dout)
        saved.append((h, z))
        h = em.act_forward(l.act, z, (B, l.dout))
    diff = em.elementwise([h, arg_names["y"]], (B, dl), ["%s = arith.subf %a0, %a1 : f32", "%s"])
    scale = 1.0 / (B * dl * K)
    loss = em.sum_squares(diff, (B, dl), scale, case.loss_rank0)
    # GradScaler's scale multiplies the loss the backward starts from.
    loss_scale = case.epilogue.scale if case.epilogue and case.epilogue.scale else 1.0
    dh = em.elementwise([diff], (B, dl), ["%%c = arith.constant %s : f32"
                                          % f32(2 * scale * loss_scale),
                                          "%s = arith.mulf %a0, %c : f32", "%s"])

    bwd = {name: (sync(p, "b") if p.resync else fwd[name]) for name, p in case.params.items()}
    grads = {}

    def contribute(name, value, shape):
        grads[name] = em.add(grads[name], value, shape) if name in grads else value

    for j in reversed(range(len(case.layers))):
        l = case.layers[j]
        h_in, z = saved[j]
        dz = em.act_backward(l.act, z, dh, (B, l.dout))
        if l.loop:
            dw = em.matmul_tn_loop(dz, B, l.dout, h_in, l.din)
        else:
            dw = em.matmul_tn(dz, B, l.dout, h_in, l.din)
        if l.scale is not None:
            dw = em.scale(dw, (l.dout, l.din), l.scale)
        db = em.colsum(dz, B, l.dout) if (l.bias or l.bias2 or l.packed) else None
        if l.packed:
            shape = (l.dout, l.din + 1)
            packed = em.insert(dw, (l.dout, l.din), em.zeros(shape), shape, (0, 0), (l.dout, l.din))
            packed = em.insert(db, (l.dout,), packed, shape, (0, l.din), (l.dout, 1))
            contribute(l.weight, packed, shape)
        else:
            contribute(l.weight, dw, (l.dout, l.din))
        for bias in (l.bias, l.bias2):
            if bias:
                contribute(bias, db, (l.dout,))
        if j > 0 or case.dx:
            w = weight_of(l, bwd[l.weight])
            if l.scale is not None:
                w = (em.scale(w, (l.dout, l.din), l.scale) if case.params[l.weight].resync
                     else scaled_fwd[j])
            dh = em.matmul_nn(dz, B, l.dout, w, l.din)
    if case.unused:
        grads[case.unused] = em.zeros(case.params[case.unused].shape)
    values, types = [], []
    for r in case.results:
        if r[0] == "loss":
            values.append(loss)
            types.append(ty(() if case.loss_rank0 else (1,)))
        elif r[0] == "grad":
            p = case.params[r[1]]
            if r[1] in case.sync_forms:
                values.append(explicit_sync(em, case, p, grads[r[1]], case.sync_forms[r[1]]))
                types.append('%s {dist.grad = @"%s"}' % (ty(p.local_shape), r[1]))
            elif case.epilogue:  # the epilogue reads the synced gradient
                synced = em.fresh("gs")
                em.emit('%s = dist.grad_sync %s for @"%s" : %s -> %s'
                        % (synced, grads[r[1]], r[1], ty(p.shape), ty(p.local_shape)))
                values.append(synced)
                types.append('%s {dist.grad = @"%s"}' % (ty(p.local_shape), r[1]))
            elif p.compute != "f32":  # the gradient in the compute type
                narrow = em.fresh("g")
                em.emit("%s = arith.truncf %s : %s to %s"
                        % (narrow, grads[r[1]], ty(p.shape), ty(p.shape, p.compute)))
                values.append(narrow)
                types.append('%s {dist.grad = @"%s"}' % (ty(p.shape, p.compute), r[1]))
            else:
                values.append(grads[r[1]])
                types.append('%s {dist.grad = @"%s"}' % (ty(p.shape), r[1]))
        elif r[0] == "dx":
            values.append(dh)
            types.append(ty((B, d0)))
        elif r[0] in ("next", "next_state", "next_step", "norm"):
            continue  # the epilogue's, last
        else:
            p = case.params[case.gradnorm]
            values.append(em.sum_squares(grads[p.name], p.shape, 1.0, False))
            types.append(ty((1,)))
    if case.epilogue:
        from emit_epilogue import emit_epilogue
        synced = {r[1]: v for r, v in zip(case.results, values) if r[0] == "grad"}
        arg_index = {a: i for i, a in enumerate(case.args)}
        more_values, more_types = emit_epilogue(em, case, synced, arg_index)
        values += more_values
        types += more_types
    if case.window_loop:
        news = []
        for r, v in zip(case.results, values):
            acc, _, t = accs[r]
            n = em.fresh("n")
            em.emit("%s = arith.addf %s, %s : %s" % (n, acc, v, t))
            news.append(n)
        em.emit("scf.yield %s : %s" % (", ".join(news), ", ".join(t for _, _, t in accs.values())))
        em.emit("}")
        values = ["%%_win#%d" % i for i in range(len(values))]
    em.emit("return %s : %s" % (", ".join(values), ", ".join(t.split(" {")[0] for t in types)))
    out.append("")
    out.append("func.func @step(%s)\n    -> (%s) {" % (", ".join(arg_decls), ", ".join(types)))
    out.extend(em.lines)
    out.append("}")
    return "\n".join(out) + "\n"
