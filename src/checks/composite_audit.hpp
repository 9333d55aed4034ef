#pragma once
// Several contracts at once (--contract repeated, a `group:` part): an admission needs room in
// every part. Each part is audited for over-admission on its own (its worst span); a denial is
// a lock-out only where every part surely had room, and a hint is judged against the soonest
// instant every part has room again (the latest of the parts' waits).
//
// --consume-on-deny checked: a denied request may still have counted in the parts checked
// before the one that denied it. From outside, which part denied is unknown, so every part but
// the last counts every denial, as the reading that favours the limiter: for lock-outs its
// room, for hints the longest wait (the shortest still counts admissions alone). The share a
// replay of the requests gives is then not judged (RunStats::share_judged), nor with group
// parts or costs.

#include <cstdint>
#include <string>
#include <vector>

#include "checks/admission_peak.hpp"
#include "checks/contract_audit.hpp"

namespace rlcheck::checks {

struct ContractPart {
  std::string spec;  // as given: "sliding:10/1s", "group:fixed:1000/1m"
  std::string name;  // sliding, fixed, sliding-counter, token-bucket, gcra
  AdmissionRule rule;
  bool per_group = false;        // counted over a group of identities (--group-size)
  bool counts_denials = false;   // --consume-on-deny checked, and not the last part
  bool counts_requests = false;  // --cost: this part counts requests, not units
};

// One part's audit over a run.
struct PartAudit {
  std::string spec;
  std::string name;
  int64_t limit = 0;  // the part's limit (a bucket's burst)
  bool per_group = false;
  bool counts_requests = false;  // requests: under --cost
  ContractAudit contract;        // its worst span; worst_identity is a group for group parts
  int64_t admitted_at_once = 0;  // read only when the worst span exceeded the part
  int64_t memory_ns = 0;         // contract_memory_ns of the part
};

struct RunStats;
struct AuditParams;

// The audits of a run under several parts, written into `stats` (parts, peak and contract of
// the part that exceeded most, utilisation, lock-outs, retry accuracy, send span, memory).
// `records` end up ordered by identity; each identity's view is returned.
// `path`: general judges each part over the whole run first and combines what they said of
// every denial after; fastest does so in one pass over the denials where the parts allow
// (composite_denials.hpp). Both give the same stats (the tests compare them).
enum class CompositePath { fastest, general };
IdentityRecords audit_composite(RunStats& stats, engine::RecordLog& records, int64_t start_wall_ns,
                                const AuditParams& audit,
                                CompositePath path = CompositePath::fastest);

// The groups `identities` make, `group_size` to a group (0: one group of all).
int64_t group_count(int64_t identities, int64_t group_size);

}  // namespace rlcheck::checks
