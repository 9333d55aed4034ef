#include "checks/concurrency_probe.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace rlcheck::checks {

namespace {

int64_t reply_ns(const ProbeRequest& request) {
  return request.at_ns + request.latency_ns / 2;
}

}  // namespace

AtOnceBatch read_at_once(std::span<const ProbeRequest> batch) {
  AtOnceBatch read;
  read.sent = static_cast<int64_t>(batch.size());
  std::optional<int64_t> first_denial_reply;
  for (const ProbeRequest& request : batch) {
    if (request.outcome == engine::Outcome::denied) {
      ++read.denied;
      first_denial_reply =
          std::min(first_denial_reply.value_or(reply_ns(request)), reply_ns(request));
    }
  }
  for (const ProbeRequest& request : batch) {
    if (request.outcome != engine::Outcome::allowed)
      continue;
    ++read.admitted;
    if (first_denial_reply && reply_ns(request) > *first_denial_reply)
      ++read.held_past_a_denial;
  }
  return read;
}

std::optional<int64_t> cap_from_batches(const AtOnceBatch& first, const AtOnceBatch& second,
                                        std::string& why_not) {
  if (first.denied == 0) {
    why_not = fmt::format("{} sent at once were all admitted", first.sent);
    return std::nullopt;
  }
  if (first.admitted == 0) {
    why_not = fmt::format("{} sent at once were all denied", first.sent);
    return std::nullopt;
  }
  if (second.denied == 0 || second.admitted + 1 < first.admitted) {
    why_not = fmt::format(
        "{} of a batch admitted, and {} of another sent once their replies came: what was "
        "admitted is counted, not just held",
        first.admitted, second.admitted);
    return std::nullopt;
  }
  if (first.held_past_a_denial < first.admitted || second.held_past_a_denial < second.admitted) {
    why_not =
        "the admitted requests of a batch were answered before its denials: nothing was "
        "held in progress while others were refused";
    return std::nullopt;
  }
  return std::max(first.admitted, second.admitted);
}

int64_t fastest_admission_ns(std::span<const ProbeRequest> requests) {
  int64_t fastest = 0;
  for (const ProbeRequest& request : requests) {
    if (request.outcome == engine::Outcome::allowed)
      fastest = fastest == 0 ? request.latency_ns : std::min(fastest, request.latency_ns);
  }
  return fastest;
}

}  // namespace rlcheck::checks
