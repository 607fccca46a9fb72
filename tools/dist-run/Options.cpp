//===- Options.cpp - dist-run's command line ------------------------------===//

#include "Options.h"

using namespace dist_run;

llvm::cl::OptionCategory dist_run::category("dist-run options");

llvm::cl::opt<std::string> dist_run::inputFile(llvm::cl::Positional,
                                               llvm::cl::Required,
                                               llvm::cl::desc("<step.mlir>"),
                                               llvm::cl::cat(category));
llvm::cl::opt<std::string>
    dist_run::entryOpt("entry", llvm::cl::desc("the sync-step function"),
                       llvm::cl::init("step"), llvm::cl::cat(category));
llvm::cl::opt<int> dist_run::kOpt(
    "k",
    llvm::cl::desc("micro-batches per window (the K the step's loss "
                   "is scaled for)"),
    llvm::cl::init(4), llvm::cl::cat(category));
llvm::cl::opt<int>
    dist_run::windowsOpt("windows", llvm::cl::desc("optimizer windows to run"),
                         llvm::cl::init(2), llvm::cl::cat(category));
llvm::cl::opt<uint64_t>
    dist_run::seedOpt("seed", llvm::cl::desc("seed of parameters and data"),
                      llvm::cl::init(7), llvm::cl::cat(category));
llvm::cl::opt<double> dist_run::lrOpt("lr", llvm::cl::desc("SGD learning rate"),
                                      llvm::cl::init(1e-3),
                                      llvm::cl::cat(category));
llvm::cl::opt<bool> dist_run::hsdpPartialOpt(
    "hsdp-partial",
    llvm::cl::desc("the no_sync pipeline's hsdp-partial option"),
    llvm::cl::init(false), llvm::cl::cat(category));
llvm::cl::opt<bool> dist_run::windowOpt(
    "window",
    llvm::cl::desc("@<entry> is a whole window: a loop over the K "
                   "micro-batches stacked on dim 0 of each data argument"),
    llvm::cl::init(false), llvm::cl::cat(category));
llvm::cl::opt<int64_t> dist_run::bucketOpt(
    "bucket-cap-bytes",
    llvm::cl::desc("the no_sync pipeline's bucket-cap-bytes (0: no buckets; "
                   "default: the pipeline's)"),
    llvm::cl::init(-1), llvm::cl::cat(category));
llvm::cl::opt<llvm::cl::boolOrDefault> dist_run::scheduleOpt(
    "schedule",
    llvm::cl::desc("the no_sync pipeline's schedule option (collectives "
                   "issued early, waits late; default: the pipeline's)"),
    llvm::cl::cat(category));
llvm::cl::opt<bool> dist_run::keepGatheredOpt(
    "keep-gathered",
    llvm::cl::desc("the no_sync pipeline's keep-gathered option (ZeRO-3 "
                   "parameters gathered once per window)"),
    llvm::cl::init(false), llvm::cl::cat(category));
llvm::cl::opt<std::string> dist_run::reduceDtypeOpt(
    "reduce-dtype",
    llvm::cl::desc("the no_sync pipeline's reduce-dtype option (the type "
                   "gradients are stashed and reduced in, e.g. f64)"),
    llvm::cl::value_desc("TYPE"), llvm::cl::cat(category));
llvm::cl::opt<int64_t> dist_run::stashBudgetOpt(
    "stash-budget",
    llvm::cl::desc("the no_sync pipeline's stash-budget option (the most "
                   "bytes the stashes may hold together: each parameter's "
                   "stash point is chosen within it; default: none, every "
                   "parameter at its default point)"),
    llvm::cl::value_desc("BYTES"), llvm::cl::init(-1), llvm::cl::cat(category));
llvm::cl::opt<std::string> dist_run::paramsNpyOpt(
    "params-npy",
    llvm::cl::desc("read parameter <name> from DIR/<name>.npy (unsharded)"),
    llvm::cl::value_desc("DIR"), llvm::cl::cat(category));
llvm::cl::opt<std::string> dist_run::dataNpyOpt(
    "data-npy",
    llvm::cl::desc("read data from DIR/w<window>_k<micro>_r<rank>_a<arg>.npy"),
    llvm::cl::value_desc("DIR"), llvm::cl::cat(category));
llvm::cl::opt<std::string> dist_run::outNpyOpt(
    "out-npy",
    llvm::cl::desc("write gradients and untied outputs to DIR as .npy"),
    llvm::cl::value_desc("DIR"), llvm::cl::cat(category));
