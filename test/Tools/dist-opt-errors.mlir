// Bad input gets a located diagnostic and a non-zero exit; `not` also fails
// when the tool crashes, so these cases check that nothing crashes.
// RUN: not dist-opt %S/does-not-exist.mlir 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: cannot open input file '{{.*}}does-not-exist.mlir': No such file or directory
// RUN: not dist-opt %s 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: not dist-opt %S/Inputs/truncated.mlir 2>&1 | FileCheck %s --check-prefix=TRUNC
// TRUNC: truncated.mlir:4:35: error: unbalanced '<' character in pretty dialect name
// RUN: not dist-opt %S/Inputs/bad-attr.mlir 2>&1 | FileCheck %s --check-prefix=ATTR
// ATTR: bad-attr.mlir:2:1: error: 'dist.all_reduce' op attribute 'reduction' failed to satisfy constraint
// RUN: not dist-opt %S/Inputs/unknown-op.mlir 2>&1 | FileCheck %s --check-prefix=OP
// OP: unknown-op.mlir:1:1: error: custom op 'dist.frobnicate' is unknown
// RUN: not dist-opt %S/Inputs/undef.mlir 2>&1 | FileCheck %s --check-prefix=UNDEF
// UNDEF: undef.mlir:2:{{[0-9]+}}: error: use of undeclared SSA value name

// An output that cannot be written is an error naming the file, not
// "IO failure on output stream"; the same for the comm report's file.
// RUN: not dist-opt %dist_src_root/examples/linear_fsdp.mlir -o /dev/full 2>&1 \
// RUN:   | FileCheck %s --check-prefix=FULL
// FULL: dist-opt: error: cannot write '/dev/full': No space left on device
// RUN: not dist-opt %dist_src_root/examples/linear_fsdp.mlir --dist-no-sync-pipeline \
// RUN:   --dist-comm-report=output=/dev/full -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORTFULL
// REPORTFULL: error: dist-comm-report: cannot write '/dev/full': No space left on device

// SYNTAX: dist-opt-errors.mlir:[[@LINE+2]]:{{[0-9]+}}: error:
dist.mesh @world shape = [2]
dist.mesh @broken shape = [2

