//===- Env.h - the DIST_* environment variables of the runtime --*- C++ -*-===//
//
// Every DIST_* variable the runtime reads is read here, once, at distrt_init;
// a bad value is an error naming the variable, the value and what is
// accepted. docs/Runtime.md lists the variables and their values.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_RUNTIME_ENV_H
#define DIST_RUNTIME_ENV_H

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace distrt {

/// The settings, defaults where a variable is unset or empty.
struct Environment {
  std::string backend = "auto";       // DIST_BACKEND: auto, mpi, nccl, self
  int64_t watchdogTimeoutMs = 600000; // DIST_WATCHDOG_TIMEOUT_MS
  // DIST_CHECK_COLLECTIVES; unset: on, except on the nccl backend.
  std::optional<bool> checkCollectives;
  // DIST_BLOCKING_REDUCE_SCATTER: auto (across hosts only), 0 or 1.
  std::string blockingReduceScatter = "auto";
  bool stats = false;                 // DIST_STATS
  std::string trace;                  // DIST_TRACE: "" for none
  std::string ncclPlugin;             // DIST_NCCL_PLUGIN: "" for the default
};

/// Maps a variable name to its value, or null when it is unset.
using EnvLookup = std::function<const char *(const char *name)>;

/// Reads the variables through `lookup`; false with `error` set on the first
/// bad value. DIST_TRACE is only checked for being writable when the file is
/// opened, which needs the rank.
bool readEnvironment(const EnvLookup &lookup, Environment &env,
                     std::string &error);
/// The same from the process environment.
bool readEnvironment(Environment &env, std::string &error);

} // namespace distrt

#endif // DIST_RUNTIME_ENV_H
