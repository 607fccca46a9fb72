//===- Env.cpp - the DIST_* environment variables of the runtime ----------===//

#include "Env.h"

#include <charconv>
#include <cstdlib>

namespace distrt {
namespace {

std::string invalid(const char *name, const std::string &value,
                    const char *accepted) {
  return std::string("invalid ") + name + " '" + value + "' (expected " +
         accepted + ")";
}

/// 0 or 1: a typo such as "yes" or "true" must not silently mean off.
bool parseFlag(const char *name, const std::string &value, bool &out,
               std::string &error) {
  if (value == "0" || value == "1") {
    out = value == "1";
    return true;
  }
  error = invalid(name, value, "0 or 1");
  return false;
}

/// Decimal digits, 1 to INT64_MAX: no '+', blanks or unit, and a value past
/// INT64_MAX is an error rather than saturated (as strtoll did).
bool parsePositive(const char *name, const std::string &value, int64_t &out,
                   std::string &error) {
  const char *end = value.data() + value.size();
  int64_t parsed = 0;
  auto [stop, ec] = std::from_chars(value.data(), end, parsed);
  if (ec == std::errc() && stop == end && parsed > 0) {
    out = parsed;
    return true;
  }
  error = invalid(name, value,
                  "a whole number of milliseconds from 1 to "
                  "9223372036854775807");
  return false;
}

} // namespace

bool readEnvironment(const EnvLookup &lookup, Environment &env,
                     std::string &error) {
  // An empty value counts as unset, as a shell's `VAR= cmd` intends.
  auto read = [&](const char *name) {
    const char *value = lookup(name);
    return std::string(value ? value : "");
  };
  if (std::string backend = read("DIST_BACKEND"); !backend.empty()) {
    if (backend != "auto" && backend != "mpi" && backend != "nccl" &&
        backend != "self") {
      error = "unknown DIST_BACKEND '" + backend +
              "' (expected auto, mpi, nccl or self)";
      return false;
    }
    env.backend = backend;
  }
  if (std::string timeout = read("DIST_WATCHDOG_TIMEOUT_MS"); !timeout.empty())
    if (!parsePositive("DIST_WATCHDOG_TIMEOUT_MS", timeout,
                       env.watchdogTimeoutMs, error))
      return false;
  if (std::string check = read("DIST_CHECK_COLLECTIVES"); !check.empty()) {
    bool on;
    if (!parseFlag("DIST_CHECK_COLLECTIVES", check, on, error))
      return false;
    env.checkCollectives = on;
  }
  if (std::string blocking = read("DIST_BLOCKING_REDUCE_SCATTER");
      !blocking.empty()) {
    if (blocking != "auto" && blocking != "0" && blocking != "1") {
      error = "invalid DIST_BLOCKING_REDUCE_SCATTER '" + blocking +
              "' (expected auto, 0 or 1)";
      return false;
    }
    env.blockingReduceScatter = blocking;
  }
  if (std::string stats = read("DIST_STATS"); !stats.empty())
    if (!parseFlag("DIST_STATS", stats, env.stats, error))
      return false;
  env.trace = read("DIST_TRACE");
  env.ncclPlugin = read("DIST_NCCL_PLUGIN");
  return true;
}

bool readEnvironment(Environment &env, std::string &error) {
  return readEnvironment([](const char *name) { return std::getenv(name); },
                         env, error);
}

} // namespace distrt
