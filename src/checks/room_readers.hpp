#pragma once
// The room a contract had at each denial of one identity (or group): what lockout.cpp judges
// lock-outs by, one identity at a time, so an audit of several parts can ask every part of one
// denial at once. The readings favour the limiter (see lockout.hpp).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "checks/contract_audit.hpp"

namespace rlcheck::checks {

// The most of the contract the admissions seen can have used at a denial, and whether that
// left room for it.
struct DenialRoom {
  double used = 0;
  double capacity = 0;  // the limit, or the burst
  bool room = false;
};

class IdentityRoom {
 public:
  // `judged`: the identity's records; `used`: the admissions the contract counted (the same
  // records, or with denials read as admissions: `counts_self`, the denial judged does not
  // count against itself). `weighted`: a denial needs room for its cost, else for one. `rule`
  // must outlive the reader; fixed windows already assigned. `unknown`: unknown_sends(judged)
  // when the caller has it already (it must outlive the reader), else found here.
  IdentityRoom(RecordSpan judged, RecordSpan used, const AdmissionRule& rule, int64_t start_wall_ns,
               bool counts_self, bool weighted, const std::vector<int64_t>* unknown = nullptr);
  IdentityRoom(IdentityRoom&&) noexcept;
  IdentityRoom& operator=(IdentityRoom&&) noexcept;
  IdentityRoom(const IdentityRoom&) = delete;
  IdentityRoom& operator=(const IdentityRoom&) = delete;
  ~IdentityRoom();

  // The room at denial `index` of `judged`; nullopt where the rule places it in no one window
  // (fixed: it may sit on either side of a boundary). Denials asked near send order are
  // answered fastest (sliding walks its counts from the last denial's).
  std::optional<DenialRoom> at(size_t index);

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace rlcheck::checks
