// A run of unary minus in an affine expression: the affine parser recurses
// once per '-' (~1.1 KB of stack each; 7,500 overflowed dist-opt's 8 MB main
// stack at bracket depth 2). dist-opt parses on a 512 MB stack and accepts
// up to kMaxMinusRun = 65536 in a row; one more is refused, located.
// RUN: %python -c "print('#m = affine_map<(d0) -> (' + '-' * 65536 + 'd0)>'); print('func.func @f() attributes {m = #m} { return }')" > %t.ok.mlir
// RUN: %parser_stack dist-opt %t.ok.mlir | FileCheck %s --check-prefix=OK
// RUN: %python -c "print('#m = affine_map<(d0) -> (' + '- ' * 65537 + 'd0)>'); print('func.func @f() attributes {m = #m} { return }')" > %t.bad.mlir
// RUN: not dist-opt %t.bad.mlir 2>&1 | FileCheck %s --check-prefix=BAD
// An even run is d0 again.
// OK: affine_map<(d0) -> (d0)>
// BAD: bad.mlir:1:26: error: expected at most 65536 consecutive '-', but got 65537 (the affine parser recurses once per '-')
