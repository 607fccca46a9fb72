"""A tied gradient's sync spelled as a frontend would (gen_case.Case's
sync_forms): explicit collectives and waits, with the averaging before or
after them, FSDP's padding of uneven shards, and HSDP's two stages in either
order. emit_mlir.py calls it for the cases that do not use dist.grad_sync."""

from mlir_text import group as _group, ty


def _group_sizes(case, p):
    """(S, R): the ranks along the parameter's axes and replicate axes."""
    shape = case.meshes[p.mesh]
    axes = p.axes if p.axes is not None else range(len(shape))
    s = r = 1
    for a in axes:
        s *= shape[a]
    for a in p.replicate_axes:
        r *= shape[a]
    return s, r


def explicit_sync(em, case, p, g, form):
    """The synchronized gradient of `p` from its local gradient `g`, spelled
    as a frontend would (see Case.sync_forms): sum(g) / W in every form but
    "sum", which is sum(g). Case.pad_first and Case.replicate_first pick
    FSDP2's and hand-written HSDP's orders."""
    s, r = _group_sizes(case, p)
    w = s * r
    reduction = "avg" if form == "avg" else "sum"
    pad_first = case.pad_first(p)
    if form == "pre" and not pad_first:
        g = em.scale(g, p.shape, 1.0 / w)
    if p.padded:  # zero rows up to a multiple of the group, as FSDP pads
        padded, zero = em.fresh("pad"), em.fresh("z")
        em.emit("%s = arith.constant 0.0 : f32" % zero)
        em.emit("%s = tensor.pad %s low[%s] high[%s] {" % (
            padded, g, ", ".join("0" for _ in p.shape),
            ", ".join([str(p.padded_shape[0] - p.shape[0])] + ["0"] * (len(p.shape) - 1))))
        em.emit("^bb0(%s):" % ", ".join("%%pi%d: index" % i for i in range(len(p.shape))))
        em.emit("  tensor.yield %s : f32" % zero)
        em.emit("} : %s to %s" % (ty(p.shape), ty(p.padded_shape)))
        g = padded
    if pad_first:
        g = em.scale(g, p.padded_shape, 1.0 / w)

    def replicate_stage(x, shape):
        f2, x2 = em.fresh("f"), em.fresh("s")
        em.emit("%s = dist.all_reduce %s on @%s axes = [%s] reduction = %s : %s"
                % (f2, x, p.mesh, ", ".join(map(str, p.replicate_axes)), reduction,
                   ty(shape)))
        em.emit("%s = dist.wait %s : !dist.future<%s>" % (x2, f2, ty(shape)))
        return x2

    replicate_first = case.replicate_first(p)
    if replicate_first:
        g = replicate_stage(g, p.padded_shape)
    f, x = em.fresh("f"), em.fresh("s")
    if p.sharded:
        em.emit("%s = dist.reduce_scatter %s %s reduction = %s scatter_axis = 0 : %s -> "
                "!dist.future<%s>" % (f, g, _group(p), reduction, ty(p.padded_shape),
                                      ty(p.local_shape)))
    else:
        em.emit("%s = dist.all_reduce %s %s reduction = %s : %s"
                % (f, g, _group(p), reduction, ty(p.shape)))
    em.emit("%s = dist.wait %s : !dist.future<%s>" % (x, f, ty(p.local_shape)))
    if p.replicate_axes and not replicate_first:
        x = replicate_stage(x, p.local_shape)
    if form == "post":
        x = em.scale(x, p.local_shape, 1.0 / w)
    return x
