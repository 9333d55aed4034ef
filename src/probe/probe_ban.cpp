// The ban test: where a window was read, whether its denials outlast what counts the requests
// (a ban: rack-attack's Allow2Ban, fail2ban-style blocks). A fresh identity sends L - 1 and,
// most of the first readmission wait later, L + 1 more, while the search for the next
// readmission runs; when the count forgot the first ones, three stages of trials time the
// inner window and tell its kind (checks/ban_probe says what the requests mean).

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "checks/ban_probe.hpp"
#include "probe/probe_sequence.hpp"

namespace rlcheck::probe {

namespace {

int64_t slowest_reply_ns(const std::vector<ProbeRequest>& requests) {
  int64_t slowest = 0;
  for (const ProbeRequest& request : requests)
    slowest = std::max(slowest, request.latency_ns);
  return slowest;
}

}  // namespace

void Sequence::schedule_ban_test(int64_t limit, int64_t first_admitted, const Readmission& first) {
  const int trials = k_trial_stages * k_trial_steps;
  if (target_.virtual_clock() || limit < 2 ||
      target_.distinct_identities() <= k_first_trial_identity + trials)
    return;
  const int64_t wait_ns = first.estimate_ns() - first_admitted;
  if (wait_ns <= 0)
    return;
  const auto part = send(k_memory_identity, limit - 1, target_.now_ns());
  if (admitted(part) != limit - 1)
    return;
  // A window fixed on the clock was readmitted at a boundary and has its next one a window
  // later: no sooner than `wait_ns` after the last denial, less the half bracket of the
  // readmission (2 % of it at most); a sliding window or one opened by the first hit holds the
  // first part that long too. The second part ends 6 % of the wait before then, with room for
  // its requests (each as slow as the slowest so far) and the probes' timing.
  int64_t slowest = 0;
  for (const ProbeRequest& request : part)
    slowest = std::max(slowest, request.latency_ns);
  const int64_t ends_by = first.last_denied_ns + wait_ns - wait_ns * 6 / 100 - k_timing_slack_ns;
  const int64_t due = ends_by - (limit + 1) * std::max(slowest, k_min_step_ns);
  // Too short a gap to outlast an inner window worth telling from the window read.
  if (due - part.back().at_ns < wait_ns / 2)
    return;
  // What a window read could not have forgotten: up to its earliest end, less the readmission's
  // bracket (and the replies' slack) and the probes' own timing.
  const int64_t conclusive_until =
      first.last_denied_ns + wait_ns - 2 * first.uncertainty_ns() - 2 * k_timing_slack_ns;
  side_ = SideSend{k_memory_identity, limit + 1,        due,
                   part.back().at_ns, conclusive_until, std::nullopt};
}

bool Sequence::ban_test_forgot(int64_t limit) {
  if (!side_)
    return false;
  if (!side_->replies) {
    side_->replies = send_unqueued(side_->identity, side_->count,
                                   std::max(side_->due_ns, target_.now_ns()), false);
  }
  // A second part decided too late (a busy machine) may have met the end of a window: it
  // tells nothing.
  const std::vector<ProbeRequest>& replies = *side_->replies;
  const ProbeRequest& counted = replies[std::min(replies.size(), static_cast<size_t>(limit)) - 1];
  const bool forgot = checks::trial_forgot(limit, replies) &&
                      counted.at_ns + counted.latency_ns / 2 <= side_->conclusive_until_ns;
  if (forgot) {
    result_.evidence.push_back(fmt::format(
        "a fresh identity sent {}, and {:.0f} ms later {} more: {} admitted: what counts had "
        "forgotten the first ones, though the first identity's denials lasted longer (a ban)",
        limit - 1, ms(side_->replies->front().at_ns - side_->first_part_ns), limit + 1,
        checks::count_burst(*side_->replies).admitted));
  }
  side_.reset();
  return forgot;
}

std::optional<int64_t> Sequence::ban_trials(int64_t limit, int64_t start_ns, int64_t step_ns,
                                            std::vector<checks::BanTrial>& trials) {
  // The probe's timeline on the wall clock, where a limiter's clock windows fall.
  const int64_t wall_offset_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count() -
                                 target_.now_ns();
  std::vector<int> identities;
  std::vector<std::vector<ProbeRequest>> firsts;
  for (int i = 0; i < k_trial_steps; ++i) {
    identities.push_back(next_trial_identity_++);
    firsts.push_back(send(identities.back(), limit - 1, std::max(start_ns, target_.now_ns())));
    if (admitted(firsts.back()) != limit - 1)
      throw Halt{fresh_identity_denied()};
  }
  for (int i = 0; i < k_trial_steps; ++i) {
    const std::vector<ProbeRequest>& first = firsts[static_cast<size_t>(i)];
    const auto second = send(identities[static_cast<size_t>(i)], limit + 1,
                             std::max(first.back().at_ns + (i + 1) * step_ns, target_.now_ns()));
    const size_t counted = std::min(second.size(), static_cast<size_t>(limit)) - 1;
    checks::BanTrial trial{
        first.front().at_ns + wall_offset_ns, first.back().at_ns + wall_offset_ns,
        second.front().at_ns + wall_offset_ns, second[counted].at_ns + wall_offset_ns,
        checks::trial_forgot(limit, second)};
    trials.push_back(trial);
    if (trial.forgot)
      return second.front().at_ns - first.back().at_ns;
  }
  return std::nullopt;
}

void Sequence::infer_ban(int64_t limit, const Readmission& first,
                         const std::vector<ProbeRequest>& follow_up, const Readmission& second) {
  auto& evidence = result_.evidence;
  const int64_t slack = k_timing_slack_ns + k_limiter_resolution_ns +
                        std::max(slowest_reply_ns(burst_), slowest_reply_ns(follow_up)) / 2;
  std::optional<checks::Bracket> ban = checks::ban_from(burst_, first, slack);
  if (const auto again = checks::ban_from(follow_up, second, slack); again)
    ban = ban ? checks::both(*ban, *again) : again;
  if (!ban) {
    throw Halt{
        "denials outlast what counts the requests (a ban?), but the two bans timed disagree"};
  }
  evidence.push_back(fmt::format(
      "banned twice: each time {:.0f} to {:.0f} ms from the request that began it to the next "
      "admission",
      ms(ban->low_ns), ms(ban->high_ns)));
  const int64_t ban_ns = ban->mid_ns();
  const int64_t step_ns = std::max(k_min_step_ns, ban_ns / 12);
  plan(static_cast<double>(ban_ns) * 1.4 * k_trial_stages,
       fmt::format("what counts the requests is timed in {} stages of up to {:.1f} s",
                   k_trial_stages, 1.4 * ms(ban_ns) / 1e3));
  // Three stages: from now, from right after the first one's transition (a fixed window's
  // boundary), and from half a window after the second one's. Every trial is read at once.
  std::vector<checks::BanTrial> trials;
  std::optional<int64_t> transition = ban_trials(limit, target_.now_ns(), step_ns, trials);
  if (transition)
    transition = ban_trials(limit, target_.now_ns(), step_ns, trials);
  if (transition) {
    transition = ban_trials(limit, target_.now_ns() + *transition / 2,
                            std::max(k_min_step_ns, *transition / 16), trials);
  }
  std::string why_not;
  int64_t slowest = 0;
  for (const ProbeRequest& request : seen_)
    slowest = std::max(slowest, request.latency_ns);
  const std::optional<checks::InnerWindow> inner =
      transition ? checks::read_inner_window(
                       trials, 2 * ban_ns,
                       k_timing_slack_ns + k_limiter_resolution_ns + slowest / 2, why_not)
                 : std::nullopt;
  if (!inner) {
    throw Halt{fmt::format(
        "denials outlast what counts the requests (a ban of about {:.0f} ms), but what counts "
        "could not be told from {} trials: {}",
        ms(ban_ns), trials.size(),
        transition ? why_not
                   : fmt::format("{} requests were still counted {:.0f} ms later", limit - 1,
                                 ms(step_ns * k_trial_steps)))};
  }
  evidence.push_back(fmt::format(
      "{} trials of {} then {} more, each on an identity of its own, at growing gaps from three "
      "starts: {}",
      trials.size(), limit - 1, limit + 1,
      inner->kind == "fixed"
          ? fmt::format("a window of {:.0f} ms fixed on the clock fits every one, and no sliding "
                        "window does",
                        ms(inner->window.low_ns))
          : fmt::format("a sliding window of {:.0f} to {:.0f} ms fits every one, and no window "
                        "fixed on the clock does",
                        ms(inner->window.low_ns), ms(inner->window.high_ns))));
  result_.algorithm = "ban";
  result_.limit = limit;
  result_.inner = inner->kind;
  result_.window_ms = std::llround(ms(inner->window.mid_ns()));
  result_.window_tolerance_ms = ms(inner->window.high_ns - inner->window.low_ns) / 2;
  result_.ban_ms = std::llround(ms(ban_ns));
  result_.ban_tolerance_ms = ms(ban->high_ns - ban->low_ns) / 2;
  result_.confidence = "high";
  result_.notes.push_back(
      "a ban that every request during it restarts (renew) keeps a client that keeps asking "
      "out: probe reads it as counting denials");
}

}  // namespace rlcheck::probe
