//===- Npy.h - f32 .npy files for dist-run ---------------------*- C++ -*-===//
//
// The subset of NumPy's .npy format dist-run reads and writes: little-endian
// f32 ('<f4'), C order, format version 1.0 or 2.0 when reading, 1.0 when
// writing; it also reads little-endian int64 and int32 ('<i8', '<i4': token
// ids) and booleans ('|b1': masks), into f32 where each value is exact
// (|v| <= 2^24). Anything else is
// rejected with a message naming the file.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_TOOLS_DIST_RUN_NPY_H
#define DIST_TOOLS_DIST_RUN_NPY_H

#include "mlir/IR/Types.h"
#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dist_run {

/// Reads `path` into `shape` and `data`. On failure returns false and sets
/// `error` to a message that names the file.
bool readNpy(const std::string &path, std::vector<int64_t> &shape,
             std::vector<float> &data, std::string &error);

/// Fails, setting `error` (naming `path`), unless every value is an integer
/// of `element` (i1: 0 or 1) that f32 holds exactly.
bool checkIntegers(const std::string &path, llvm::ArrayRef<float> data,
                   mlir::Type element, std::string &error);

/// Writes `data` with `shape` to `path` (NPY 1.0, '<f4', C order).
bool writeNpy(const std::string &path, const std::vector<int64_t> &shape,
              llvm::ArrayRef<float> data, std::string &error);

/// "[2, 3]" for error messages.
std::string shapeString(const std::vector<int64_t> &shape);

/// Reads `path`, which must hold an array of exactly `shape`.
bool readNpyOfShape(const std::string &path, const std::vector<int64_t> &shape,
                    std::vector<float> &data, std::string &error);

/// Reads the unsharded parameter in `path` (dim 0 = `localShape[0]` x
/// `shards`, or `unshardedDim0` when it is not -1, other dims as
/// `localShape`) and keeps rows [shard x localShape[0], (shard + 1) x
/// localShape[0]); rows past the file's (FSDP's padding) are zeros.
bool readNpyShard(const std::string &path,
                  const std::vector<int64_t> &localShape, int64_t shard,
                  int64_t shards, int64_t unshardedDim0,
                  std::vector<float> &data, std::string &error);

/// Zeroes the rows of a padded parameter's shard (unsharded_dim0 =
/// `unshardedDim0`, not -1) that are padding.
void zeroPadding(const std::vector<int64_t> &localShape, int64_t shard,
                 int64_t unshardedDim0, std::vector<float> &data);

} // namespace dist_run

#endif // DIST_TOOLS_DIST_RUN_NPY_H
