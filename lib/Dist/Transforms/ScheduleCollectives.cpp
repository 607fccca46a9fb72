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
#include "Dist/Remarks/Remarks.h"
#include "Dist/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <limits>
#include <set>
#include <tuple>
#include <vector>

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

/// needs[c]: how many ops of the block collective `collectives[c]` needs
/// (itself included), the size of its cone in the dependence graph. The
/// cones are bit sets swept backward over the block (every edge points
/// forward), a chunk of collectives at a time so that memory stays bounded,
/// and counted with bit-sliced counters: a word of 64 cones costs a few
/// word operations per op, not one per member (the plain count was
/// quadratic in the block, 25 s for a 8,000-parameter ZeRO-3 step).
static SmallVector<uint64_t> coneSizes(const Graph &g,
                                       ArrayRef<unsigned> collectives) {
  unsigned n = g.ops.size();
  SmallVector<uint64_t> needs(collectives.size(), 0);
  // Words of cone bits per op in one chunk: at most 64 (4,096 collectives),
  // and about 2^23 words for the whole chunk.
  size_t words = std::clamp<size_t>((size_t(1) << 23) / std::max(n, 1u), 1, 64);
  unsigned planes = 1;
  while ((uint64_t(1) << planes) <= n)
    ++planes;
  std::vector<uint64_t> bits, counts;
  for (size_t first = 0; first < collectives.size(); first += words * 64) {
    size_t inChunk = std::min(words * 64, collectives.size() - first);
    size_t w = (inChunk + 63) / 64;
    bits.assign(size_t(n) * w, 0);
    counts.assign(size_t(planes) * w, 0);
    for (size_t c = 0; c < inChunk; ++c)
      bits[size_t(collectives[first + c]) * w + c / 64] |= uint64_t(1)
                                                           << (c % 64);
    for (unsigned i = n; i-- > 0;) {
      uint64_t *row = &bits[size_t(i) * w];
      for (unsigned s : g.succs[i])
        for (size_t k = 0; k < w; ++k)
          row[k] |= bits[size_t(s) * w + k];
      // Add the row to the bit-sliced per-cone counters.
      for (size_t k = 0; k < w; ++k) {
        uint64_t carry = row[k];
        for (unsigned p = 0; carry && p < planes; ++p) {
          uint64_t &plane = counts[size_t(p) * w + k];
          uint64_t next = plane & carry;
          plane ^= carry;
          carry = next;
        }
      }
    }
    for (size_t c = 0; c < inChunk; ++c)
      for (unsigned p = 0; p < planes; ++p)
        needs[first + c] |= ((counts[size_t(p) * w + c / 64] >> (c % 64)) & 1)
                            << p;
  }
  return needs;
}

/// Each op's priority: a feeder of collectives by the cheapest of them (its
/// cone size), an op without results (a stash write, a release: it ends
/// lifetimes) 0, any other op after every feeder. The cheapest collective
/// an op feeds is the cheapest of its own (a collective) and its
/// successors': one backward sweep.
static SmallVector<uint64_t> rankOps(const Graph &g) {
  unsigned n = g.ops.size();
  SmallVector<unsigned> collectives;
  for (unsigned i = 0; i < n; ++i)
    if (isa<CollectiveOpInterface>(g.ops[i]))
      collectives.push_back(i);
  SmallVector<uint64_t> needs = coneSizes(g, collectives);
  SmallVector<uint64_t> rank(n, kNotFeeding);
  for (auto [c, i] : llvm::enumerate(collectives))
    rank[i] = needs[c];
  for (unsigned i = n; i-- > 0;)
    for (unsigned s : g.succs[i])
      rank[i] = std::min(rank[i], rank[s]);
  for (unsigned i = 0; i < n; ++i)
    if (rank[i] == kNotFeeding && g.ops[i]->getNumResults() == 0)
      rank[i] = 0;
  return rank;
}

struct DistScheduleCollectivesPass
    : public dist::impl::DistScheduleCollectivesPassBase<
          DistScheduleCollectivesPass> {
  // Reported as an analysis remark, not as pass statistics (Dist/Remarks/Remarks.h).
  int64_t numMoved = 0;

  using Base::Base;

  void runOnOperation() override {
    // The tensor form only (BufferForms.cpp).
    if (failed(refuseBufferForms(getOperation(), getArgument())))
      return signalPassFailure();
    numMoved = 0;
    runPass();
    remarkCounts(getOperation(), getArgument(), {{"moved", numMoved}});
  }

  void runPass() {
    if (maxInFlight < 0 || maxGatherBytesInFlight < 0) {
      emitError(getOperation()->getLoc())
          << "dist-schedule-collectives: max-in-flight and "
             "max-gather-bytes-in-flight must be at least 0";
      return signalPassFailure();
    }
    SmallVector<Block *> blocks;
    getOperation()->walk([&](Block *block) {
      auto kind = dyn_cast_or_null<RegionKindInterface>(block->getParentOp());
      if (!kind || kind.hasSSADominance(block->getParent()->getRegionNumber()))
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
    SmallVector<uint64_t> rank = rankOps(g);
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

    // Ready ops by (rank, index): collectives apart, so that those the
    // limits hold back are skipped, not moved out and back at every wait
    // (which was quadratic in the ready collectives).
    // (rank, not a constant, index): a constant goes before the ops it ties
    // with, wherever the input had it (a re-read step re-creates the
    // constants of its syncs next to them).
    using Key = std::tuple<uint64_t, bool, unsigned>;
    std::set<Key> ready, readyCollectives;
    std::set<std::tuple<uint64_t, unsigned, unsigned>> readyWaits;
    SmallVector<unsigned> issuedAt(n, 0); // position in the schedule
    SmallVector<bool> isCollective(n);
    SmallVector<int64_t> bytesOf(n);
    for (unsigned i = 0; i < n; ++i) {
      isCollective[i] = isa<CollectiveOpInterface>(g.ops[i]);
      bytesOf[i] = gatherBytes(g.ops[i]);
    }
    auto makeReady = [&](unsigned i) {
      // Waits tie in the order their collectives were issued, not by their
      // own position: a re-read step has its waits re-expanded next to
      // their collectives, and the schedule must not depend on that.
      if (auto it = collectiveOfWait.find(i); it != collectiveOfWait.end())
        readyWaits.insert({waitRank(i), issuedAt[it->second], i});
      else
        (isCollective[i] ? readyCollectives : ready)
            .insert({rank[i], !g.ops[i]->hasTrait<OpTrait::ConstantLike>(), i});
    };
    for (unsigned i = 0; i < n; ++i)
      if (g.numPreds[i] == 0)
        makeReady(i);

    int64_t inFlight = 0, gatherBytesInFlight = 0;
    // Whether collective i may be issued now. Between two waits this only
    // turns false (issuing adds to what is in flight), so a collective held
    // back stays held until the next wait, as the limits intend.
    auto allowed = [&](unsigned i) {
      if (inFlight == 0)
        return true;
      if (maxInFlight > 0 && inFlight + 1 > maxInFlight)
        return false;
      int64_t bytes = bytesOf[i];
      return !(bytes > 0 && maxGatherBytesInFlight > 0 &&
               gatherBytesInFlight + bytes > maxGatherBytesInFlight);
    };
    llvm::DenseSet<unsigned> waited; // collectives with a wait in the block
    for (auto [wait, collective] : collectiveOfWait)
      waited.insert(collective);

    SmallVector<unsigned> order;
    order.reserve(n);
    while (order.size() < n) {
      // The first op in (rank, index) order that the limits allow.
      std::optional<unsigned> next;
      auto other = ready.begin();
      bool anyCollective =
          inFlight == 0 || maxInFlight == 0 || inFlight < maxInFlight;
      for (auto it = readyCollectives.begin();
           anyCollective && it != readyCollectives.end(); ++it) {
        if (other != ready.end() && *other < *it)
          break;
        if (allowed(std::get<2>(*it))) {
          next = std::get<2>(*it);
          readyCollectives.erase(it);
          break;
        }
      }
      if (!next && other != ready.end()) {
        next = std::get<2>(*other);
        ready.erase(other);
      }
      if (!next && readyWaits.empty()) {
        // Every wait in flight depends on a held collective (through an op
        // ordered against both): the input had them in flight together, so
        // may the schedule.
        if (readyCollectives.empty())
          return failure(); // unreachable: the graph is acyclic
        next = std::get<2>(*readyCollectives.begin());
        readyCollectives.erase(readyCollectives.begin());
        ++inFlight;
        gatherBytesInFlight += bytesOf[*next];
      } else if (!next) {
        // Only waits (and held collectives) remain ready.
        next = std::get<2>(*readyWaits.begin());
        readyWaits.erase(readyWaits.begin());
        unsigned collective = collectiveOfWait.lookup(*next);
        --inFlight;
        gatherBytesInFlight -= bytesOf[collective];
      } else if (waited.contains(*next)) {
        ++inFlight;
        gatherBytesInFlight += bytesOf[*next];
      }
      issuedAt[*next] = order.size();
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
