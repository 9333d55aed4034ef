#include "redis/lease_releases.hpp"

#include <event2/event.h>
#include <fmt/format.h>

#include "engine/event_time.hpp"
#include "redis/async_client.hpp"
#include "redis/cluster_slots.hpp"
#include "redis/node_pool.hpp"
#include "redis/reply.hpp"

namespace rlcheck::redis {

void LeaseLog::add(std::vector<LeaseEnd> ends, uint64_t failed, const std::string& first_error) {
  const std::lock_guard lock(mutex_);
  for (const LeaseEnd& end : ends)
    released_ += end.released ? 1 : 0;
  ends_.insert(ends_.end(), ends.begin(), ends.end());
  failed_ += failed;
  if (first_error_.empty())
    first_error_ = first_error;
}

std::vector<LeaseEnd> LeaseLog::take_ends() {
  const std::lock_guard lock(mutex_);
  std::vector<LeaseEnd> ends;
  ends.swap(ends_);
  return ends;
}

// One held lease: the acquiring request's state (its keys and arguments are the release's),
// its timer, and the release command once it is built. The release script is written as a
// strategy writes its eval (DecisionIo), into the lease's own buffer.
struct LeaseReleases::Lease final : DecisionIo {
  LeaseReleases* owner = nullptr;
  uint64_t id = 0;
  int index = 0;  // the acquiring client's connection index
  RequestState state;
  event* timer = nullptr;
  CommandBuffer command;
  size_t commands = 0;
  std::optional<uint16_t> slot;  // cluster: of the first key
  // The eval, to send again as EVAL after NOSCRIPT: bytes [tail_begin, tail_end) of `command`
  // are its key count, keys and arguments.
  const LoadedScript* script = nullptr;
  size_t argc = 0;
  size_t tail_begin = 0;
  size_t tail_end = 0;
  bool reloaded = false;
  bool sent = false;  // the timer now waits for the release's reply (--timeout)
  Connection* connection = nullptr;

  ~Lease() override {
    if (timer != nullptr)
      event_free(timer);
  }

  void send(const std::vector<std::string_view>& argv) override {
    if (commands++ == 0)
      command.begin(argv.size());
    else
      command.then(argv.size());
    for (std::string_view arg : argv)
      command.add(arg);
    if (!slot && argv.size() >= 2)
      slot = key_slot(argv[1]);
  }
  CommandBuffer& begin_eval(const LoadedScript& loaded, const EvalHead& head,
                            std::string_view first_key) override {
    if (commands++ == 0)
      command.clear();
    script = &loaded;
    argc = head.argc;
    tail_begin = command.size() + head.count_at;
    command.append_raw(head.text);
    if (!slot)
      slot = key_slot(first_key);
    return command;
  }
  void end_eval() override { tail_end = command.size(); }

  // After NOSCRIPT: the same call as EVAL with the script's source.
  void eval_with_source() {
    const std::string tail(command.text().substr(tail_begin, tail_end - tail_begin));
    command.begin(argc);
    command.add("EVAL");
    command.add(script->source);
    command.append_raw(tail);
    commands = 1;
  }
};

LeaseReleases::LeaseReleases(NodePool& pool, RunTarget& target)
    : pool_(pool), target_(target), rng_(target.seed ^ 0x6c65617365ULL) {}

LeaseReleases::~LeaseReleases() = default;

void LeaseReleases::hold(const RequestState& acquired, int index) {
  auto lease = std::make_unique<Lease>();
  lease->owner = this;
  lease->id = next_id_++;
  lease->index = index;
  RequestState& state = lease->state;
  state.seq = acquired.seq;
  state.identity = acquired.identity;
  state.cost = acquired.cost;
  engine::copy_clock(state.clock, acquired.clock);
  state.rng = &rng_;
  lease->timer = evtimer_new(pool_.base(), &LeaseReleases::on_hold_over, lease.get());
  const timeval wait = engine::to_timeval(target_.hold);
  evtimer_add(lease->timer, &wait);
  leases_.emplace(lease->id, std::move(lease));
}

void LeaseReleases::on_hold_over(int, short, void* arg) {
  auto* lease = static_cast<Lease*>(arg);
  if (!lease->sent) {
    lease->owner->release(*lease);
    return;
  }
  // Its reply, should it come, finds the lease gone and is dropped.
  lease->owner->end(lease->id, std::nullopt,
                    fmt::format("no reply from {} to the release within --timeout",
                                lease->connection->endpoint().display()));
}

void LeaseReleases::release(Lease& lease) {
  lease.sent = true;
  const timeval wait = engine::to_timeval(target_.release_timeout);
  evtimer_add(lease.timer, &wait);
  target_.release->begin(lease.state, lease);
  lease.connection = pool_.cluster() && lease.slot ? &pool_.connection(lease.index, *lease.slot)
                                                   : &pool_.connection(lease.index);
  send(lease);
}

void LeaseReleases::send(Lease& lease) {
  if (!lease.connection->send(lease.command.text(), lease.commands, this, lease.id)) {
    end(lease.id, std::nullopt,
        fmt::format(
            "no connection to {} when the release was due: {}",
            lease.connection->endpoint().display(),
            lease.connection->last_error().empty() ? "not ready" : lease.connection->last_error()));
  }
}

void LeaseReleases::on_reply(uint64_t tag, ReplyPtr reply, const std::string& lost_why) {
  const auto found = leases_.find(tag);
  if (found == leases_.end())
    return;
  Lease& lease = *found->second;
  if (!reply) {
    end(tag, std::nullopt,
        fmt::format("connection to {} lost: {}", lease.connection->endpoint().display(), lost_why));
    return;
  }
  if (lease.script != nullptr && !lease.reloaded && is_noscript(reply.get())) {
    // The script cache was flushed: EVAL loads the release script again.
    lease.reloaded = true;
    target_.stats.script_reloads.fetch_add(1, std::memory_order_relaxed);
    lease.eval_with_source();
    send(lease);
    return;
  }
  if (--lease.commands > 0 && !is_error(reply.get()))
    return;  // more replies to come for this release
  if (is_error(reply.get())) {
    end(tag, std::nullopt,
        fmt::format("release script {} replied {}",
                    lease.script != nullptr ? lease.script->name : std::string("(command)"),
                    describe_reply(reply.get())));
    return;
  }
  end(tag, lease.connection->last_read(), {});
}

void LeaseReleases::end(uint64_t id, std::optional<std::chrono::steady_clock::time_point> released,
                        std::string error) {
  const auto found = leases_.find(id);
  if (found == leases_.end())
    return;
  ends_.push_back({found->second->state.seq, released});
  if (!released) {
    ++failed_;
    if (first_error_.empty())
      first_error_ = std::move(error);
  }
  leases_.erase(found);
  if (settling_ && leases_.empty())
    event_base_loopbreak(pool_.base());
}

void LeaseReleases::settle() {
  if (!leases_.empty()) {
    settling_ = true;
    event_base_dispatch(pool_.base());
    settling_ = false;
  }
  // Interrupted (Ctrl-C) with releases still owed: those places may stay taken.
  while (!leases_.empty()) {
    end(leases_.begin()->first, std::nullopt,
        "the run was interrupted before the release was answered");
  }
  target_.leases.add(std::move(ends_), failed_, first_error_);
  ends_.clear();
  failed_ = 0;
  first_error_.clear();
}

}  // namespace rlcheck::redis
