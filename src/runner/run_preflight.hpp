#pragma once
// What is checked before any load is sent (and, many hosts, before joining the other workers):
// the report paths can be written (else exit 3, naming the path and why), the process may open
// the file descriptors -p needs (the soft RLIMIT_NOFILE is raised up to the hard limit, else
// exit 64 naming the limit), and a shared test is not refused for what the command line says.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "config/config.hpp"

namespace rlcheck::runner {

// Many hosts, rlcheck redis: the workers would each test a Redis of their own.
inline constexpr std::string_view k_private_redis_per_worker =
    "--workers: no Redis was named, and each worker would test a private redis-server of its "
    "own; give every worker the same --redis (or REDIS_URL)";

// Reads an environment variable (std::getenv); nullptr when unset.
using EnvLookup = std::function<const char*(const char*)>;

// Throws FatalError(cannot_test) for the first of --report, --junit, --html, --summary-md that
// cannot be written (--summary-md auto: appended to): "--junit: cannot write /nope/r.xml: No
// such file or directory". --records is opened (staged) by its writer, which says the same.
void check_report_paths(const config::OutputConfig& output);

// --source-address: throws FatalError(cannot_test) for the first address this host cannot send
// from ("--source-address: cannot bind 192.0.2.1: Cannot assign requested address"), so that
// a missing address is one clear error before any load rather than every request's.
void check_source_addresses(const std::vector<std::string>& addresses);

// The connections a run keeps open: one per -p slot; with --source-address over HTTP, a slot
// keeps one per address its requests leave from (at most one per identity).
int64_t connections_needed(const config::Config& config, bool identity_per_source_address);

// The descriptors a run of `connections` connections needs: one each, and a margin for the
// loops, the set-up connections, the reports and the libraries (~50).
int64_t descriptors_needed(int64_t connections);

// Raises the soft RLIMIT_NOFILE to `needed` when it is lower and the hard limit allows; throws
// FatalError(usage) naming `flag`, the need and the limits when it does not.
void ensure_descriptors(int64_t needed, const std::string& what);

// rlcheck serve: accepted connections are the clients', however many: the soft limit is raised
// to the hard limit. Returns the limit in force.
int64_t raise_descriptors_to_hard_limit();

}  // namespace rlcheck::runner
