// Deeply nested brackets overflow MLIR's recursive-descent parser (mlir-opt
// 22.1.8 crashes on the fuzzer's input below); dist-opt rejects them first
// with a located error and exit code 1.
// RUN: not dist-opt %S/Inputs/fuzz-crash-deep-parens.mlir 2>&1 | FileCheck %s --check-prefix=FUZZ
// RUN: %python -c "print('func.func @f(' + '!dist.future<' * 20000)" > %t.deep.mlir
// RUN: not dist-opt %t.deep.mlir 2>&1 | FileCheck %s --check-prefix=DEEP
// Brackets in comments and strings, and arrows, do not nest.
// RUN: %python -c "print('// ' + '(' * 1000); print('module attributes {test.x = \"' + '[' * 1000 + '\"} {'); print('  func.func private @g(i32) -> i32' * 1); print('}')" > %t.ok.mlir
// RUN: dist-opt %t.ok.mlir | FileCheck %s --check-prefix=OK
// The limit is an option; under it the parser's own diagnostics apply.
// RUN: %python -c "print('func.func @f(' + '(' * 300)" > %t.300.mlir
// RUN: not dist-opt %t.300.mlir 2>&1 | FileCheck %s --check-prefix=LIMIT
// RUN: not dist-opt %t.300.mlir --dist-max-nesting=1000 2>&1 | FileCheck %s --check-prefix=PARSER

// FUZZ: fuzz-crash-deep-parens.mlir:2:271: error: brackets nest deeper than 256 levels
// DEEP: deep.mlir:1:{{[0-9]+}}: error: brackets nest deeper than 256 levels; the MLIR parser recurses once per level and would overflow its stack (see --dist-max-nesting)
// OK: func.func private @g(i32) -> i32
// LIMIT: error: brackets nest deeper than 256 levels
// PARSER-NOT: brackets nest deeper
// PARSER: error:
