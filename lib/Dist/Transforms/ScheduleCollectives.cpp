//===- ScheduleCollectives.cpp - overlap communication and compute --------===//
//
// A list scheduler over each block: collectives as early as their operands
// allow, waits as late as their users allow, compute in between. It only
// permutes ops along a topological order of the block's dependence graph
// (SSA values and declared memory effects), so every schedule it writes
// computes what the input computed; the graph is what this file must get
// right.
//
// Dependences, for ops a before b in the block:
//   - b uses a value a defines (in b or in an op nested in b);
//   - both touch one effect key and one of them writes it. A key is a
//     resource, refined by the future for dist::Future (a wait touches its
//     own future only) and by the parameter for dist::Stash (stash ops of
//     different parameters commute); other resources are keyed whole;
//   - one of them has effects the interfaces cannot name (unknown), the
//     other has any effect.
// Collectives are taken to read dist::Comm, not write it: they commute with
// each other (this pass runs once for all ranks, so every rank issues them
// in the one order it picks) and stay ordered against the other ops on
// dist::Comm.
//
// Priorities: an op that feeds collectives (transitively) is ranked by the
// cheapest of them, the number of ops that collective needs; an op without
// results (a stash write, a release) as soon as it can go; any other op
// after every feeder; ties in block order. So the collective that can leave
// first (the last layer's gradient in a backward) does, with the compute it
// needs, and the rest keeps its order. A wait goes only when nothing else
// can, the one whose users rank best first.
// Limits on collectives in flight (issued, not waited) hold a collective
// back until a wait has completed one.
//
//===----------------------------------------------------------------------===//

#include "Dist/IR/DistDialect.h"
#include "Dist/IR/DistOps.h"
#include "Dist/IR/Remarks.h"
#include "Dist/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"

#include <limits>
#include <set>

namespace mlir::dist {
#define GEN_PASS_DEF_DISTSCHEDULECOLLECTIVESPASS
#include "Dist/Transforms/Passes.h.inc"
} // namespace mlir::dist

using namespace mlir;
using namespace mlir::dist;

namespace {

/// One effect key an op touches: a resource, refined by a future or a
/// parameter symbol (null: the whole resource).
using EffectKey = std::pair<SideEffects::Resource *, const void *>;

struct Access {
  EffectKey key;
  bool write;
};

/// What `op` touches; std::nullopt when its effects are unknown.
static std::optional<SmallVector<Access>> accessesOf(Operation *op) {
  SmallVector<Access> accesses;
  if (isMemoryEffectFree(op))
    return accesses;
  // Collectives commute with each other: the one program every rank runs
  // issues them in one order, whatever order this pass picks. They stay
  // ordered against every other op on dist::Comm (a kept gather, a group's
  // creation, a loop that communicates), which writes it.
  if (isa<CollectiveOpInterface>(op)) {
    accesses.push_back({{CommResource::get(), nullptr}, false});
    return accesses;
  }
  if (isa<StashGradOp, TakeStashOp>(op)) {
    auto param = op->getAttrOfType<FlatSymbolRefAttr>("param");
    accesses.push_back(
        {{StashResource::get(), param.getAsOpaquePointer()}, true});
    return accesses;
  }
  std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
      getEffectsRecursively(op);
  if (!effects)
    return std::nullopt;
  for (MemoryEffects::EffectInstance &effect : *effects) {
    SideEffects::Resource *resource = effect.getResource();
    // Stash effects of nested ops name no parameter here: an op holding them
    // is ordered against everything.
    if (resource == StashResource::get())
      return std::nullopt;
    const void *refinement = nullptr;
    if (resource == FutureResource::get() && effect.getValue())
      refinement = effect.getValue().getAsOpaquePointer();
    accesses.push_back({{resource, refinement},
                        !isa<MemoryEffects::Read>(effect.getEffect())});
  }
  return accesses;
}

/// The dependence graph of one block's ops (its terminator excluded).
struct Graph {
  SmallVector<Operation *> ops;
  llvm::DenseMap<Operation *, unsigned> index;
  SmallVector<SmallVector<unsigned, 4>> succs;
  SmallVector<unsigned> numPreds;

  void edge(unsigned from, unsigned to) {
    if (from == to)
      return;
    succs[from].push_back(to);
    ++numPreds[to];
  }

  explicit Graph(Block &block) {
    for (Operation &op : block)
      if (!op.hasTrait<OpTrait::IsTerminator>()) {
        index[&op] = ops.size();
        ops.push_back(&op);
      }
    succs.resize(ops.size());
    numPreds.assign(ops.size(), 0);
    addValueEdges(block);
    addEffectEdges();
  }

  void addValueEdges(Block &block) {
    for (unsigned i = 0, e = ops.size(); i < e; ++i)
      ops[i]->walk([&](Operation *inner) {
        for (Value operand : inner->getOperands()) {
          Operation *def = operand.getDefiningOp();
          if (!def)
            continue;
          Operation *at = block.findAncestorOpInBlock(*def);
          if (auto it = index.find(at); at && it != index.end())
            edge(it->second, i);
        }
      });
  }

  void addEffectEdges() {
    struct KeyState {
      std::optional<unsigned> lastWrite;
      SmallVector<unsigned> reads;
    };
    llvm::DenseMap<EffectKey, KeyState> keys;
    std::optional<unsigned> lastUnknown;
    SmallVector<unsigned> sinceUnknown; // ops with effects since it
    for (auto [i, op] : llvm::enumerate(ops)) {
      std::optional<SmallVector<Access>> accesses = accessesOf(op);
      if (!accesses) {
        for (unsigned j : sinceUnknown)
          edge(j, i);
        if (lastUnknown)
          edge(*lastUnknown, i);
        lastUnknown = i;
        sinceUnknown.clear();
        continue;
      }
      if (accesses->empty())
        continue;
      if (lastUnknown)
        edge(*lastUnknown, i);
      sinceUnknown.push_back(i);
      for (Access &access : *accesses) {
        KeyState &state = keys[access.key];
        if (state.lastWrite)
          edge(*state.lastWrite, i);
        if (!access.write) {
          state.reads.push_back(i);
          continue;
        }
        for (unsigned j : state.reads)
          edge(j, i);
        state.reads.clear();
        state.lastWrite = i;
      }
    }
  }
};

constexpr uint64_t kNotFeeding = std::numeric_limits<uint64_t>::max();

struct DistScheduleCollectivesPass
    : public dist::impl::DistScheduleCollectivesPassBase<
          DistScheduleCollectivesPass> {
  // Reported as an analysis remark, not as pass statistics (Dist/IR/Remarks.h).
  int64_t numMoved = 0;

  using Base::Base;

  void runOnOperation() override {
    numMoved = 0;
    runPass();
    remarkCounts(getOperation(), getArgument(), {{"moved", numMoved}});
  }

  void runPass() {
    if (maxInFlight < 0 || maxGatherBytesInFlight < 0) {
      emitError(getOperation().getLoc())
          << "dist-schedule-collectives: max-in-flight and "
             "max-gather-bytes-in-flight must be at least 0";
      return signalPassFailure();
    }
    SmallVector<Block *> blocks;
    for (auto func : getOperation().getOps<func::FuncOp>())
      func.walk([&](Block *block) {
        auto kind = dyn_cast_or_null<RegionKindInterface>(block->getParentOp());
        if (!kind ||
            kind.hasSSADominance(block->getParent()->getRegionNumber()))
          blocks.push_back(block);
      });
    for (Block *block : blocks)
      if (failed(schedule(*block))) {
        emitError(block->getParentOp()->getLoc())
            << "dist-schedule-collectives: internal error: the block's "
               "dependences have a cycle";
        return signalPassFailure();
      }
  }

  /// Bytes an all_gather's result holds; 0 for other collectives.
  static int64_t gatherBytes(Operation *op) {
    auto gather = dyn_cast<AllGatherOp>(op);
    if (!gather)
      return 0;
    auto type = cast<FutureType>(gather.getResult().getType()).getValueType();
    auto tensor = cast<RankedTensorType>(type);
    return tensor.getNumElements() *
           ((tensor.getElementTypeBitWidth() + 7) / 8);
  }

  LogicalResult schedule(Block &block) {
    Graph g(block);
    unsigned n = g.ops.size();
    if (n < 2)
      return success();
    // The collectives each op feeds (itself included); the graph's edges
    // all point forward in the block, so one backward sweep settles them.
    SmallVector<unsigned> collectives;
    for (unsigned i = 0; i < n; ++i)
      if (isa<CollectiveOpInterface>(g.ops[i]))
        collectives.push_back(i);
    SmallVector<llvm::BitVector> feeds(n, llvm::BitVector(collectives.size()));
    for (auto [c, i] : llvm::enumerate(collectives))
      feeds[i].set(c);
    for (unsigned i = n; i-- > 0;)
      for (unsigned s : g.succs[i])
        feeds[i] |= feeds[s];
    // How much of the block each collective needs before it can be issued.
    SmallVector<uint64_t> needs(collectives.size(), 0);
    for (llvm::BitVector &bits : feeds)
      for (unsigned c : bits.set_bits())
        ++needs[c];
    // Rank: a feeder by the cheapest collective it feeds; an op without
    // results (a stash write, a release: it ends lifetimes) first; any other
    // op after every feeder.
    SmallVector<uint64_t> rank(n, kNotFeeding);
    for (unsigned i = 0; i < n; ++i) {
      for (unsigned c : feeds[i].set_bits())
        rank[i] = std::min(rank[i], needs[c]);
      if (rank[i] == kNotFeeding && g.ops[i]->getNumResults() == 0)
        rank[i] = 0;
    }
    // A wait of a collective of this block, and that collective.
    llvm::DenseMap<unsigned, unsigned> collectiveOfWait;
    for (auto [i, op] : llvm::enumerate(g.ops))
      if (auto wait = dyn_cast<WaitOp>(op))
        if (Operation *def = wait.getFuture().getDefiningOp())
          if (auto it = g.index.find(def); it != g.index.end())
            collectiveOfWait[i] = it->second;
    // A wait's rank: the best of its users'.
    auto waitRank = [&](unsigned i) {
      uint64_t r = kNotFeeding;
      for (unsigned s : g.succs[i])
        r = std::min(r, rank[s]);
      return r;
    };

    std::set<std::pair<uint64_t, unsigned>> ready, readyWaits;
    SmallVector<unsigned> held; // collectives waiting for the limits
    auto makeReady = [&](unsigned i) {
      if (collectiveOfWait.count(i))
        readyWaits.insert({waitRank(i), i});
      else
        ready.insert({rank[i], i});
    };
    for (unsigned i = 0; i < n; ++i)
      if (g.numPreds[i] == 0)
        makeReady(i);

    int64_t inFlight = 0, gatherBytesInFlight = 0;
    auto allowed = [&](unsigned i) {
      if (!isa<CollectiveOpInterface>(g.ops[i]) || inFlight == 0)
        return true;
      if (maxInFlight > 0 && inFlight + 1 > maxInFlight)
        return false;
      int64_t bytes = gatherBytes(g.ops[i]);
      return !(bytes > 0 && maxGatherBytesInFlight > 0 &&
               gatherBytesInFlight + bytes > maxGatherBytesInFlight);
    };
    llvm::DenseSet<unsigned> waited; // collectives with a wait in the block
    for (auto [wait, collective] : collectiveOfWait)
      waited.insert(collective);

    SmallVector<unsigned> order;
    order.reserve(n);
    while (order.size() < n) {
      std::optional<unsigned> next;
      while (!ready.empty()) {
        unsigned i = ready.begin()->second;
        ready.erase(ready.begin());
        if (allowed(i)) {
          next = i;
          break;
        }
        held.push_back(i);
      }
      if (!next && readyWaits.empty()) {
        // Every wait in flight depends on a held collective (through an op
        // ordered against both): the input had them in flight together, so
        // may the schedule.
        if (held.empty())
          return failure(); // unreachable: the graph is acyclic
        next = held.front();
        held.erase(held.begin());
        ++inFlight;
        gatherBytesInFlight += gatherBytes(g.ops[*next]);
      } else if (!next) {
        // Only waits (and held collectives) remain ready.
        next = readyWaits.begin()->second;
        readyWaits.erase(readyWaits.begin());
        unsigned collective = collectiveOfWait.lookup(*next);
        --inFlight;
        gatherBytesInFlight -= gatherBytes(g.ops[collective]);
        for (unsigned h : held)
          ready.insert({rank[h], h});
        held.clear();
      } else if (waited.contains(*next)) {
        ++inFlight;
        gatherBytesInFlight += gatherBytes(g.ops[*next]);
      }
      order.push_back(*next);
      for (unsigned s : g.succs[*next])
        if (--g.numPreds[s] == 0)
          makeReady(s);
    }

    // The block's last op stays last when it is a terminator (the graph
    // left it out).
    Operation *terminator =
        g.index.count(&block.back()) ? nullptr : &block.back();
    for (auto [position, i] : llvm::enumerate(order)) {
      if (position != i)
        ++numMoved;
      Operation *op = g.ops[i];
      if (terminator)
        op->moveBefore(terminator);
      else
        op->moveBefore(&block, block.end());
    }
    return success();
  }
};

} // namespace
