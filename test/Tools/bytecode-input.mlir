// MLIR bytecode is read by its own reader, not by the recursive text parser
// the input guards protect: an i8 array of 40s (the byte of `(`) in a
// .mlirbc file was taken for 299 nested parentheses and refused. dist-opt
// reads it now (dist-run uses the same guard); a text file with the same
// nesting is still refused.
// RUN: %python -c "print('func.func @f() -> tensor<300xi8> {'); print('  %%c = arith.constant dense<[' + ','.join(['40'] * 299 + ['41']) + ']> : tensor<300xi8>'); print('  return %%c : tensor<300xi8>'); print('}')" > %t.mlir
// RUN: dist-opt %t.mlir --emit-bytecode -o %t.mlirbc
// RUN: %python -c "import sys; sys.exit(0 if open(sys.argv[1], 'rb').read().count(b'(') > 256 else 1)" %t.mlirbc
// RUN: dist-opt %t.mlirbc | FileCheck %s
// RUN: %python -c "print('func.func @f(' + '(' * 300)" > %t.text.mlir
// RUN: not dist-opt %t.text.mlir 2>&1 | FileCheck %s --check-prefix=TEXT
// CHECK: func.func @f() -> tensor<300xi8>
// CHECK: arith.constant dense<"0x2828
// TEXT: error: brackets nest deeper than 256 levels
