"""Writes a Case's optimizer epilogue (gen_case.Epilogue) as a dist.epilogue.

The backward returns each parameter's synchronized gradient tied
({dist.grad}): a `dist.grad_sync` written here for the ones returned local,
the frontend's explicit chain for the others. The epilogue reads them, the
parameters and the optimizer state, and yields the next parameters and state
({dist.next = <argument>}) and the global gradient norm. In the order
GradScaler, clip_grad_norm_ and torch.optim use:

  g = synced gradient / S; found = any g not finite (over all shards:
  dist.shard_sum of each shard's count); norm = sqrt(sum of dist.shard_sum
  of each shard's sum of squares); g *= min(max_norm / (norm + 1e-6), 1);
  then the update, kept only when nothing was found.

Written apart from the compiler, from the PyTorch formulas in reference.py's
terms; the reference (reference.py) computes the same in float64 on the
unsharded gradients.
"""

from emit_mlir import ty


def f32(value):
    """A float literal MLIR parses (repr writes 1e-06)."""
    return "%.17e" % float(value)


def _scalar(em, value):
    """f32 out of a tensor<f32>."""
    r = em.fresh("x")
    em.emit("%s = tensor.extract %s[] : tensor<f32>" % (r, value))
    return r


def _reduce(em, value, shape, body):
    """A tensor<f32> reduction of `value` with `body` (%a0 the element,
    %acc the running sum)."""
    maps = ["#id2", "#tos"] if len(shape) == 2 else ["#id1", "#tos1"]
    z = em.fresh("z")
    em.emit("%s = arith.constant dense<0.0> : tensor<f32>" % z)
    return em.generic(maps, ["reduction"] * len(shape), [(value, shape)], z, (), body)


def _shard_sum(em, value, name):
    r = em.fresh("ss")
    em.emit('%s = dist.shard_sum %s for @"%s" : tensor<f32>' % (r, value, name))
    return r


def _scalar_op(em, text):
    r = em.fresh("c")
    em.emit("%s = %s" % (r, text))
    return r


def emit_epilogue(em, case, synced, arg_index):
    """Emits the dist.epilogue into `em` (the function's lines) after the
    synced gradients `synced` {param: value}; `arg_index`: the argument
    number of each ("param", name), ("state", name, slot) and ("step",).
    Returns (values, types) of the results, in case.results order."""
    e = case.epilogue
    names = list(case.params)
    inputs = [(synced[n], ty(case.params[n].local_shape)) for n in names]
    inputs += [("%%arg%d" % arg_index[("param", n)], ty(case.params[n].local_shape))
               for n in names]
    for n in names:
        inputs += [("%%arg%d" % arg_index[("state", n, s)], ty(case.params[n].local_shape))
                   for s in e.state()]
    if e.opt == "adamw":
        inputs.append(("%%arg%d" % arg_index[("step",)], "tensor<f32>"))

    # The region's values: block arguments %_in<i>, then the emitter's.
    outer_lines = em.lines
    em.lines = []
    block = ["%%_in%d" % i for i in range(len(inputs))]
    grad = dict(zip(names, block))
    param = dict(zip(names, block[len(names):]))
    state, i = {}, 2 * len(names)
    for n in names:
        for s in e.state():
            state[(n, s)] = block[i]
            i += 1
    step = block[i] if e.opt == "adamw" else None
    shape = {n: case.params[n].local_shape for n in names}

    em.emit("%_ezero = arith.constant 0.0 : f32")
    em.emit("%_eone = arith.constant 1.0 : f32")
    em.emit("%_efalse = arith.constant false")
    skip = "%_efalse"
    if e.scale is not None:
        inv = f32(1.0 / e.scale)
        for n in names:
            grad[n] = em.elementwise([grad[n]], shape[n], [
                "%%c = arith.constant %s : f32" % inv, "%s = arith.mulf %a0, %c : f32", "%s"])
        found = None
        for n in names:
            count = _reduce(em, grad[n], shape[n], [
                "%inf = arith.constant 0x7F800000 : f32",
                "%ab = math.absf %a0 : f32",
                "%bad = arith.cmpf uge, %ab, %inf : f32",
                "%c1 = arith.constant 1.0 : f32",
                "%c0 = arith.constant 0.0 : f32",
                "%v = arith.select %bad, %c1, %c0 : f32",
                "%s = arith.addf %acc, %v : f32", "%s"])
            total = _shard_sum(em, count, n)
            found = total if found is None else _scalar_op(
                em, "arith.addf %s, %s : tensor<f32>" % (found, total))
        skip = _scalar_op(em, "arith.cmpf ogt, %s, %%_ezero : f32" % _scalar(em, found))
    norm = None
    if e.clip is not None:
        total = None
        for n in names:
            sq = _reduce(em, grad[n], shape[n], [
                "%q = arith.mulf %a0, %a0 : f32", "%s = arith.addf %acc, %q : f32", "%s"])
            part = _shard_sum(em, sq, n)
            total = part if total is None else _scalar_op(
                em, "arith.addf %s, %s : tensor<f32>" % (total, part))
        norm = _scalar_op(em, "math.sqrt %s : tensor<f32>" % total)
        n_s = _scalar(em, norm)
        denom = _scalar_op(em, "arith.addf %s, %s : f32" % (
            n_s, _scalar_op(em, "arith.constant %s : f32" % f32(1e-6))))
        coef = _scalar_op(em, "arith.divf %s, %s : f32" % (
            _scalar_op(em, "arith.constant %s : f32" % f32(e.clip)), denom))
        coef = _scalar_op(em, "arith.minimumf %s, %%_eone : f32" % coef)
        for n in names:
            grad[n] = em.elementwise([grad[n]], shape[n], [
                "%%s = arith.mulf %%a0, %s : f32" % coef, "%s"])

    lr, wd = f32(e.lr), f32(e.wd)
    new_param, new_state, new_step = {}, {}, None
    if e.opt == "adamw":
        t = _scalar(em, step)
        t1 = _scalar_op(em, "arith.addf %s, %%_eone : f32" % t)
        new_t = _scalar_op(em, "arith.select %s, %s, %s : f32" % (skip, t, t1))
        new_step = em.fresh("st")
        em.emit("%s = tensor.from_elements %s : tensor<f32>" % (new_step, new_t))
        b1, b2 = (f32(b) for b in e.betas)
        bc1 = _scalar_op(em, "arith.subf %%_eone, %s : f32" % _scalar_op(
            em, "math.powf %s, %s : f32" % (_scalar_op(em, "arith.constant %s : f32" % b1), t1)))
        bc2 = _scalar_op(em, "arith.subf %%_eone, %s : f32" % _scalar_op(
            em, "math.powf %s, %s : f32" % (_scalar_op(em, "arith.constant %s : f32" % b2), t1)))
        sqrt_bc2 = _scalar_op(em, "math.sqrt %s : f32" % bc2)
        step_size = _scalar_op(em, "arith.divf %s, %s : f32" % (
            _scalar_op(em, "arith.constant %s : f32" % lr), bc1))
    for n in names:
        p, g = param[n], grad[n]
        if e.opt == "sgd":
            new_param[n] = em.elementwise([p, g], shape[n], [
                "%%lr = arith.constant %s : f32" % lr, "%%wd = arith.constant %s : f32" % wd,
                "%d = arith.mulf %wd, %a0 : f32", "%gd = arith.addf %a1, %d : f32",
                "%u = arith.mulf %lr, %gd : f32", "%q = arith.subf %a0, %u : f32",
                "%%s = arith.select %s, %%a0, %%q : f32" % skip, "%s"])
        elif e.opt == "momentum":
            b = state[(n, "buf")]
            new_b = em.elementwise([p, g, b], shape[n], [
                "%%mu = arith.constant %s : f32" % f32(e.momentum),
                "%%wd = arith.constant %s : f32" % wd,
                "%d = arith.mulf %wd, %a0 : f32", "%gd = arith.addf %a1, %d : f32",
                "%m = arith.mulf %mu, %a2 : f32", "%q = arith.addf %m, %gd : f32",
                "%%s = arith.select %s, %%a2, %%q : f32" % skip, "%s"])
            new_state[(n, "buf")] = new_b
            new_param[n] = em.elementwise([p, new_b], shape[n], [
                "%%lr = arith.constant %s : f32" % lr,
                "%u = arith.mulf %lr, %a1 : f32", "%q = arith.subf %a0, %u : f32",
                "%%s = arith.select %s, %%a0, %%q : f32" % skip, "%s"])
        else:
            m, v = state[(n, "m")], state[(n, "v")]
            new_m = em.elementwise([g, m], shape[n], [
                "%%b = arith.constant %s : f32" % b1,
                "%%c = arith.constant %s : f32" % f32(1 - e.betas[0]),
                "%bx = arith.mulf %b, %a1 : f32", "%cy = arith.mulf %c, %a0 : f32",
                "%q = arith.addf %bx, %cy : f32",
                "%%s = arith.select %s, %%a1, %%q : f32" % skip, "%s"])
            new_v = em.elementwise([g, v], shape[n], [
                "%%b = arith.constant %s : f32" % b2,
                "%%c = arith.constant %s : f32" % f32(1 - e.betas[1]),
                "%bx = arith.mulf %b, %a1 : f32", "%g2 = arith.mulf %a0, %a0 : f32",
                "%cy = arith.mulf %c, %g2 : f32", "%q = arith.addf %bx, %cy : f32",
                "%%s = arith.select %s, %%a1, %%q : f32" % skip, "%s"])
            new_state[(n, "m")], new_state[(n, "v")] = new_m, new_v
            new_param[n] = em.elementwise([p, new_m, new_v], shape[n], [
                "%%decay = arith.constant %s : f32" % f32(1 - e.lr * e.wd),
                "%%eps = arith.constant %s : f32" % f32(e.eps),
                "%pd = arith.mulf %a0, %decay : f32",
                "%r = math.sqrt %a2 : f32",
                "%%rs = arith.divf %%r, %s : f32" % sqrt_bc2,
                "%den = arith.addf %rs, %eps : f32",
                "%%num = arith.mulf %s, %%a1 : f32" % step_size,
                "%u = arith.divf %num, %den : f32",
                "%q = arith.subf %pd, %u : f32",
                "%%s = arith.select %s, %%a0, %%q : f32" % skip, "%s"])

    yields, values, types = [], [], []
    for r in case.results:
        if r[0] == "next":
            yields.append((new_param[r[1]], ty(shape[r[1]]), ("param", r[1])))
        elif r[0] == "next_state":
            yields.append((new_state[(r[1], r[2])], ty(shape[r[1]]), ("state", r[1], r[2])))
        elif r[0] == "next_step":
            yields.append((new_step, "tensor<f32>", ("step",)))
        elif r[0] == "norm":
            yields.append((norm, "tensor<f32>", None))
    em.emit("dist.epilogue_yield %s : %s" % (", ".join(v for v, _, _ in yields),
                                              ", ".join(t for _, t, _ in yields)))
    body = em.lines
    em.lines = outer_lines
    res = em.fresh("epi")
    em.emit("%s:%d = dist.epilogue (%s) : (%s) -> (%s) {" % (
        res, len(yields), ", ".join(v for v, _ in inputs), ", ".join(t for _, t in inputs),
        ", ".join(t for _, t, _ in yields)))
    em.lines.append("  ^bb0(%s):" % ", ".join("%s: %s" % (b, t) for b, (_, t) in zip(block, inputs)))
    em.lines.extend("  " + line for line in body)
    em.emit("}")
    for j, (_, t, target) in enumerate(yields):
        values.append("%s#%d" % (res, j))
        types.append(t if target is None else "%s {dist.next = %d}" % (t, arg_index[target]))
    return values, types
