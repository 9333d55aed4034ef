#pragma once
// The wait the contract predicts for each denial of one identity (or group), from the
// admissions seen: what retry_accuracy judges hints against, one identity at a time, so an
// audit of several parts can ask every part of one denial at once.

#include <cstdint>
#include <memory>
#include <vector>

#include "checks/contract_audit.hpp"
#include "checks/retry_accuracy.hpp"

namespace rlcheck::checks {

class IdentityPredictor {
 public:
  // `records`: the admissions the contract counted (an identity's records, or a part's copy of
  // them). `rule` must outlive the predictor; fixed windows already assigned. `unknown`:
  // unknown_sends(records) when the caller has it already, else found here.
  IdentityPredictor(RecordSpan records, const AdmissionRule& rule, int64_t start_wall_ns,
                    const std::vector<int64_t>* unknown = nullptr);
  IdentityPredictor(IdentityPredictor&&) noexcept;
  IdentityPredictor& operator=(IdentityPredictor&&) noexcept;
  IdentityPredictor(const IdentityPredictor&) = delete;
  IdentityPredictor& operator=(const IdentityPredictor&) = delete;
  ~IdentityPredictor();

  // The predicted wait for a denial (already widened by the clock). Denials must be asked in
  // send order: the counts before each are walked to from the last one's.
  HintRange predict(const engine::RequestRecord& denial);

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace rlcheck::checks
