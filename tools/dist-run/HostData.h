//===- HostData.h - the host's values of a step's arguments -----*- C++ -*-===//
//
// What dist-run hands the step at each call: parameters, drawn from the seed
// (each shard from (seed, argument, shard), scaled by the row width) or read
// from --params-npy; micro-batch data, drawn from (seed, window,
// micro-batch, rank, argument) or read from --data-npy (one file per
// micro-batch, rank and argument; a whole window's argument stacks them).
//
//===----------------------------------------------------------------------===//

#ifndef DIST_TOOLS_DIST_RUN_HOSTDATA_H
#define DIST_TOOLS_DIST_RUN_HOSTDATA_H

#include "Slots.h"

#include <string>
#include <vector>

namespace dist_run {

class HostData {
public:
  /// `args` are the step's arguments, `shardCounts` each one's group size
  /// (1 when replicated or data); `calls` the step's calls per window (K, or
  /// 1 for a whole window).
  HostData(const std::vector<Slot> &args, std::vector<int64_t> shardCounts,
           int64_t rank, int calls);

  /// Sets every parameter's value. False, with `error` set, on a bad file.
  bool initParameters(std::string &error);
  /// Reads window `window`'s --data-npy files. False, with `error` set, on a
  /// bad file.
  bool loadWindow(int window, std::string &error);
  /// Sets the data arguments to micro-batch `micro` of window `window`.
  void draw(int window, int micro);

  /// The arguments' values, in argument order.
  std::vector<Tensor> values;

private:
  const std::vector<Slot> &args;
  std::vector<int64_t> shardCounts;
  int64_t rank;
  int calls;
  std::vector<std::vector<std::vector<float>>> windowData; // [call][arg]
};

} // namespace dist_run

#endif // DIST_TOOLS_DIST_RUN_HOSTDATA_H
