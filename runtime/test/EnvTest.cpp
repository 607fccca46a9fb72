//===- EnvTest.cpp - reading the DIST_* environment variables -------------===//

#include "Env.h"

#include <gtest/gtest.h>

#include <map>

using namespace distrt;

namespace {

using Vars = std::map<std::string, std::string>;

EnvLookup lookupIn(const Vars &vars) {
  return [&vars](const char *name) -> const char * {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

Environment read(const Vars &vars) {
  Environment env;
  std::string error;
  EXPECT_TRUE(readEnvironment(lookupIn(vars), env, error)) << error;
  return env;
}

std::string readError(const Vars &vars) {
  Environment env;
  std::string error;
  EXPECT_FALSE(readEnvironment(lookupIn(vars), env, error));
  return error;
}

TEST(Env, DefaultsWhenUnsetOrEmpty) {
  for (const Vars &vars : {Vars{}, Vars{{"DIST_BACKEND", ""},
                                        {"DIST_WATCHDOG_TIMEOUT_MS", ""},
                                        {"DIST_CHECK_COLLECTIVES", ""},
                                        {"DIST_STATS", ""},
                                        {"DIST_TRACE", ""},
                                        {"DIST_NCCL_PLUGIN", ""}}}) {
    Environment env = read(vars);
    EXPECT_EQ(env.backend, "auto");
    EXPECT_EQ(env.watchdogTimeoutMs, 600000);
    EXPECT_FALSE(env.checkCollectives.has_value());
    EXPECT_FALSE(env.stats);
    EXPECT_EQ(env.trace, "");
    EXPECT_EQ(env.ncclPlugin, "");
  }
}

TEST(Env, AcceptedValues) {
  for (const char *backend : {"auto", "mpi", "nccl", "self"})
    EXPECT_EQ(read({{"DIST_BACKEND", backend}}).backend, backend);
  EXPECT_EQ(read({{"DIST_CHECK_COLLECTIVES", "1"}}).checkCollectives, true);
  EXPECT_EQ(read({{"DIST_CHECK_COLLECTIVES", "0"}}).checkCollectives, false);
  EXPECT_TRUE(read({{"DIST_STATS", "1"}}).stats);
  EXPECT_FALSE(read({{"DIST_STATS", "0"}}).stats);
  EXPECT_EQ(read({{"DIST_WATCHDOG_TIMEOUT_MS", "1"}}).watchdogTimeoutMs, 1);
  EXPECT_EQ(read({{"DIST_WATCHDOG_TIMEOUT_MS", "9223372036854775807"}})
                .watchdogTimeoutMs,
            INT64_MAX);
  EXPECT_EQ(read({{"DIST_TRACE", "/tmp/t.%r.json"}}).trace, "/tmp/t.%r.json");
  EXPECT_EQ(read({{"DIST_NCCL_PLUGIN", "/opt/p.so"}}).ncclPlugin, "/opt/p.so");
}

TEST(Env, FlagsAreZeroOrOne) {
  EXPECT_EQ(readError({{"DIST_CHECK_COLLECTIVES", "yes"}}),
            "invalid DIST_CHECK_COLLECTIVES 'yes' (expected 0 or 1)");
  EXPECT_EQ(readError({{"DIST_STATS", "garbage"}}),
            "invalid DIST_STATS 'garbage' (expected 0 or 1)");
  for (const char *bad : {"true", "on", "2", " 1", "1 ", "01"})
    EXPECT_NE(readError({{"DIST_STATS", bad}}), "") << bad;
}

TEST(Env, TimeoutIsAPositiveInt64) {
  const std::string accepted =
      " (expected a whole number of milliseconds from 1 to "
      "9223372036854775807)";
  EXPECT_EQ(readError({{"DIST_WATCHDOG_TIMEOUT_MS", "9223372036854775808"}}),
            "invalid DIST_WATCHDOG_TIMEOUT_MS '9223372036854775808'" +
                accepted);
  EXPECT_EQ(readError({{"DIST_WATCHDOG_TIMEOUT_MS", "soon"}}),
            "invalid DIST_WATCHDOG_TIMEOUT_MS 'soon'" + accepted);
  for (const char *bad :
       {"0", "-5", "+5", " 5", "5ms", "1e3", "2.5", "99999999999999999999"})
    EXPECT_NE(readError({{"DIST_WATCHDOG_TIMEOUT_MS", bad}}), "") << bad;
}

TEST(Env, UnknownBackend) {
  EXPECT_EQ(readError({{"DIST_BACKEND", "MPI"}}),
            "unknown DIST_BACKEND 'MPI' (expected auto, mpi, nccl or self)");
}

} // namespace
