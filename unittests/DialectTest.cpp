//===- DialectTest.cpp - unit tests of the dist dialect C++ API -----------===//

#include "Dist/IR/DistOps.h"

#include "mlir/Bytecode/BytecodeImplementation.h"
#include "mlir/Bytecode/BytecodeWriter.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::dist;

namespace {

class DistDialectTest : public ::testing::Test {
protected:
  DistDialectTest() {
    context.loadDialect<DistDialect, func::FuncDialect, arith::ArithDialect>();
  }

  OwningOpRef<ModuleOp> parse(StringRef source) {
    return parseSourceString<ModuleOp>(source, &context);
  }

  MLIRContext context;
};

constexpr StringLiteral kHsdp = R"mlir(
  dist.mesh @m shape = [2, 4]
  dist.parameter @w : tensor<4x3xf32> fully_sharded on @m axes = [1]
      replicate_axes = [0]
  dist.parameter @b : tensor<3xf32> replicated on @m
  func.func @f(%g: tensor<16x3xf32>) -> tensor<16x3xf32> {
    %f = dist.all_reduce %g on @m axes = [0] reduction = sum : tensor<16x3xf32>
    %r = dist.wait %f : !dist.future<tensor<16x3xf32>>
    return %r : tensor<16x3xf32>
  }
)mlir";

TEST_F(DistDialectTest, GroupSizeFollowsMeshAxes) {
  OwningOpRef<ModuleOp> module = parse(kHsdp);
  ASSERT_TRUE(module);
  auto mesh = cast<MeshOp>(&module->getBody()->front());
  EXPECT_EQ(mesh.getWorldSize(), 8);
  EXPECT_EQ(mesh.getGroupSize({0}), 2);
  EXPECT_EQ(mesh.getGroupSize({1}), 4);
  EXPECT_EQ(mesh.getGroupSize({1, 0}), 8);
  EXPECT_EQ(mesh.getGroupSize({2}), std::nullopt);
  EXPECT_EQ(mesh.getGroupSize({1, 1}), std::nullopt);
}

TEST_F(DistDialectTest, UnshardedTypeScalesDimZeroBySharding) {
  OwningOpRef<ModuleOp> module = parse(kHsdp);
  ASSERT_TRUE(module);
  SymbolTable symbols(*module);
  auto w = symbols.lookup<ParameterOp>("w");
  auto b = symbols.lookup<ParameterOp>("b");
  ASSERT_TRUE(w && b);
  // Sharded over the 4 ranks of axis 1 only, not over the 8 of the mesh.
  EXPECT_EQ(w.getUnshardedType().getShape(), ArrayRef<int64_t>({16, 3}));
  EXPECT_EQ(b.getUnshardedType(), b.getLocalType());
  EXPECT_EQ(w.getGroupSize(), 4);
  EXPECT_EQ(b.getGroupSize(), 8);
}

TEST_F(DistDialectTest, CollectivesAreOrderedButNotPure) {
  OwningOpRef<ModuleOp> module = parse(kHsdp);
  ASSERT_TRUE(module);
  AllReduceOp allReduce;
  module->walk([&](AllReduceOp op) { allReduce = op; });
  ASSERT_TRUE(allReduce);
  EXPECT_FALSE(isMemoryEffectFree(allReduce));
  EXPECT_FALSE(wouldOpBeTriviallyDead(allReduce));
  SmallVector<MemoryEffects::EffectInstance> effects;
  cast<MemoryEffectOpInterface>(allReduce.getOperation()).getEffects(effects);
  ASSERT_FALSE(effects.empty());
  for (const MemoryEffects::EffectInstance &effect : effects)
    EXPECT_EQ(effect.getResource(), CommResource::get());
  auto collective = cast<CollectiveOpInterface>(allReduce.getOperation());
  EXPECT_EQ(collective.getGroupSize(), 2);
  EXPECT_EQ(collective.getInput(), allReduce.getInput());
}

TEST_F(DistDialectTest, FutureWrapsItsPayload) {
  auto tensor = RankedTensorType::get({2, 3}, Float32Type::get(&context));
  auto future = FutureType::get(tensor);
  EXPECT_EQ(future.getValueType(), tensor);
  EXPECT_EQ(FutureType::get(tensor), future);
}

TEST_F(DistDialectTest, BadInputIsRejected) {
  context.getDiagEngine().registerHandler([](Diagnostic &) {});
  EXPECT_FALSE(parse(R"mlir(dist.mesh @m shape = [0])mlir"));
  EXPECT_FALSE(parse(R"mlir(
    func.func @f(%x: tensor<3xf32>) {
      %f = dist.all_reduce %x on @nowhere reduction = sum : tensor<3xf32>
      return
    })mlir"));
}

// dist's bytecode (DistBytecode.td) round-trips its types, and a file
// written by a newer dist is refused with both versions named.
TEST_F(DistDialectTest, BytecodeRoundTripsAndRefusesNewerVersion) {
  OwningOpRef<ModuleOp> module = parse(kHsdp);
  ASSERT_TRUE(module);
  auto write = [&](uint64_t version) {
    std::string bytes;
    llvm::raw_string_ostream os(bytes);
    BytecodeWriterConfig config;
    config.setDialectVersion<DistDialect>(makeBytecodeVersion(version));
    EXPECT_TRUE(succeeded(writeBytecodeToFile(*module, os, config)));
    return bytes;
  };
  std::string current = write(DistDialect::kBytecodeVersion);
  OwningOpRef<ModuleOp> read = parse(current);
  ASSERT_TRUE(read);
  auto func = *read->getOps<func::FuncOp>().begin();
  auto wait = *func.getOps<WaitOp>().begin();
  EXPECT_EQ(wait.getFuture().getType(),
            FutureType::get(wait.getResult().getType()));

  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
  });
  std::string newer = write(DistDialect::kBytecodeVersion + 1);
  EXPECT_FALSE(parse(newer));
  EXPECT_NE(message.find("but the file has version " +
                         std::to_string(DistDialect::kBytecodeVersion + 1)),
            std::string::npos)
      << message;
}

} // namespace
