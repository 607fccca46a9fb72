//===- DistBytecode.td - how dist types are written in bytecode -*- tablegen -*-===//
//
// The encoding of dist's types in MLIR bytecode, generated with
// -gen-bytecode. Each entry's position is its code in the file: append new
// types at the end and mark a removed one ReservedOrDead, so that files
// written earlier still read. A change to an entry's members is a new
// dist bytecode version (lib/Dist/IR/DistBytecode.cpp).
//
// dist's attributes are builtin ones (i32 enums, symbol references, arrays),
// which the builtin dialect encodes.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_IR_DISTBYTECODE_TD
#define DIST_IR_DISTBYTECODE_TD

include "mlir/IR/BytecodeBase.td"

// !dist.future<T>: the payload type.
def FutureType : DialectType<(type Type:$valueType)> {
  let cBuilder = "checkedFuture(reader, $_args)";
}

def DistDialectTypes : DialectTypes<"Dist"> {
  let elems = [FutureType];
}

def DistDialectAttributes : DialectAttributes<"Dist"> {
  let elems = [];
}

#endif // DIST_IR_DISTBYTECODE_TD
