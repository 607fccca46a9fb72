//===- StepRunnerTest.cpp - the step runner of lib/Dist/StepRunner -------===//
//
// A small step linked into the test (C-interface functions over
// StridedMemRefType, as the lowering writes them) exercises the descriptors,
// the results' ownership and checks, and the schedules of a window.
//
//===----------------------------------------------------------------------===//

#include "Dist/StepRunner/StepRunner.h"

#include "gtest/gtest.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace dist_step;

namespace {

using Vector = StridedMemRefType<float, 1>;
using Matrix = StridedMemRefType<float, 2>;
using Scalar = StridedMemRefType<float, 0>;

/// The sync step's results: the sum of x (rank 0) and a copy of w (2x3).
struct SyncResults {
  Scalar sum;
  Matrix w;
};

std::vector<std::string> calls;
bool badStrides = false;

float *copyOut(const Matrix &m) {
  auto *buffer = static_cast<float *>(std::malloc(6 * sizeof(float)));
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      buffer[i * 3 + j] =
          m.data[m.offset + i * m.strides[0] + j * m.strides[1]];
  return buffer;
}

void syncStep(SyncResults *out, Matrix *w, Vector *x) {
  calls.push_back("sync");
  float *sum = static_cast<float *>(std::malloc(sizeof(float)));
  *sum = 0;
  for (int64_t i = 0; i < x->sizes[0]; ++i)
    *sum += x->data[x->offset + i * x->strides[0]];
  out->sum = {sum, sum, 0};
  float *copy = copyOut(*w);
  out->w = {copy, copy, 0, {2, 3}, {badStrides ? 1 : 3, 1}};
}

/// The no_sync variant returns nothing (every result was a stashed gradient).
void noSyncStep(Matrix *, Vector *) { calls.push_back("no_sync"); }

StepSignature signature() { return {{{2, 3}, {4}}, {{}, {2, 3}}, {}}; }

class StepRunnerTest : public ::testing::Test {
protected:
  void SetUp() override {
    calls.clear();
    badStrides = false;
  }
  std::vector<float> w = {1, 2, 3, 4, 5, 6}, x = {1, 2, 3, 4};
};

TEST_F(StepRunnerTest, DescriptorsAreStridedMemRefs) {
  Descriptors d({{2, 3}, {}, {4, 5, 6}});
  float data[1];
  d.setIdentity(0, data, {2, 3});
  d.setIdentity(2, data, {4, 5, 6});
  // One after another, each as large as its StridedMemRefType.
  auto *base = static_cast<char *>(d.get());
  EXPECT_EQ(static_cast<char *>(d.get(1)) - base, long(sizeof(Matrix)));
  EXPECT_EQ(static_cast<char *>(d.get(2)) - base,
            long(sizeof(Matrix) + sizeof(Scalar)));
  auto *m = static_cast<Matrix *>(d.get(0));
  EXPECT_EQ(m->data, data);
  EXPECT_EQ(m->offset, 0);
  EXPECT_EQ(m->sizes[1], 3);
  EXPECT_EQ(m->strides[0], 3);
  DynamicMemRefType<float> v = d.view(2);
  ASSERT_EQ(v.rank, 3);
  EXPECT_EQ(std::vector<int64_t>(v.sizes, v.sizes + 3),
            (std::vector<int64_t>{4, 5, 6}));
  EXPECT_EQ(std::vector<int64_t>(v.strides, v.strides + 3),
            (std::vector<int64_t>{30, 6, 1}));
  EXPECT_EQ(d.view(1).rank, 0);
}

TEST_F(StepRunnerTest, CallsALinkedStep) {
  Step step = Step::linked(signature(), syncStep, noSyncStep);
  llvm::Expected<Results> r = step.call(Variant::Sync, {w.data(), x.data()});
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  ASSERT_EQ(r->size(), 2u);
  EXPECT_EQ(r->values(0).vec(), std::vector<float>{10});
  EXPECT_EQ(r->values(1).vec(), w);
  // Moving the results moves the buffers: freed once (ASan would see twice).
  Results kept = std::move(*r);
  EXPECT_EQ(kept.values(1).vec(), w);

  llvm::Expected<Results> none =
      step.call(Variant::NoSync, {w.data(), x.data()});
  ASSERT_TRUE(bool(none)) << llvm::toString(none.takeError());
  EXPECT_EQ(none->size(), 0u);
  EXPECT_EQ(calls, (std::vector<std::string>{"sync", "no_sync"}));
}

TEST_F(StepRunnerTest, RefusesWhatDoesNotMatchTheSignature) {
  Step step = Step::linked(signature(), syncStep, noSyncStep);
  llvm::Expected<Results> r = step.call(Variant::Sync, {w.data()});
  ASSERT_FALSE(bool(r));
  EXPECT_EQ(llvm::toString(r.takeError()),
            "the sync step takes 2 arguments, but 1 were given");
  EXPECT_TRUE(calls.empty());

  badStrides = true;
  r = step.call(Variant::Sync, {w.data(), x.data()});
  ASSERT_FALSE(bool(r));
  EXPECT_EQ(llvm::toString(r.takeError()),
            "result #1 of the sync step has sizes [2, 3] and strides [1, 1], "
            "expected sizes "
            "[2, 3], identity layout");

  // A signature with more results than the linked function has arguments
  // for: the packed call is refused before anything is called.
  StepSignature wrong = signature();
  wrong.noSyncResults = {{1}};
  Step mismatched = Step::linked(wrong, syncStep, noSyncStep);
  r = mismatched.call(Variant::NoSync, {w.data(), x.data()});
  ASSERT_FALSE(bool(r));
  EXPECT_EQ(llvm::toString(r.takeError()),
            "the linked step does not take 3 descriptors");
}

/// Which variants a window of `k` calls, and which micro-batches the hooks saw.
std::vector<std::string> window(Step &step, Schedule schedule, int k,
                                std::vector<std::string> &seen) {
  calls.clear();
  std::vector<float> w(6, 1.f), x(4, 1.f);
  llvm::Error error = runWindow(
      step, schedule, k,
      {[&](const MicroStep &m, std::vector<float *> &args) {
         EXPECT_TRUE(args.empty());
         args = {w.data(), x.data()};
         seen.push_back(std::to_string(m.index) + (m.last() ? " last" : ""));
       },
       [&](const MicroStep &m, Results &r) {
         EXPECT_EQ(r.size(), m.variant == Variant::Sync ? 2u : 0u);
       }});
  EXPECT_FALSE(bool(error));
  llvm::consumeError(std::move(error));
  return calls;
}

TEST_F(StepRunnerTest, Schedules) {
  Step step = Step::linked(signature(), syncStep, noSyncStep);
  std::vector<std::string> seen;
  EXPECT_EQ(
      window(step, Schedule::OneRound, 4, seen),
      (std::vector<std::string>{"no_sync", "no_sync", "no_sync", "sync"}));
  EXPECT_EQ(seen, (std::vector<std::string>{"0", "1", "2", "3 last"}));
  seen.clear();
  EXPECT_EQ(window(step, Schedule::OneRound, 1, seen),
            std::vector<std::string>{"sync"});
  EXPECT_EQ(window(step, Schedule::AlwaysSync, 3, seen),
            (std::vector<std::string>{"sync", "sync", "sync"}));
}

TEST_F(StepRunnerTest, AWindowStopsAtTheFirstFailedCall) {
  int invoked = 0;
  Step step(signature(),
            [&](Variant, llvm::MutableArrayRef<void *>) -> llvm::Error {
              return ++invoked == 2 ? llvm::createStringError("no such symbol")
                                    : llvm::Error::success();
            });
  std::vector<float> w(6), x(4);
  int after = 0;
  llvm::Error error =
      runWindow(step, Schedule::OneRound, 4,
                {[&](const MicroStep &, std::vector<float *> &args) {
                   args = {w.data(), x.data()};
                 },
                 [&](const MicroStep &, Results &) { ++after; }});
  EXPECT_EQ(llvm::toString(std::move(error)), "no such symbol");
  EXPECT_EQ(invoked, 2);
  EXPECT_EQ(after, 1);
}

} // namespace
