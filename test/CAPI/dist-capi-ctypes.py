# The no_sync pipeline from Python through ctypes and libDistCAPI.so, the
# route for Python users: Debian's MLIR packages lack MLIR's Python sources
# and nanobind, so its Python bindings cannot be built. Run by
# dist-capi-ctypes.test; docs/CAPI.md shows it.
#
#   python3 dist-capi-ctypes.py LIBDISTCAPI STEP.mlir [PIPELINE]
import ctypes
import sys


def handle(name):
    """mlir-c's opaque handles: a struct holding one pointer."""
    return type(name, (ctypes.Structure,), {"_fields_": [("ptr", ctypes.c_void_p)]})


Context, Registry, DialectHandle, Module, Operation, PassManager, OpPassManager = (
    handle(n) for n in ["Context", "Registry", "DialectHandle", "Module", "Operation",
                        "PassManager", "OpPassManager"])


class StringRef(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("length", ctypes.c_size_t)]

    @classmethod
    def of(cls, text):
        data = text.encode()
        return cls(ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p), len(data))


class LogicalResult(ctypes.Structure):
    _fields_ = [("value", ctypes.c_int8)]


StringCallback = ctypes.CFUNCTYPE(None, StringRef, ctypes.c_void_p)


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: dist-capi-ctypes.py LIBDISTCAPI STEP.mlir [PIPELINE]")
    lib = ctypes.CDLL(sys.argv[1])
    signatures = {
        "mlirContextCreate": (Context, []),
        "mlirContextDestroy": (None, [Context]),
        "mlirDialectRegistryCreate": (Registry, []),
        "mlirDialectRegistryDestroy": (None, [Registry]),
        "mlirRegisterAllDialects": (None, [Registry]),
        "mlirGetDialectHandle__dist__": (DialectHandle, []),
        "mlirDialectHandleInsertDialect": (None, [DialectHandle, Registry]),
        "mlirContextAppendDialectRegistry": (None, [Context, Registry]),
        "mlirDistRegisterAllPasses": (None, []),
        "mlirDistModuleCreateParse": (Module, [Context, StringRef, StringRef]),
        "mlirModuleGetOperation": (Operation, [Module]),
        "mlirModuleDestroy": (None, [Module]),
        "mlirPassManagerCreate": (PassManager, [Context]),
        "mlirPassManagerDestroy": (None, [PassManager]),
        "mlirPassManagerGetAsOpPassManager": (OpPassManager, [PassManager]),
        "mlirParsePassPipeline": (LogicalResult,
                                  [OpPassManager, StringRef, StringCallback, ctypes.c_void_p]),
        "mlirPassManagerRunOnOp": (LogicalResult, [PassManager, Operation]),
        "mlirOperationPrint": (None, [Operation, StringCallback, ctypes.c_void_p]),
    }
    for name, (restype, argtypes) in signatures.items():
        function = getattr(lib, name)
        function.restype, function.argtypes = restype, argtypes

    chunks = []
    collect = StringCallback(lambda ref, _: chunks.append(ctypes.string_at(ref.data, ref.length)))

    context = lib.mlirContextCreate()
    registry = lib.mlirDialectRegistryCreate()
    lib.mlirRegisterAllDialects(registry)
    lib.mlirDialectHandleInsertDialect(lib.mlirGetDialectHandle__dist__(), registry)
    lib.mlirContextAppendDialectRegistry(context, registry)
    lib.mlirDialectRegistryDestroy(registry)
    lib.mlirDistRegisterAllPasses()

    # {NULL, 0} is the empty text, an empty module (MLIR's lexer crashed on
    # a null buffer).
    empty = lib.mlirDistModuleCreateParse(context, StringRef(None, 0), StringRef.of("empty"))
    if not empty.ptr:
        print("dist-capi-ctypes: the empty text did not parse", file=sys.stderr)
        return 1
    lib.mlirModuleDestroy(empty)

    path = sys.argv[2]
    with open(path) as f:
        source = f.read()
    status = 1
    module = lib.mlirDistModuleCreateParse(context, StringRef.of(source), StringRef.of(path))
    pm = lib.mlirPassManagerCreate(context)
    pipeline = sys.argv[3] if len(sys.argv) == 4 else "builtin.module(dist-no-sync-pipeline)"
    if not module.ptr:
        print(f"dist-capi-ctypes: cannot parse '{path}'", file=sys.stderr)
    elif not lib.mlirParsePassPipeline(lib.mlirPassManagerGetAsOpPassManager(pm),
                                       StringRef.of(pipeline), collect, None).value:
        print(b"".join(chunks).decode(), file=sys.stderr)
        print(f"dist-capi-ctypes: invalid pass pipeline '{pipeline}'", file=sys.stderr)
    else:
        op = lib.mlirModuleGetOperation(module)
        if not lib.mlirPassManagerRunOnOp(pm, op).value:
            print("dist-capi-ctypes: the pass pipeline failed", file=sys.stderr)
        else:
            lib.mlirOperationPrint(op, collect, None)
            print(b"".join(chunks).decode())
            status = 0
    lib.mlirPassManagerDestroy(pm)
    if module.ptr:
        lib.mlirModuleDestroy(module)
    lib.mlirContextDestroy(context)
    return status


if __name__ == "__main__":
    sys.exit(main())
