//===- Slots.cpp - a step's signature as dist-run reads it ----------------===//

#include "Slots.h"

#include "Dist/IR/DistDialect.h"
#include "Dist/IR/DistOps.h"
#include "Dist/StepRunner/F32Boundary.h"

#include "llvm/Support/CheckedArithmetic.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unistd.h>

using namespace mlir;
using namespace dist_run;

/// Where a diagnostic about argument or result `i` of `func` goes: the
/// argument itself, or the function (a result has no location of its own).
/// Never the function op itself, which MLIR would print with it.
static Location locationOf(func::FuncOp func, bool result, unsigned i) {
  if (!result && !func.isExternal())
    return func.getArgument(i).getLoc();
  return func.getLoc();
}

LogicalResult dist_run::readSlots(func::FuncOp func, bool results,
                                  std::vector<Slot> &slots) {
  unsigned n = results ? func.getNumResults() : func.getNumArguments();
  for (unsigned i = 0; i < n; ++i) {
    Type type = results ? func.getResultTypes()[i] : func.getArgumentTypes()[i];
    auto tensor = dyn_cast<RankedTensorType>(type);
    auto tie = results ? func.getResultAttrOfType<FlatSymbolRefAttr>(
                             i, dist::DistDialect::getGradAttrName())
                       : func.getArgAttrOfType<FlatSymbolRefAttr>(
                             i, dist::DistDialect::getParamAttrName());
    bool floating = tensor && isa<BFloat16Type, Float16Type, Float32Type,
                                  Float64Type>(tensor.getElementType());
    bool integral = tensor && !results && !tie &&
                    dist_step::isHostIntegerType(tensor.getElementType());
    if (!tensor || !tensor.hasStaticShape() || !(floating || integral))
      return emitError(locationOf(func, results, i))
             << "dist-run supports statically shaped tensors of bf16, f16, "
                "f32 or f64 (and i1, i32 or i64 for data arguments) only, but "
             << (results ? "result #" : "argument #") << i << " is " << type;
    Slot slot;
    slot.element = tensor.getElementType();
    if (floating)
      slot.reduce = cast<FloatType>(slot.element);
    // What the step holds; the host's f32 copy is the runner's own.
    std::optional<uint64_t> bytes =
        (slot.element.getIntOrFloatBitWidth() + 7) / 8;
    for (int64_t d : tensor.getShape())
      if (bytes)
        bytes = llvm::checkedMulUnsigned<uint64_t>(*bytes, d);
    if (llvm::is_contained(tensor.getShape(), 0))
      bytes = 0;
    slot.bytes =
        bytes.value_or(UINT64_MAX); // past 2^64: more than any machine has
    slot.shape.assign(tensor.getShape().begin(), tensor.getShape().end());
    if (tie)
      slot.param = tie.getValue().str();
    if (results) {
      if (auto next = func.getResultAttrOfType<IntegerAttr>(
              i, dist::DistDialect::getNextAttrName()))
        slot.next = next.getInt();
      slot.epilogue = bool(func.getBody()
                               .back()
                               .getTerminator()
                               ->getOperand(i)
                               .getDefiningOp<dist::EpilogueOp>());
    }
    if (tie && results)
      if (auto param = SymbolTable::lookupNearestSymbolFrom<dist::ParameterOp>(
              func, tie))
        if (auto reduce = dyn_cast<FloatType>(param.getReduceElementType()))
          slot.reduce = reduce;
    slots.push_back(slot);
  }
  return success();
}

uint64_t dist_run::physicalMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageSize <= 0)
    return UINT64_MAX; // unknown: let the allocation decide
  return llvm::checkedMulUnsigned<uint64_t>(pages, pageSize)
      .value_or(UINT64_MAX);
}

LogicalResult dist_run::checkFitsInMemory(func::FuncOp func, bool results,
                                          const std::vector<Slot> &slots,
                                          uint64_t memoryBytes) {
  bool fits = true;
  uint64_t total = 0;
  for (size_t i = 0; i < slots.size(); ++i) {
    total =
        llvm::checkedAddUnsigned(total, slots[i].bytes).value_or(UINT64_MAX);
    if (slots[i].bytes <= memoryBytes)
      continue;
    fits = false;
    emitError(locationOf(func, results, i))
        << "dist-run: " << (results ? "result #" : "argument #") << i << " of @"
        << func.getName() << " is " << typeString(slots[i]) << ", "
        << (slots[i].bytes == UINT64_MAX ? std::string("2^64 or more")
                                         : std::to_string(slots[i].bytes))
        << " bytes: more than this machine's " << memoryBytes
        << " bytes of memory";
  }
  // The runner holds every argument at once; the step allocates its results.
  if (fits && total > memoryBytes) {
    fits = false;
    emitError(func.getLoc())
        << "dist-run: the " << (results ? "results" : "arguments") << " of @"
        << func.getName() << " are " << total
        << " bytes together: more than this machine's " << memoryBytes
        << " bytes of memory";
  }
  return success(fits);
}

SyncTolerance dist_run::syncToleranceOf(const Slot &gradient) {
  SyncTolerance tolerance;
  FloatType reduce = gradient.reduce,
            rounded = cast<FloatType>(gradient.element);
  if (reduce.getFPMantissaWidth() < 24) {
    tolerance.compared = false;
    return tolerance;
  }
  tolerance.reduceUnit = std::ldexp(1.0, -int(reduce.getFPMantissaWidth()));
  if (rounded.isF32())
    return tolerance;
  // The type the host's value was last rounded to: the step's, or f32 at
  // the boundary for an f64 step.
  if (rounded.getWidth() > 32)
    rounded = Float32Type::get(rounded.getContext());
  const llvm::fltSemantics &semantics = rounded.getFloatSemantics();
  int precision = int(llvm::APFloat::semanticsPrecision(semantics));
  double u = std::ldexp(1.0, -precision);
  tolerance.unit = u / (1 - u);
  tolerance.tiny = std::ldexp(
      0.5, llvm::APFloat::semanticsMinExponent(semantics) - (precision - 1));
  return tolerance;
}

std::vector<dist_step::Shape>
dist_run::shapesOf(const std::vector<Slot> &slots) {
  std::vector<dist_step::Shape> shapes;
  for (const Slot &s : slots)
    shapes.push_back(s.shape);
  return shapes;
}

std::string dist_run::typeString(const Slot &slot) {
  std::string s = "tensor<";
  for (int64_t d : slot.shape)
    s += std::to_string(d) + "x";
  llvm::raw_string_ostream os(s);
  os << slot.element << ">";
  return s;
}

void dist_run::writeResultsIndex(const std::string &path,
                                 const std::vector<Slot> &results,
                                 std::string &error) {
  FILE *f = std::fopen(path.c_str(), "w");
  if (f) {
    for (size_t r = 0; r < results.size(); ++r)
      std::fprintf(f, "%zu %s%s %s\n", r,
                   !results[r].param.empty() ? "grad "
                   : results[r].epilogue     ? "epilogue"
                                             : "out",
                   results[r].param.c_str(), typeString(results[r]).c_str());
  }
  if (!f || std::fclose(f) != 0)
    error = "'" + path + "': cannot write the file";
}

void dist_run::printWindowResults(const std::string &tag,
                                  const std::vector<Slot> &results,
                                  const std::vector<double> &outputSums, int k,
                                  double checksum) {
  // Only a one-element result can be a loss; anything else (a dx, ...)
  // is reported as what it is.
  for (size_t r = 0; r < results.size(); ++r) {
    if (!results[r].param.empty())
      continue;
    if (results[r].epilogue) {
      std::printf("%s: result #%zu %s (epilogue, once per window%s): "
                  "element sum (rank 0) %.6f\n",
                  tag.c_str(), r, typeString(results[r]).c_str(),
                  results[r].next >= 0
                      ? (", argument #" + std::to_string(results[r].next) +
                         " next window")
                            .c_str()
                      : "",
                  outputSums[r]);
      continue;
    }
    bool scalar = results[r].shape.empty() ||
                  (results[r].shape.size() == 1 && results[r].shape[0] == 1);
    std::printf("%s: result #%zu %s (%s): %s over the %d micro-batches "
                "(rank 0) %.6f\n",
                tag.c_str(), r, typeString(results[r]).c_str(),
                scalar ? "scalar: the loss" : "untied, not a scalar loss",
                scalar ? "sum" : "element sum", k, outputSums[r]);
  }
  std::printf("%s: gradient checksum (rank 0) %.9f\n", tag.c_str(), checksum);
}

LogicalResult dist_run::checkVariantArguments(
    const std::vector<Slot> &args, const std::vector<Slot> &noSyncArgs,
    llvm::StringRef entry, llvm::StringRef noSync, Location syncLoc,
    Location noSyncLoc) {
  bool same = shapesOf(noSyncArgs) == shapesOf(args) &&
              std::equal(args.begin(), args.end(), noSyncArgs.begin(),
                         noSyncArgs.end(), [](const Slot &a, const Slot &b) {
                           return a.param == b.param;
                         });
  if (same)
    return success();
  InFlightDiagnostic diag =
      emitError(noSyncLoc)
      << "dist-run: @" << noSync << " does not take @" << entry
      << "'s arguments (the same shapes, each {dist.param} in the same "
         "place): the host passes it the step's buffers in order";
  diag.attachNote(syncLoc) << "@" << entry << " is here";
  return failure();
}

std::optional<std::vector<size_t>>
dist_run::matchNoSyncResults(const std::vector<Slot> &noSyncResults,
                             const std::vector<Slot> &results) {
  std::vector<size_t> toStep;
  std::vector<bool> taken(results.size());
  size_t next = 0;
  for (const Slot &s : noSyncResults) {
    size_t r = s.param.empty() ? next : 0;
    while (r < results.size() &&
           (taken[r] || results[r].epilogue || results[r].param != s.param))
      ++r;
    if (r == results.size() || results[r].shape != s.shape)
      return std::nullopt;
    taken[r] = true;
    toStep.push_back(r);
    if (s.param.empty())
      next = r + 1;
  }
  return toStep;
}

int64_t dist_run::readParamGroups(ModuleOp module, std::vector<Slot> &args,
                                  std::vector<ParamGroup> &groups) {
  int64_t world = 1;
  module->walk(
      [&](dist::MeshOp mesh) { world = std::max(world, mesh.getWorldSize()); });
  groups.assign(args.size(), ParamGroup());
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].param.empty())
      continue;
    auto param = SymbolTable::lookupSymbolIn(module, args[i].param);
    auto paramOp = dyn_cast_or_null<dist::ParameterOp>(param);
    if (!paramOp || !paramOp.isSharded())
      continue;
    auto mesh = dist::lookupMesh(paramOp, paramOp.getMeshAttr());
    groups[i].shape.assign(mesh.getShape().begin(), mesh.getShape().end());
    ArrayRef<int64_t> axes = paramOp.getAxes(); // empty: every axis
    groups[i].axes.assign(axes.begin(), axes.end());
    if (std::optional<int64_t> dim0 = paramOp.getUnshardedDim0())
      args[i].unshardedDim0 = *dim0;
  }
  return world;
}
