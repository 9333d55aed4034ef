#include "engine/worker.hpp"

#include <algorithm>
#include <thread>

#include <event2/event.h>

#include "engine/event_time.hpp"
#include "engine/interrupt.hpp"
#include "engine/schedule.hpp"
#include "engine/virtual_schedule.hpp"

namespace rlcheck::engine {
namespace {

using Clock = std::chrono::steady_clock;

// Sleeps until `before` ahead of the next multiple of `window` on the wall clock (the next but
// one when that is too close), so a run starts just before a fixed window turns. Ctrl-C ends
// the wait.
void wait_for_boundary(std::chrono::nanoseconds window, std::chrono::nanoseconds before) {
  if (before.count() <= 0 || window.count() <= 0)
    return;
  using Wall = std::chrono::system_clock;
  const auto now = Wall::now().time_since_epoch();
  auto target = (now / window + 1) * window - before;
  if (target - now < std::chrono::milliseconds(1))
    target += window;
  wait_until(Wall::time_point(std::chrono::duration_cast<Wall::duration>(target)));
}

// Paced loads need timers to the microsecond: with epoll's millisecond timeouts a plain loop
// sent about 3 ms late at the median here, and the open model counts that as latency.
event_base* new_loop(const config::LoadConfig& load) {
  if (load.virtual_clock || (!load.open_model() && load.interval.count() == 0))
    return event_base_new();
  event_config* options = event_config_new();
  event_config_set_flag(options, EVENT_BASE_FLAG_PRECISE_TIMER);
  event_base* base = event_base_new_with_config(options);
  event_config_free(options);
  return base != nullptr ? base : event_base_new();
}

// The virtual start line: the one asked for, else the wall clock's next whole millisecond (or,
// with --start-before-boundary, that far before the next window boundary after it: computed,
// not waited for).
int64_t virtual_origin(const config::LoadConfig& load) {
  if (load.virtual_origin_ns != 0)
    return load.virtual_origin_ns;
  const int64_t now = next_whole_ms(wall_now_ns());
  const int64_t window = load.boundary_window.count();
  const int64_t before = load.start_before_boundary.count();
  if (window <= 0 || before <= 0)
    return now;
  return (now / window + 1) * window - before;
}

// Under the virtual clock only the clients that own identities send: the records this worker
// will hold are about its owners' share of the run.
size_t records_expected(const config::LoadConfig& load, int first_client_id, int clients) {
  const auto requests = static_cast<size_t>(std::max<int64_t>(0, load.requests));
  if (!load.virtual_clock)
    return requests;
  const int64_t owners = std::min<int64_t>(load.concurrency, std::max<int64_t>(1, load.identities));
  const int64_t mine = std::clamp<int64_t>(owners - first_client_id, 0, clients);
  if (mine == 0)
    return 0;
  const auto per_owner = requests / static_cast<size_t>(owners) + 1;
  return std::min(requests, per_owner * static_cast<size_t>(mine) + static_cast<size_t>(mine));
}

}  // namespace

RunShared::RunShared(const config::LoadConfig& load_config, int workers, RunObserver* run_observer,
                     RecordSink* record_sink)
    : load(load_config),
      identities(identity_map_of(load_config)),
      schedule(std::make_shared<const Schedule>(Schedule::make(load_config))),
      observer(run_observer),
      sink(record_sink),
      sole_worker(workers == 1),
      start_line(workers, [this, workers]() noexcept {
        if (load.start_gate) {
          const auto agreed = load.start_gate();
          cancelled = !agreed.has_value();
          if (agreed)
            wait_until(*agreed);
        } else if (!load.virtual_clock) {
          wait_for_boundary(load.boundary_window, load.start_before_boundary);
        }
        wait_until(load.not_before);
        start = Clock::now();
        start_wall_ns = load.virtual_clock ? virtual_origin(load) : wall_now_ns();
        if (observer != nullptr)
          observer->on_start(start);
        if (sink != nullptr)
          sink->begin(start_wall_ns, schedule.get(), workers);
      }) {}

struct Worker::Slot {
  Worker* worker = nullptr;
  int index = 0;
  std::unique_ptr<Client> client;
  EventPtr pace_timer;
  bool ready = false;  // connected before the start line
  bool busy = false;   // a request is in flight or waiting for its pace timer
  uint64_t seq = 0;
  uint8_t skew = 0;  // index into load.clock_skews of the request's clock
  int stage = -1;    // --stages: the stage the request is due in
  // --virtual-clock: the requests this client sends, and the virtual instant of the one in
  // flight (from the virtual start line).
  std::optional<IdentityCursor> cursor;
  // Its own view of the schedule: a client's requests are `identities` apart, so Poisson
  // instants come from the block it read last rather than the one another client moved to.
  // On the heap: its 2 KB would otherwise spread every slot's hot fields apart.
  std::unique_ptr<Schedule::Cursor> instants;
  int64_t virtual_ns = 0;
  Clock::time_point due;  // when the request may leave (the start line when unpaced)
  Clock::time_point sent;
  uint32_t identity = 0;  // the identity the request speaks for (drawn when it is sent)
  int32_t cost = 1;       // its units (--cost), drawn with it
};

void Worker::EventFree::operator()(event* e) const {
  event_free(e);
}

Worker::Worker(ClientFactory& factory, RunShared& shared, int first_client_id, int clients,
               LiveCell* live)
    : factory_(factory),
      shared_(shared),
      live_(live),
      first_client_id_(first_client_id),
      base_(new_loop(shared.load), &event_base_free),
      due_cursor_(*shared.schedule) {
  stages.resize(shared.schedule->stage_count());
  slots_.reserve(static_cast<size_t>(clients));
  for (int i = 0; i < clients; ++i)
    slots_.push_back(std::make_unique<Slot>());
  wire_seq_.assign(static_cast<size_t>(clients), k_off_wire);
  records = RecordLog(shared.load.first_seq);
  if (shared.sink != nullptr)
    return;
  records.reserve(records_expected(shared.load, first_client_id, clients));
}

Worker::~Worker() {
  // Clients first (freeing a hiredis context still touches its events on base_), then what
  // they shared, then the loop.
  slots_.clear();
  loop_shared_.reset();
}

int64_t Worker::since_start_ns() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - shared_.start).count();
}

void Worker::run() {
  event_base* base = base_.get();
  interrupt_poll_.reset(event_new(base, -1, EV_PERSIST, &Worker::on_poll_interrupt, this));
  const timeval poll = to_timeval(k_interrupt_poll);
  event_add(interrupt_poll_.get(), &poll);

  deadline_timer_.reset(evtimer_new(base, &Worker::on_deadline_timer, this));
  loop_shared_ = factory_.make_loop_shared(base);
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& slot = *slots_[i];
    slot.worker = this;
    slot.index = static_cast<int>(i);
    slot.pace_timer.reset(evtimer_new(base, &Worker::on_pace_timer, &slot));
    if (shared_.load.virtual_clock) {
      slot.cursor.emplace(shared_.load, first_client_id_ + slot.index);
      slot.instants = std::make_unique<Schedule::Cursor>(*shared_.schedule);
    }
    slot.client =
        factory_.make(base, loop_shared_.get(), *this, slot.index, first_client_id_ + slot.index);
  }

  // Connect phase: every connection ready (or failed, or out of time) before the start line.
  pending_connects_ = static_cast<int>(slots_.size());
  for (auto& slot : slots_)
    slot->client->connect();
  if (pending_connects_ > 0) {
    const timeval limit = to_timeval(shared_.load.timeout);
    EventPtr guard(evtimer_new(
        base, [](int, short, void* arg) { event_base_loopbreak(static_cast<event_base*>(arg)); },
        base));
    evtimer_add(guard.get(), &limit);
    event_base_dispatch(base);
    if (pending_connects_ > 0 && connect_error.empty()) {
      connect_error = "connection not ready within the timeout";
    }
  }
  for (auto& slot : slots_)
    clients_ready += slot->ready ? 1 : 0;

  shared_.start_line.arrive_and_wait();
  if (shared_.cancelled)
    return;
  if (engine::interrupted()) {
    was_interrupted = true;
    return;
  }

  for (auto& slot : slots_) {
    if (slot->ready)
      launch_next(slot->index);
  }
  if (in_flight_ > 0)
    event_base_dispatch(base);
  if (loop_shared_ && !engine::interrupted())
    loop_shared_->settle();
  flush_records(true);
  if (engine::interrupted())
    was_interrupted = true;
}

void Worker::keep(const RequestRecord& record) {
  if (shared_.sink == nullptr) {
    records.push_back(record);
    return;
  }
  constexpr size_t k_batch = 1024;
  outgoing_.push_back(record);
  if (outgoing_.size() >= k_batch)
    flush_records();
}

void Worker::flush_records(bool finished) {
  if (shared_.sink == nullptr)
    return;
  for (const RequestRecord& record : outgoing_)
    last_reply_ns = std::max(last_reply_ns, record.replied_ns);
  streamed += outgoing_.size();
  shared_.sink->take(index, outgoing_, finished ? INT64_MAX : low_water_ns());
  outgoing_.clear();
}

// Every record still to come is of a request on the wire now, or of one sent from now on.
int64_t Worker::low_water_ns() const {
  int64_t low = since_start_ns();
  for (const auto& slot : slots_) {
    if (on_wire(slot->index)) {
      low = std::min(
          low,
          std::chrono::duration_cast<std::chrono::nanoseconds>(slot->sent - shared_.start).count());
    }
  }
  return low;
}

void Worker::on_connected(int slot_index, bool ok, const std::string& error) {
  Slot& slot = *slots_[static_cast<size_t>(slot_index)];
  if (pending_connects_ <= 0)
    return;  // too late: the run started without it
  slot.ready = ok;
  if (!ok && connect_error.empty())
    connect_error = error;
  if (--pending_connects_ == 0)
    event_base_loopbreak(base_.get());
}

void Worker::launch_next(int slot_index, Clock::time_point freed_at) {
  Slot& slot = *slots_[static_cast<size_t>(slot_index)];
  if (exhausted_ || !slot.client->alive())
    return;
  if (stopping()) {
    exhausted_ = true;
    return;
  }
  if (slot.cursor) {
    launch_virtual(slot);
    return;
  }
  // This process's share: the n-th request it takes is request share_index + n x share_count.
  const uint64_t nth = shared_.take_seq();
  const uint64_t index = shared_.load.share_index + nth * shared_.load.share_count;
  if (index >= static_cast<uint64_t>(shared_.load.requests)) {
    exhausted_ = true;
    return;
  }
  slot.seq = shared_.load.first_seq + index;
  slot.skew = skew_index(slot);
  slot.busy = true;
  ++in_flight_;
  slot.due = shared_.start + due_cursor_.due(index);
  slot.stage = due_cursor_.stage_of(index);
  send_when_due(slot_index, freed_at);
}

// Under the virtual clock a client sends its identities' requests back to back, each at its
// virtual instant: nothing waits for a due time.
void Worker::launch_virtual(Slot& slot) {
  const std::optional<uint64_t> seq = slot.cursor->next();
  if (!seq)
    return;  // this client's share is sent; the others may still have theirs
  slot.seq = *seq;
  constexpr int64_t k_ms = 1'000'000;
  const uint64_t index = *seq - shared_.load.first_seq;
  slot.virtual_ns = slot.instants->due(index).count() / k_ms * k_ms;  // Schedule::virtual_ns
  slot.stage = slot.instants->stage_of(index);
  slot.skew = skew_index(slot);
  slot.busy = true;
  ++in_flight_;
  slot.due = Clock::now();
  send(slot.index);
}

StageTally* Worker::stage_tally(const Slot& slot) {
  if (slot.stage < 0 || static_cast<size_t>(slot.stage) >= stages.size())
    return nullptr;
  return &stages[static_cast<size_t>(slot.stage)];
}

// Which of load.clock_skews the request's clock is off by: its connection's (many hosts: its
// worker's); under the virtual clock, where an identity lives on one client, its identity's
// request number's, so each identity meets every skew.
uint8_t Worker::skew_index(const Slot& slot) const {
  const config::LoadConfig& load = shared_.load;
  const auto count = static_cast<uint64_t>(load.clock_skews.size());
  if (count <= 1)
    return 0;
  if (load.virtual_clock)
    return static_cast<uint8_t>(slot.seq / static_cast<uint64_t>(load.identities) % count);
  if (load.share_count > 1)
    return static_cast<uint8_t>(load.share_index % count);
  const auto connection = static_cast<uint64_t>((first_client_id_ + slot.index) /
                                                std::max(1, load.clients_per_connection));
  return static_cast<uint8_t>(connection % count);
}

void Worker::send_when_due(int slot_index, Clock::time_point freed_at) {
  Slot& slot = *slots_[static_cast<size_t>(slot_index)];
  if (!shared_.schedule->paced()) {
    send(slot_index, freed_at);  // due at the start line
    return;
  }
  // libevent measures timers from its cached loop time, which lags the clock: a timer can
  // fire a little early, so check again and wait out the rest rather than send before due.
  const auto delay = slot.due - Clock::now();
  if (delay > Clock::duration::zero()) {
    const timeval tv = to_timeval(delay + std::chrono::microseconds(1));
    evtimer_add(slot.pace_timer.get(), &tv);
    return;
  }
  send(slot_index);
}

void Worker::send(int slot_index, Clock::time_point freed_at) {
  Slot& slot = *slots_[static_cast<size_t>(slot_index)];
  if (stopping()) {
    // The run stopped on errors while this request waited for its due time: it never leaves.
    slot.busy = false;
    --in_flight_;
    finish_if_idle();
    return;
  }
  slot.sent = freed_at != Clock::time_point{} ? freed_at : Clock::now();
  wire_seq_[static_cast<size_t>(slot_index)] = slot.seq;
  StageTally* tally = stage_tally(slot);
  if (tally != nullptr)
    ++tally->sent;
  if (shared_.load.open_model() && !slot.cursor) {
    const int64_t late =
        std::chrono::duration_cast<std::chrono::nanoseconds>(slot.sent - slot.due).count();
    lateness_ns.record(late);
    if (tally != nullptr)
      tally->lateness_ns.record(late);
  }
  deadlines_.push_back({slot.sent + shared_.load.timeout, slot.index, slot.seq});
  if (!deadline_armed_)
    arm_deadline_timer();
  RequestClock clock;
  if (slot.cursor)
    clock.virtual_unix_ns = shared_.start_wall_ns + slot.virtual_ns;
  if (!shared_.load.clock_skews.empty())
    clock.skew_ns = shared_.load.clock_skews[slot.skew].count();
  if (live_ != nullptr) {
    live_->sent();
    if (slot.cursor)
      live_->reached_virtual(slot.virtual_ns);
  }
  slot.identity = shared_.identities.of(slot.seq);
  slot.cost = shared_.load.costs.of(slot.seq);
  slot.client->start({slot.seq, slot.identity, clock, slot.cost});
}

void Worker::on_decision(int slot_index, Decision&& decision) {
  Slot& slot = *slots_[static_cast<size_t>(slot_index)];
  if (!slot.busy)
    return;  // a late report after the request was settled
  const auto replied = decision.received != Clock::time_point{} ? decision.received : Clock::now();
  slot.busy = false;
  wire_seq_[static_cast<size_t>(slot_index)] = k_off_wire;
  --in_flight_;
  drop_settled_deadlines();

  RequestRecord record;
  record.seq = slot.seq;
  record.identity = slot.identity;
  record.cost = slot.cost;
  if (slot.cursor) {
    // The limiter decided at exactly the instant it was given: a zero-width interval is exact.
    record.sent_ns = record.replied_ns = slot.virtual_ns;
  } else {
    record.sent_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(slot.sent - shared_.start).count();
    record.replied_ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(replied - shared_.start).count();
  }
  record.clock_skew = slot.skew;
  record.outcome = decision.outcome;
  record.error = decision.error;
  record.hint_expected = decision.hint_expected;
  record.retry_ms = decision.retry_ms;
  record.remaining = decision.remaining;
  record.remaining_units = decision.remaining_units;
  record.bucket = decision.bucket;
  record.status = decision.status;
  record.hint_invalid = decision.hint_invalid;
  record.header_problem = decision.header_problem;
  record.hint_resolution_ms = decision.hint_resolution_ms;
  record.reset_from_date = decision.reset_from_date;
  record.retry_from_date = decision.retry_from_date;
  record.advertised_limit = decision.advertised_limit;
  record.advertised_reset_s = decision.advertised_reset_s;
  record.advertised_window_s = decision.advertised_window_s;
  if (!decision.hint_note.empty() && hint_sample.empty())
    hint_sample = decision.hint_note;
  if (!decision.header_note.empty() && header_sample.empty()) {
    header_sample = decision.header_note;
  }
  if (!decision.policies.empty())
    ++policy_sets[decision.policies];
  if (!decision.node.empty()) {
    if (auto node = by_node.find(decision.node); node != by_node.end()) {
      ++node->second;
    } else {
      by_node.emplace(std::string(decision.node), 1);
    }
  }
  if (live_ != nullptr)
    live_->decided(record.outcome, record.error);
  if (record.outcome == Outcome::error)
    count_error();
  StageTally* tally = stage_tally(slot);
  if (tally != nullptr) {
    ++(record.outcome == Outcome::allowed  ? tally->allowed
       : record.outcome == Outcome::denied ? tally->denied
                                           : tally->errors);
  }
  if (record.outcome != Outcome::error) {
    // The open model measures from when the request was due: a target that stalls the
    // connections delays the requests queued behind them, and that delay is its latency.
    const auto from = shared_.load.open_model() && !slot.cursor ? slot.due : slot.sent;
    const int64_t latency =
        std::chrono::duration_cast<std::chrono::nanoseconds>(replied - from).count();
    latency_ns.record(latency);
    if (live_ != nullptr)
      live_->latency(latency);
    if (tally != nullptr)
      tally->latency_ns.record(latency);
  } else if (!error_samples.contains(record.error)) {
    error_samples.emplace(record.error, std::move(decision.error_message));
  }
  keep(record);
  if (shared_.observer != nullptr)
    shared_.observer->on_record(record);

  if (engine::interrupted()) {
    event_base_loopbreak(base_.get());
    return;
  }
  launch_next(slot_index, decision.received);
  finish_if_idle();
}

// Once more requests errored than load.stop_after_errors, across every worker, the run stops:
// the errors already decide the test, and a dead target would only add more.
void Worker::count_error() {
  const std::optional<int64_t>& limit = shared_.load.stop_after_errors;
  if (!limit)
    return;
  if (shared_.errors.fetch_add(1, std::memory_order_relaxed) + 1 > *limit) {
    shared_.stopped.store(true, std::memory_order_relaxed);
    drop_waiting();
  }
}

// Requests waiting for their due time (paced loads) are dropped at once when the run stops,
// however far ahead they were due; the other workers notice at their next poll.
void Worker::drop_waiting() {
  for (auto& slot : slots_) {
    if (slot->busy && evtimer_pending(slot->pace_timer.get(), nullptr)) {
      evtimer_del(slot->pace_timer.get());
      slot->busy = false;
      --in_flight_;
    }
  }
  finish_if_idle();
}

bool Worker::stopping() const {
  const std::atomic<bool>* abandon = shared_.load.abandon;
  return shared_.stopped.load(std::memory_order_relaxed) ||
         (abandon != nullptr && abandon->load(std::memory_order_relaxed));
}

void Worker::finish_if_idle() {
  if (in_flight_ == 0)
    event_base_loopbreak(base_.get());
}

void Worker::on_pace_timer(int, short, void* arg) {
  auto* slot = static_cast<Slot*>(arg);
  slot->worker->send_when_due(slot->index);
}

bool Worker::settled(const Deadline& deadline) const {
  return wire_seq_[static_cast<size_t>(deadline.slot)] != deadline.seq;
}

void Worker::drop_settled_deadlines() {
  while (!deadlines_.empty() && settled(deadlines_.front()))
    deadlines_.pop_front();
}

void Worker::arm_deadline_timer() {
  if (deadlines_.empty())
    return;
  const auto delay = std::max(deadlines_.front().at - Clock::now(), Clock::duration::zero());
  const timeval tv = to_timeval(delay + std::chrono::microseconds(1));
  evtimer_add(deadline_timer_.get(), &tv);
  deadline_armed_ = true;
}

void Worker::on_deadline_timer(int, short, void* arg) {
  auto* worker = static_cast<Worker*>(arg);
  worker->deadline_armed_ = false;
  const auto now = Clock::now();
  for (;;) {
    worker->drop_settled_deadlines();
    if (worker->deadlines_.empty() || worker->deadlines_.front().at > now)
      break;
    const Deadline next = worker->deadlines_.front();
    worker->deadlines_.pop_front();
    // The client reports the timeout through on_decision before abort() returns.
    worker->slots_[static_cast<size_t>(next.slot)]->client->abort(ErrorKind::timeout);
  }
  if (!worker->deadline_armed_)
    worker->arm_deadline_timer();
}

void Worker::on_poll_interrupt(int, short, void* arg) {
  auto* worker = static_cast<Worker*>(arg);
  worker->flush_records();
  if (engine::interrupted())
    event_base_loopbreak(worker->base_.get());
  else if (worker->stopping())
    worker->drop_waiting();
}

}  // namespace rlcheck::engine
