//===- BucketCollectives.cpp - fewer, larger collectives ------------------===//
//
// Combines collectives of one kind, group, reduction and element type that
// are issued in a block before any of their results is read into buckets of
// at most `cap-bytes`: one flat buffer, one collective, one wait, slices
// out. PyTorch DDP's gradient buckets, XLA's all-reduce / reduce-scatter /
// all-gather combiners.
//
// Layouts, W the group size, each member flattened row-major:
//   all_reduce      [g1 | g2 | ...]                 -> the same, slices out
//   reduce_scatter  [g1 rank 0 | g2 rank 0 | ... | g1 rank 1 | g2 rank 1 ...]
//                   so that rank r's result [g1 shard r | g2 shard r | ...]
//                   is contiguous (FSDP's flat parameter)
//   all_gather      [p1 | p2 | ...] per rank -> W of them; member i is
//                   column block i of the [W, sum] result
// Scatter and gather axes must be 0 (dim 0 rows are contiguous per rank).
//
// A bucket is issued where its last member was, after every member's input;
// it is completed (its wait and slices) right before the first op that
// reads a member's result, or at the block's end. Moving a collective
// later keeps the program's collectives in one order on every rank: the
// rewrite depends on the IR only.
//
//===----------------------------------------------------------------------===//

#include "Dist/Analysis/ExplicitSync.h"

#include "Dist/IR/DistDialect.h"
#include "Dist/IR/DistOps.h"
#include "Dist/Remarks/Remarks.h"
#include "Dist/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <list>

namespace mlir::dist {
#define GEN_PASS_DEF_DISTBUCKETCOLLECTIVESPASS
#include "Dist/Transforms/Passes.h.inc"
} // namespace mlir::dist

#define DEBUG_TYPE "dist-bucket-collectives"

using namespace mlir;
using namespace mlir::dist;

namespace {

/// What collectives must share to travel in one buffer.
struct BucketKey {
  OperationName kind;
  Attribute mesh, axes, reduction;
  Type elementType;
  bool operator==(const BucketKey &other) const {
    return kind == other.kind && mesh == other.mesh && axes == other.axes &&
           reduction == other.reduction && elementType == other.elementType;
  }
};

struct Member {
  CollectiveOpInterface collective;
  WaitOp wait;
  int64_t elements; // of the input
  /// The parameters whose gradient it syncs: its `dist.grad_of` (from
  /// -dist-expand-grad-sync, or a bucket's), else the explicit chain a
  /// function returns; empty when not a gradient sync.
  SmallVector<Attribute, 1> gradientOf;
};

struct Bucket {
  BucketKey key;
  int64_t groupSize;
  int64_t bytes = 0;
  SmallVector<Member> members;
  int64_t issued = 0; // buckets of this key emitted in the block so far
};

/// A 1-D tensor of `value`'s elements, row-major.
static Value flatten(OpBuilder &b, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() == 1)
    return value;
  SmallVector<ReassociationIndices> all(1);
  for (int64_t i = 0; i < type.getRank(); ++i)
    all[0].push_back(i);
  return tensor::CollapseShapeOp::create(b, loc, value, all);
}

/// `flat` (1-D) reshaped to `type`.
static Value unflatten(OpBuilder &b, Location loc, Value flat,
                       RankedTensorType type) {
  if (type.getRank() == 1)
    return flat;
  SmallVector<ReassociationIndices> all(1);
  for (int64_t i = 0; i < type.getRank(); ++i)
    all[0].push_back(i);
  return tensor::ExpandShapeOp::create(b, loc, type, flat, all);
}

/// A static slice of `source` at `offsets` with `sizes`, unit strides.
static Value slice(OpBuilder &b, Location loc, Value source,
                   ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes) {
  SmallVector<OpFoldResult> o, s, st;
  for (auto [offset, size] : llvm::zip(offsets, sizes)) {
    o.push_back(b.getIndexAttr(offset));
    s.push_back(b.getIndexAttr(size));
    st.push_back(b.getIndexAttr(1));
  }
  return tensor::ExtractSliceOp::create(b, loc, source, o, s, st);
}

/// The bucket's collective and wait, written at `b`'s insertion point; sets
/// `collectiveOut` and returns each member's result, in order.
static SmallVector<Value> combine(OpBuilder &b, Bucket &bucket,
                                  Operation *&collectiveOut) {
  Member &first = bucket.members.front();
  Location loc = first.collective.getLoc();
  Type element = bucket.key.elementType;
  int64_t w = bucket.groupSize;
  int64_t total = 0;
  for (Member &m : bucket.members)
    total += m.elements;
  Operation *prototype = first.collective;
  SmallVector<Value> results;

  // One tensor.concat, not a chain of insert_slices: One-Shot Bufferize's
  // analysis of a chain of 288 took 92 s.
  auto concatFlat = [&]() -> Value {
    SmallVector<Value> flats;
    for (Member &m : bucket.members)
      flats.push_back(flatten(b, loc, m.collective.getInput()));
    return tensor::ConcatOp::create(b, loc, 0, flats);
  };
  if (isa<AllReduceOp>(prototype)) {
    Value flat = concatFlat();
    auto op = cast<AllReduceOp>(prototype);
    auto future = AllReduceOp::create(b, loc, flat, op.getMesh(),
                                      op.getAxes(), op.getReduction());
    collectiveOut = future;
    Value done = WaitOp::create(b, loc, future.getResult());
    int64_t offset = 0;
    for (Member &m : bucket.members) {
      Value piece = slice(b, loc, done, {offset}, {m.elements});
      results.push_back(
          unflatten(b, loc, piece, cast<RankedTensorType>(m.wait.getType())));
      offset += m.elements;
    }
    return results;
  }

  if (isa<ReduceScatterOp>(prototype)) {
    // [W, total / W]: row r is what rank r receives.
    int64_t perRank = total / w;
    SmallVector<Value> blocks;
    for (Member &m : bucket.members) {
      Value flat = flatten(b, loc, m.collective.getInput());
      blocks.push_back(tensor::ExpandShapeOp::create(
          b, loc, RankedTensorType::get({w, m.elements / w}, element), flat,
          {{0, 1}}));
    }
    Value grid = tensor::ConcatOp::create(b, loc, 1, blocks);
    Value flat = flatten(b, loc, grid);
    auto op = cast<ReduceScatterOp>(prototype);
    auto resultType = RankedTensorType::get({perRank}, element);
    auto future = ReduceScatterOp::create(b, loc, flat, resultType,
                                          op.getMesh(), op.getAxes(),
                                          op.getReduction(), /*scatterAxis=*/0);
    collectiveOut = future;
    Value done = WaitOp::create(b, loc, future.getResult());
    int64_t offset = 0;
    for (Member &m : bucket.members) {
      Value piece = slice(b, loc, done, {offset}, {m.elements / w});
      results.push_back(
          unflatten(b, loc, piece, cast<RankedTensorType>(m.wait.getType())));
      offset += m.elements / w;
    }
    return results;
  }

  // All-gather: each rank sends [p1 | p2 | ...]; the result is [W, total].
  Value flat = concatFlat();
  auto op = cast<AllGatherOp>(prototype);
  auto gatheredType = RankedTensorType::get({w * total}, element);
  auto future = AllGatherOp::create(b, loc, flat, gatheredType, op.getMesh(),
                                    op.getAxes(), /*gatherAxis=*/0);
  collectiveOut = future;
  Value done = WaitOp::create(b, loc, future.getResult());
  Value grid = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({w, total}, element), done, {{0, 1}});
  int64_t offset = 0;
  for (Member &m : bucket.members) {
    // [W, elements] -> [W, rows, rest...] -> [W * rows, rest...].
    // The column block is strided in the gathered buffer: copy it into a
    // tensor of its own (a loop after lowering, not a strided memref copy
    // that needs MLIR's runner utilities at link time).
    Value block = slice(b, loc, grid, {0, offset}, {w, m.elements});
    Value own = tensor::EmptyOp::create(b, loc, {w, m.elements}, element);
    block = linalg::CopyOp::create(b, loc, block, own).getResult(0);
    auto input = m.collective.getInput().getType();
    SmallVector<int64_t> split{w};
    llvm::append_range(split, input.getShape());
    SmallVector<ReassociationIndices> expand{{0}, {}};
    for (int64_t i = 0; i < input.getRank(); ++i)
      expand[1].push_back(i + 1);
    Value blocks = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get(split, element), block, expand);
    SmallVector<ReassociationIndices> collapse{{0, 1}};
    for (int64_t i = 1; i < input.getRank(); ++i)
      collapse.push_back({i + 1});
    results.push_back(
        tensor::CollapseShapeOp::create(b, loc, blocks, collapse));
    offset += m.elements;
  }
  return results;
}

struct DistBucketCollectivesPass
    : public dist::impl::DistBucketCollectivesPassBase<
          DistBucketCollectivesPass> {
  // Reported as an analysis remark, not as pass statistics (Dist/Remarks/Remarks.h).
  int64_t numBuckets = 0, numCombined = 0;
  // The position of each op of the block runOn works on (see there).
  llvm::DenseMap<Operation *, size_t> position;

  using Base::Base;

  void runOnOperation() override {
    // The tensor form only (BufferForms.cpp).
    if (failed(refuseBufferForms(getOperation(), getArgument())))
      return signalPassFailure();
    numBuckets = numCombined = 0;
    runPass();
    remarkCounts(getOperation(), getArgument(),
                 {{"buckets", numBuckets}, {"combined", numCombined}});
  }

  void runPass() {
    if (capBytes < 1 || firstCapBytes < 1 || minCount < 2) {
      emitError(getOperation().getLoc())
          << "dist-bucket-collectives: cap-bytes and first-cap-bytes must be "
             "at least 1 and min-count at least 2";
      return signalPassFailure();
    }
    SymbolTableCollection symbols;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      llvm::DenseMap<Operation *, StringRef> gradientOf =
          mapGradientCollectives(func, symbols);
      func.walk([&](Block *block) { runOn(*block, symbols, gradientOf); });
    }
  }

  /// A collective that can join a bucket: axis 0, static shapes, its future
  /// waited on once in the same block.
  std::optional<Member> asMember(Operation *op,
                                 llvm::DenseMap<Operation *, StringRef> &grads,
                                 SymbolTableCollection &symbols,
                                 int64_t &groupSize) {
    auto collective = dyn_cast<CollectiveOpInterface>(op);
    if (!collective || collective.getCollectiveDim() != 0 ||
        !collective.getResult().hasOneUse())
      return std::nullopt;
    auto wait = dyn_cast<WaitOp>(*collective.getResult().getUsers().begin());
    auto input = cast<RankedTensorType>(collective.getInput().getType());
    std::optional<int64_t> w = collective.getGroupSize(&symbols);
    if (!wait || wait->getBlock() != op->getBlock() ||
        !input.hasStaticShape() || input.getRank() < 1 || !w ||
        (isa<ReduceScatterOp>(op) && input.getNumElements() % *w != 0))
      return std::nullopt;
    groupSize = *w;
    Member member{collective, wait, input.getNumElements(), {}};
    if (auto tag =
            op->getAttrOfType<ArrayAttr>(DistDialect::getGradOfAttrName()))
      llvm::append_range(member.gradientOf, tag.getValue());
    else if (StringRef param = grads.lookup(op); !param.empty())
      member.gradientOf.push_back(
          FlatSymbolRefAttr::get(op->getContext(), param));
    return member;
  }

  void runOn(Block &block, SymbolTableCollection &symbols,
             llvm::DenseMap<Operation *, StringRef> &gradientOf) {
    std::list<Bucket> open;
    // A member's wait result -> its bucket.
    llvm::DenseMap<Value, Bucket *> pending;
    // Members' waits erased with their bucket before the walk reached them.
    llvm::DenseSet<Operation *> erased;
    auto flush = [&](Bucket &bucket) {
      for (Member &m : bucket.members)
        pending.erase(m.wait.getResult());
      if (bucket.members.size() >= size_t(minCount))
        emit(bucket, erased);
      if (!bucket.members.empty())
        ++bucket.issued;
      bucket.members.clear();
      bucket.bytes = 0;
    };
    SmallVector<Operation *> ops;
    for (Operation &op : block)
      ops.push_back(&op);
    // The block's ops in order: emit moves and inserts only ops it makes,
    // so the order of these stays, and comparing positions here replaces
    // isBeforeInBlock, which renumbers the block after every move (a
    // quadratic pass on a step with thousands of parameters).
    position.clear();
    for (auto [i, op] : llvm::enumerate(ops))
      position[op] = i;
    for (Operation *op : ops) {
      if (erased.contains(op))
        continue;
      // Complete every bucket whose result `op` (or an op in it) reads.
      SmallVector<Bucket *> read;
      op->walk([&](Operation *inner) {
        for (Value operand : inner->getOperands())
          if (Bucket *bucket = pending.lookup(operand))
            if (!llvm::is_contained(read, bucket))
              read.push_back(bucket);
      });
      for (Bucket *bucket : read)
        flush(*bucket);

      int64_t groupSize = 0;
      std::optional<Member> member =
          asMember(op, gradientOf, symbols, groupSize);
      if (!member)
        continue;
      CollectiveOpInterface collective = member->collective;
      auto input = cast<RankedTensorType>(collective.getInput().getType());
      int64_t bytes =
          input.getNumElements() * ((input.getElementTypeBitWidth() + 7) / 8);
      std::optional<ReductionKind> reduction =
          collective.getCollectiveReduction();
      BucketKey key{
          op->getName(), collective.getMeshAttr(),
          DenseI64ArrayAttr::get(op->getContext(), collective.getAxes()),
          reduction ? ReductionKindAttr::get(op->getContext(), *reduction)
                    : Attribute(),
          input.getElementType()};
      auto it = llvm::find_if(open, [&](Bucket &b) {
        return b.key == key && b.groupSize == groupSize;
      });
      if (it == open.end()) {
        open.push_back(Bucket{key, groupSize, 0, {}, 0});
        it = std::prev(open.end());
      }
      // The same tensor twice in one bucket (a ZeRO-3 parameter's forward
      // and backward gathers, scheduled together) would move it twice: the
      // second starts a bucket of its own.
      bool repeated = llvm::any_of(it->members, [&](Member &m) {
        return m.collective.getInput() == collective.getInput();
      });
      // The first bucket is small, as DDP's (1 MiB): it leaves while the
      // rest of the backward still computes.
      int64_t cap = it->issued == 0 ? std::min<int64_t>(firstCapBytes, capBytes)
                                    : int64_t(capBytes);
      // A collective of at least the cap goes alone, as it is (a bucket
      // would only copy it), and does not close the open bucket: small
      // gradients between large ones (a 7B model's norms) still share one.
      if (bytes >= capBytes)
        continue;
      if (!it->members.empty() && (repeated || it->bytes + bytes > cap))
        flush(*it);
      it->members.push_back(*member);
      it->bytes += bytes;
      pending[member->wait.getResult()] = &*it;
    }
    for (Bucket &bucket : open)
      if (!bucket.members.empty())
        flush(bucket);
  }

  /// Replaces the members of `bucket` by one collective issued where the
  /// last member was; its wait and slices go right before the first op that
  /// reads a member's result (none of which precedes the last member: that
  /// op would have completed the bucket).
  void emit(Bucket &bucket, llvm::DenseSet<Operation *> &erased) {
    Operation *last = bucket.members.back().collective;
    Block *block = last->getBlock();
    OpBuilder b(last);
    Operation *collective = nullptr;
    SmallVector<Value> results = combine(b, bucket, collective);
    llvm::SetVector<Attribute> grads;
    bool allGradients = true;
    for (Member &m : bucket.members) {
      allGradients &= !m.gradientOf.empty();
      grads.insert_range(m.gradientOf);
    }
    if (allGradients)
      collective->setAttr(DistDialect::getGradOfAttrName(),
                          b.getArrayAttr(grads.getArrayRef()));
    SmallVector<Operation *> tail;
    for (Operation *op = collective->getNextNode(); op != last;
         op = op->getNextNode())
      tail.push_back(op);
    for (auto [m, result] : llvm::zip(bucket.members, results)) {
      m.wait.getResult().replaceAllUsesWith(result);
      erased.insert(m.wait);
      erased.insert(m.collective);
      m.wait->erase();
      m.collective->erase();
    }
    Operation *firstReader = block->getTerminator();
    auto before = [&](Operation *a, Operation *b) {
      auto pa = position.find(a), pb = position.find(b);
      if (pa != position.end() && pb != position.end())
        return pa->second < pb->second;
      return a->isBeforeInBlock(b); // an op a bucket made (not expected)
    };
    for (Value result : results)
      for (Operation *user : result.getUsers())
        if (Operation *at = block->findAncestorOpInBlock(*user))
          if (!llvm::is_contained(tail, at) && before(at, firstReader))
            firstReader = at;
    for (Operation *op : tail)
      op->moveBefore(firstReader);
    numBuckets += 1;
    numCombined += bucket.members.size();
  }
};

} // namespace
