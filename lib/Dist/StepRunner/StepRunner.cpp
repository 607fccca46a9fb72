//===- StepRunner.cpp - a compiled step over accumulation windows ---------===//

#include "Dist/StepRunner/StepRunner.h"

#include <cassert>
#include <cstdlib>
#include <string>

using namespace dist_step;

namespace {

/// 8-byte words of StridedMemRefType<float, rank>: basePtr, data, offset,
/// then `rank` sizes and `rank` strides.
constexpr size_t wordsOf(size_t rank) { return 3 + 2 * rank; }
static_assert(sizeof(StridedMemRefType<float, 0>) == 8 * wordsOf(0));
static_assert(sizeof(StridedMemRefType<float, 1>) == 8 * wordsOf(1));
static_assert(sizeof(StridedMemRefType<float, 4>) == 8 * wordsOf(4));

std::string str(llvm::ArrayRef<int64_t> values) {
  std::string s = "[";
  for (size_t i = 0; i < values.size(); ++i)
    s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "]";
}

} // namespace

Variant dist_step::variantOf(Schedule schedule, int micro, int k) {
  return schedule == Schedule::OneRound && micro < k - 1 ? Variant::NoSync
                                                         : Variant::Sync;
}

Descriptors::Descriptors(llvm::ArrayRef<Shape> shapes) {
  size_t words = 0;
  for (const Shape &shape : shapes) {
    ranks.push_back(int64_t(shape.size()));
    offsets.push_back(words);
    words += wordsOf(shape.size());
  }
  storage = std::make_unique<int64_t[]>(words ? words : 1); // zeroed
}

void Descriptors::setIdentity(size_t i, float *data,
                              llvm::ArrayRef<int64_t> shape) {
  assert(int64_t(shape.size()) == ranks[i] &&
         "the descriptor has another rank");
  // Every rank starts with the same three fields; sizes and strides follow
  // (DynamicMemRefType reads them so).
  auto *d = static_cast<StridedMemRefType<float, 1> *>(get(i));
  d->basePtr = d->data = data;
  d->offset = 0;
  int64_t *sizes = d->sizes, *strides = sizes + ranks[i];
  int64_t stride = 1;
  for (size_t dim = shape.size(); dim-- > 0;) {
    sizes[dim] = shape[dim];
    strides[dim] = stride;
    stride *= shape[dim];
  }
}

DynamicMemRefType<float> Descriptors::view(size_t i) const {
  return DynamicMemRefType<float>(
      UnrankedMemRefType<float>{ranks[i], storage.get() + offsets[i]});
}

Results::Results(Results &&other) noexcept
    : descriptors(std::move(other.descriptors)), owned(other.owned) {
  other.owned = false;
}

Results &Results::operator=(Results &&other) noexcept {
  if (this != &other) {
    release();
    descriptors = std::move(other.descriptors);
    owned = other.owned;
    other.owned = false;
  }
  return *this;
}

void Results::release() {
  if (!owned)
    return;
  for (size_t i = 0; i < size(); ++i)
    std::free(view(i).basePtr);
  owned = false;
}

llvm::ArrayRef<float> Results::values(size_t i) const {
  DynamicMemRefType<float> v = view(i);
  int64_t n = 1;
  for (int64_t d = 0; d < v.rank; ++d)
    n *= v.sizes[d];
  return llvm::ArrayRef<float>(v.data + v.offset, size_t(n));
}

llvm::Expected<Results> Step::call(Variant variant,
                                   llvm::ArrayRef<float *> args) {
  const char *name = variant == Variant::Sync ? "sync step" : "no_sync step";
  if (args.size() != sig.args.size())
    return llvm::createStringError(
        "the %s takes %zu arguments, but %zu were given", name, sig.args.size(),
        args.size());
  const std::vector<Shape> &resultShapes = sig.results(variant);
  Descriptors resultDescriptors(resultShapes);
  // The C interface returns results through a leading pointer, but a
  // function without results (e.g. a no_sync step whose every result was a
  // stashed gradient) has no such argument.
  std::vector<void *> pointers;
  if (!resultShapes.empty())
    pointers.push_back(resultDescriptors.get());
  for (size_t i = 0; i < args.size(); ++i) {
    argDescriptors.setIdentity(i, args[i], sig.args[i]);
    pointers.push_back(argDescriptors.get(i));
  }
  std::vector<void *> packed;
  for (void *&p : pointers)
    packed.push_back(&p);
  if (llvm::Error error = invoke(variant, packed))
    return std::move(error);

  Results results(std::move(resultDescriptors));
  for (size_t i = 0; i < resultShapes.size(); ++i) {
    // values() reads a result as one contiguous run from data + offset.
    DynamicMemRefType<float> v = results.view(i);
    llvm::ArrayRef<int64_t> sizes(v.sizes, size_t(v.rank)),
        strides(v.strides, size_t(v.rank));
    bool identity = sizes == llvm::ArrayRef<int64_t>(resultShapes[i]);
    int64_t stride = 1;
    for (int64_t d = v.rank; identity && d-- > 0;) {
      identity = sizes[d] == 1 || strides[d] == stride;
      stride *= sizes[d];
    }
    if (!identity)
      return llvm::createStringError(
          "result #%zu of the %s has sizes %s and strides %s, expected sizes "
          "%s, identity layout",
          i, name, str(sizes).c_str(), str(strides).c_str(),
          str(resultShapes[i]).c_str());
  }
  return std::move(results);
}

llvm::Error dist_step::runWindow(Step &step, Schedule schedule, int k,
                                 const WindowHooks &hooks) {
  std::vector<float *> args;
  for (int micro = 0; micro < k; ++micro) {
    MicroStep m{micro, k, variantOf(schedule, micro, k)};
    args.clear();
    hooks.before(m, args);
    llvm::Expected<Results> results = step.call(m.variant, args);
    if (!results)
      return results.takeError();
    if (hooks.after)
      hooks.after(m, *results);
  }
  return llvm::Error::success();
}
