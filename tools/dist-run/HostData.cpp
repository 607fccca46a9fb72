//===- HostData.cpp - the host's values of a step's arguments -------------===//

#include "HostData.h"
#include "Npy.h"
#include "Options.h"

#include <cmath>

using namespace dist_run;

HostData::HostData(const std::vector<Slot> &args,
                   std::vector<int64_t> shardCounts, int64_t rank, int calls)
    : values(args.size()), args(args), shardCounts(std::move(shardCounts)),
      rank(rank), calls(calls) {
  for (size_t i = 0; i < args.size(); ++i) {
    values[i].shape = args[i].shape;
    values[i].data.resize(values[i].size());
  }
}

bool HostData::initParameters(std::string &error) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].param.empty())
      continue;
    if (!paramsNpyOpt.empty()) {
      if (args[i].param.find('/') != std::string::npos) {
        error = "parameter @" + args[i].param +
                " cannot be a file name in --params-npy";
        return false;
      }
      std::string path = paramsNpyOpt + "/" + args[i].param + ".npy";
      if (!readNpyShard(path, args[i].shape, args[i].shardIndex,
                        shardCounts[i], args[i].unshardedDim0, values[i].data,
                        error))
        return false;
      continue;
    }
    Rng rng(seedOpt * 1000003 + i * 7919 + args[i].shardIndex);
    int64_t width = args[i].shape.size() > 1
                        ? values[i].size() / args[i].shape[0]
                    : args[i].shape.empty() ? 1
                                            : args[i].shape[0];
    for (float &v : values[i].data)
      v = rng.next(1 / std::sqrt(double(width)));
    zeroPadding(args[i].shape, args[i].shardIndex, args[i].unshardedDim0,
                values[i].data);
  }
  return true;
}

bool HostData::loadWindow(int window, std::string &error) {
  windowData.assign(calls, std::vector<std::vector<float>>(args.size()));
  for (int micro = 0; micro < kOpt; ++micro)
    for (size_t i = 0; i < args.size(); ++i) {
      if (!args[i].param.empty() || args[i].held)
        continue;
      std::string path = dataNpyOpt + "/w" + std::to_string(window) + "_k" +
                         std::to_string(micro) + "_r" + std::to_string(rank) +
                         "_a" + std::to_string(i) + ".npy";
      // A window's argument stacks the micro-batches: one file each.
      std::vector<int64_t> shape = args[i].shape;
      if (windowOpt)
        shape.erase(shape.begin());
      std::vector<float> data;
      if (!readNpyOfShape(path, shape, data, error))
        return false;
      if (args[i].integral() &&
          !checkIntegers(path, data, args[i].element, error))
        return false;
      std::vector<float> &into = windowData[windowOpt ? 0 : micro][i];
      into.insert(into.end(), data.begin(), data.end());
    }
  return true;
}

void HostData::draw(int window, int micro) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].param.empty() || args[i].held)
      continue;
    if (!dataNpyOpt.empty()) {
      values[i].data = windowData[micro][i];
      continue;
    }
    Rng rng(((seedOpt * 1000003 + window) * 1009 + micro) * 9176 + rank * 131 +
            i);
    for (float &v : values[i].data)
      v = rng.next(1);
  }
}
