//===- RuntimeContractTest.cpp - the compiler↔runtime contract ------------===//
//
// The lowering calls the runtime by symbol name with signatures derived from
// dist_runtime.h; these tests tie the entry-point list to the runtime library
// (every name links), spell a few signatures out independently, and tie the
// collective-traits table to the ops ODS defines.
//
//===----------------------------------------------------------------------===//

#include "Dist/Conversion/RuntimeApi.h"
#include "Dist/IR/DistOps.h"
#include "dist_runtime/dist_runtime.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::dist;

namespace {

TEST(RuntimeContract, EveryListedEntryPointIsInTheRuntimeLibrary) {
  // Taking each address makes the link fail when the library lacks a name.
  struct Entry {
    const char *name;
    void *address;
  };
  const Entry entries[] = {
#define DISTRT_API(fn) {#fn, reinterpret_cast<void *>(&fn)},
#include "dist_runtime/dist_runtime_api.def"
#undef DISTRT_API
  };
  MLIRContext context;
  for (const Entry &entry : entries) {
    EXPECT_NE(entry.address, nullptr) << entry.name;
    EXPECT_TRUE(getRuntimeSignature(&context, entry.name)) << entry.name;
  }
}

TEST(RuntimeContract, SignaturesFollowTheCDeclarations) {
  MLIRContext context;
  context.loadDialect<LLVM::LLVMDialect>();
  Type ptr = LLVM::LLVMPointerType::get(&context);
  Type i32 = IntegerType::get(&context, 32);
  Type i64 = IntegerType::get(&context, 64);
  // (group, send, recv, count, dtype, reduction, handle*) -> status
  EXPECT_EQ(
      getRuntimeSignature(&context, "distrt_all_reduce_async"),
      FunctionType::get(&context, {i64, ptr, ptr, i64, i32, i32, ptr}, {i32}));
  // (group, send, send_count, recv, recv_count, dtype, handle*) -> status
  EXPECT_EQ(
      getRuntimeSignature(&context, "distrt_all_gather_async"),
      FunctionType::get(&context, {i64, ptr, i64, ptr, i64, i32, ptr}, {i32}));
  EXPECT_EQ(getRuntimeSignature(&context, "distrt_check"),
            FunctionType::get(&context, {i32}, {}));
  EXPECT_EQ(getRuntimeSignature(&context, "distrt_stash_bytes"),
            FunctionType::get(&context, {}, {i64}));
  // (param, group, send, send_count, recv, recv_count, dtype, keep) -> status
  EXPECT_EQ(getRuntimeSignature(&context, "distrt_kept_gather"),
            FunctionType::get(&context,
                              {ptr, i64, ptr, i64, ptr, i64, i32, i32}, {i32}));
  EXPECT_EQ(getRuntimeSignature(&context, "distrt_kept_release"),
            FunctionType::get(&context, {ptr}, {i32}));
  EXPECT_FALSE(getRuntimeSignature(&context, "distrt_no_such_function"));
  EXPECT_FALSE(getRuntimeSignature(&context, "malloc"));
}

TEST(RuntimeContract, RuntimeDtypesAreTheRuntimeTypes) {
  MLIRContext context;
  Builder b(&context);
  EXPECT_EQ(getRuntimeDtype(b.getF32Type()), DISTRT_F32);
  EXPECT_EQ(getRuntimeDtype(b.getBF16Type()), DISTRT_BF16);
  EXPECT_EQ(getRuntimeDtype(b.getI64Type()), DISTRT_I64);
  EXPECT_FALSE(getRuntimeDtype(b.getI16Type()));
  EXPECT_FALSE(
      getRuntimeDtype(IntegerType::get(&context, 32, IntegerType::Unsigned)));
  EXPECT_FALSE(getRuntimeDtype(b.getIndexType()));
}

TEST(CollectiveTraits, RowsNameTheirOps) {
  EXPECT_EQ("dist." +
                getCollectiveTraits(AllGatherOp::kCollectiveKind).name.str(),
            AllGatherOp::getOperationName());
  EXPECT_EQ(
      "dist." +
          getCollectiveTraits(ReduceScatterOp::kCollectiveKind).name.str(),
      ReduceScatterOp::getOperationName());
  EXPECT_EQ("dist." +
                getCollectiveTraits(AllReduceOp::kCollectiveKind).name.str(),
            AllReduceOp::getOperationName());
  EXPECT_EQ(getCollectiveTraits(AllReduceOp::kCollectiveKind).kind,
            CollectiveKind::AllReduce);
}

TEST(CollectiveTraits, ShapesAndWireBytes) {
  const CollectiveTraits &gather =
      getCollectiveTraits(CollectiveKind::AllGather);
  const CollectiveTraits &scatter =
      getCollectiveTraits(CollectiveKind::ReduceScatter);
  const CollectiveTraits &reduce =
      getCollectiveTraits(CollectiveKind::AllReduce);
  EXPECT_EQ(gather.resultExtent(3, 4), 12);
  EXPECT_EQ(gather.resultExtent(int64_t(1) << 62, 4), std::nullopt);
  EXPECT_EQ(scatter.resultExtent(12, 4), 3);
  EXPECT_EQ(scatter.resultExtent(6, 4), std::nullopt);
  EXPECT_EQ(reduce.resultExtent(6, 4), 6);
  // Ring algorithms: (W-1)/W of the full tensor, twice for an all_reduce.
  EXPECT_DOUBLE_EQ(gather.wireFactor(4), 0.75);
  EXPECT_DOUBLE_EQ(scatter.wireFactor(4), 0.75);
  EXPECT_DOUBLE_EQ(reduce.wireFactor(4), 1.5);
  EXPECT_DOUBLE_EQ(reduce.wireFactor(1), 0.0);
  EXPECT_TRUE(gather.fullTensorIsResult());
  EXPECT_FALSE(scatter.fullTensorIsResult());
  EXPECT_EQ(gather.runtimeFunction, "distrt_all_gather_async");
}

} // namespace
