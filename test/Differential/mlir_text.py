"""MLIR text the differential tester's emitters share: tensor types, float
literals, and a parameter's group (`on @mesh [axes = [..]]`)."""


def ty(shape, dtype="f32"):
    return "tensor<" + "".join("%dx" % d for d in shape) + dtype + ">"


def f32(value):
    return repr(float(value))


def group(p):
    """`on @mesh [axes = [..]]` of the parameter's synchronize."""
    text = "on @%s" % p.mesh
    axes = p.axes
    if axes is not None:
        text += " axes = [%s]" % ", ".join(map(str, axes))
    return text
