//===- Options.h - dist-run's command line ----------------------*- C++ -*-===//
//
// The options of dist-run (tools/dist-run/DistRun.cpp documents what each
// does to a run), defined once in Options.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_TOOLS_DISTRUN_OPTIONS_H
#define DIST_TOOLS_DISTRUN_OPTIONS_H

#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <string>

namespace dist_run {

extern llvm::cl::OptionCategory category;
extern llvm::cl::opt<std::string> inputFile;
extern llvm::cl::opt<std::string> entryOpt;
extern llvm::cl::opt<int> kOpt;
extern llvm::cl::opt<int> windowsOpt;
extern llvm::cl::opt<uint64_t> seedOpt;
extern llvm::cl::opt<double> lrOpt;
extern llvm::cl::opt<bool> hsdpPartialOpt;
extern llvm::cl::opt<bool> windowOpt;
extern llvm::cl::opt<int64_t> bucketOpt;
extern llvm::cl::opt<llvm::cl::boolOrDefault> scheduleOpt;
extern llvm::cl::opt<bool> keepGatheredOpt;
extern llvm::cl::opt<std::string> reduceDtypeOpt;
extern llvm::cl::opt<int64_t> stashBudgetOpt;
extern llvm::cl::opt<std::string> paramsNpyOpt;
extern llvm::cl::opt<std::string> dataNpyOpt;
extern llvm::cl::opt<std::string> outNpyOpt;

} // namespace dist_run

#endif // DIST_TOOLS_DISTRUN_OPTIONS_H
