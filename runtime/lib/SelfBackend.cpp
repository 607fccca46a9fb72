//===- SelfBackend.cpp - world size 1, in process -------------------------===//

#include "Backend.h"
#include "Dtype.h"

#include <cstdlib>
#include <cstring>

namespace distrt {
namespace {

class Done : public Pending {
public:
  bool test(std::string &) override { return true; }
};

class SelfGroup : public Group {
public:
  int size() override { return 1; }
  int rank() override { return 0; }
  std::unique_ptr<Pending> start(const CollectiveDesc &desc,
                                 std::string &) override {
    // Over one rank every collective copies its input.
    if (desc.send != desc.recv && desc.count > 0)
      std::memmove(desc.recv, desc.send, desc.count * dtypeSize(desc.dtype));
    return std::make_unique<Done>();
  }
  std::unique_ptr<Group> split(int, int, std::string &) override {
    return std::make_unique<SelfGroup>();
  }
};

class SelfBackend : public Backend {
public:
  const char *name() override { return "self"; }
  Group &world() override { return world_; }
  bool supportsAvg() override { return true; }
  std::unique_ptr<Pending> startWorldBarrier(std::string &) override {
    return std::make_unique<Done>();
  }
  [[noreturn]] void abortJob(int code) override { std::_Exit(code); }
  void finalize() override {}

private:
  SelfGroup world_;
};

} // namespace

std::unique_ptr<Backend> createSelfBackend() {
  return std::make_unique<SelfBackend>();
}

} // namespace distrt
