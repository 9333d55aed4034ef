#include "redis/sync_client.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <deque>

#include <event2/event.h>
#include <fmt/format.h>

#include "engine/event_time.hpp"
#include "redis/command_buffer.hpp"
#include "redis/connection.hpp"

namespace rlcheck::redis {

// A private loop with one connection; each call runs the loop until its reply is in.
class SyncClient::Session final : private ReplySink, private ReadyWaiter {
 public:
  Session(ConnectionSettings settings, config::Nanos timeout)
      : base_(event_base_new(), &event_base_free),
        timeout_(timeout),
        connection_(std::make_unique<Connection>(base_.get(), std::move(settings))) {
    deadline_timer_ = evtimer_new(base_.get(), &Session::on_deadline, base_.get());
    connection_->set_push_sink(this);
  }
  ~Session() override {
    connection_.reset();
    event_free(deadline_timer_);
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  const Endpoint& endpoint() const { return connection_->endpoint(); }

  // A session connected, logged in and PINGed, or why not.
  static std::expected<std::unique_ptr<Session>, std::string> open(const Endpoint& endpoint,
                                                                   config::Nanos timeout) {
    auto settings = connection_settings(endpoint, timeout);
    if (!settings)
      return std::unexpected(settings.error());
    auto session = std::make_unique<Session>(std::move(*settings), timeout);
    if (auto ready = session->wait_ready(); !ready)
      return std::unexpected(ready.error());
    return session;
  }

  std::expected<void, std::string> wait_ready() {
    connection_->when_ready(this);
    run_until([this] { return settled_; });
    if (connection_->ready())
      return {};
    connection_->forget(this);
    return std::unexpected(connection_->unreachable_message());
  }

  std::expected<ReplyPtr, std::string> call(const std::vector<std::string_view>& argv) {
    command_.begin(argv.size());
    for (std::string_view arg : argv)
      command_.add(arg);
    const uint64_t tag = ++last_tag_;
    if (!connection_->send(command_.text(), 1, this, tag))
      return std::unexpected(lost_message());
    answer_.reset();
    answered_tag_ = 0;
    run_until([this, tag] { return answered_tag_ == tag || !connection_->ready(); });
    if (answered_tag_ == tag && answer_)
      return std::move(answer_);
    if (!connection_->ready())
      return std::unexpected(lost_message());
    return std::unexpected(fmt::format("{}: no reply within {}", endpoint().display(),
                                       engine::to_timeval(timeout_).tv_sec > 0
                                           ? fmt::format("{}s", engine::to_timeval(timeout_).tv_sec)
                                           : std::string("the timeout")));
  }

  std::expected<ReplyPtr, std::string> read_reply() {
    run_until([this] { return !pushed_.empty() || !connection_->ready(); });
    if (!pushed_.empty()) {
      ReplyPtr reply = std::move(pushed_.front());
      pushed_.pop_front();
      return reply;
    }
    if (!connection_->ready())
      return std::unexpected(lost_message());
    return std::unexpected(fmt::format("{}: no reply within the timeout", endpoint().display()));
  }

 private:
  void on_reply(uint64_t tag, ReplyPtr reply, const std::string&) override {
    if (tag == 0) {
      pushed_.push_back(std::move(reply));
      return;
    }
    if (tag != last_tag_)
      return;  // the reply to a call that gave up waiting
    answered_tag_ = tag;
    answer_ = std::move(reply);
  }
  void on_ready() override { settled_ = true; }
  void on_unreachable(const std::string&) override { settled_ = true; }

  std::string lost_message() const {
    return fmt::format(
        "{}: {}", endpoint().display(),
        connection_->last_error().empty() ? "the connection is closed" : connection_->last_error());
  }

  template <typename Done>
  void run_until(Done done) {
    const timeval limit = engine::to_timeval(timeout_);
    evtimer_add(deadline_timer_, &limit);
    timed_out_ = false;
    while (!done() && !timed_out_) {
      if (event_base_loop(base_.get(), EVLOOP_ONCE) != 0)
        break;
      timed_out_ = !evtimer_pending(deadline_timer_, nullptr);
    }
    evtimer_del(deadline_timer_);
  }

  static void on_deadline(int, short, void* base) {
    event_base_loopbreak(static_cast<event_base*>(base));
  }

  std::unique_ptr<event_base, void (*)(event_base*)> base_;
  config::Nanos timeout_;
  std::unique_ptr<Connection> connection_;
  event* deadline_timer_ = nullptr;
  CommandBuffer command_;
  uint64_t last_tag_ = 0;
  uint64_t answered_tag_ = 0;
  ReplyPtr answer_;
  std::deque<ReplyPtr> pushed_;
  bool settled_ = false;
  bool timed_out_ = false;
};

namespace {

constexpr int k_most_redirects = 8;

// Commands whose first argument is not a key (or that have none).
bool names_no_key(std::string_view command) {
  static constexpr std::string_view k_keyless[] = {
      "ACL",   "AUTH",   "CLIENT",   "CLUSTER", "COMMAND",   "CONFIG",   "DBSIZE",
      "DEBUG", "ECHO",   "FLUSHALL", "FLUSHDB", "FUNCTION",  "HELLO",    "INFO",
      "KEYS",  "MEMORY", "MONITOR",  "PING",    "RANDOMKEY", "READONLY", "ROLE",
      "SCAN",  "SCRIPT", "SELECT",   "SLOWLOG", "TIME",      "WAIT"};
  for (std::string_view keyless : k_keyless) {
    if (command.size() == keyless.size() &&
        std::equal(command.begin(), command.end(), keyless.begin(),
                   [](char a, char b) { return std::toupper(static_cast<unsigned char>(a)) == b; }))
      return true;
  }
  return false;
}

bool is_command(std::string_view command, std::string_view name) {
  return command.size() == name.size() &&
         std::equal(command.begin(), command.end(), name.begin(), [](char a, char b) {
           return std::toupper(static_cast<unsigned char>(a)) == b;
         });
}

// The key a command routes by on a cluster, if it has one.
std::optional<std::string_view> routing_key(const std::vector<std::string_view>& argv) {
  if (argv.size() < 2 || names_no_key(argv[0]))
    return std::nullopt;
  if (is_command(argv[0], "EVAL") || is_command(argv[0], "EVALSHA")) {
    if (argv.size() < 4 || argv[2] == "0")
      return std::nullopt;
    return argv[3];
  }
  return argv[1];
}

}  // namespace

SyncClient::SyncClient(std::unique_ptr<Session> session) : session_(std::move(session)) {}
SyncClient::SyncClient(SyncClient&&) noexcept = default;
SyncClient& SyncClient::operator=(SyncClient&&) noexcept = default;
SyncClient::~SyncClient() = default;

std::expected<SyncClient, std::string> SyncClient::connect(const Endpoint& endpoint,
                                                           config::Nanos timeout) {
  auto session = Session::open(endpoint, timeout);
  if (!session)
    return std::unexpected(session.error());
  SyncClient client(std::move(*session));
  client.timeout_ = timeout;
  return client;
}

std::expected<std::optional<SlotMap>, std::string> SyncClient::discover_cluster() {
  auto reply = session_->call({"CLUSTER", "SLOTS"});
  if (!reply)
    return std::unexpected(reply.error());
  if (is_error(reply->get()) || (*reply)->type != REDIS_REPLY_ARRAY)
    return std::optional<SlotMap>();  // standalone, or CLUSTER not allowed to this user
  const Endpoint& seed = session_->endpoint();
  auto slots = SlotMap::from_cluster_slots(**reply, seed.host);
  if (!slots)
    return std::unexpected(fmt::format("{}: {}", seed.display(), slots.error()));
  slots_ = std::move(*slots);
  return slots_;
}

std::expected<ReplyPtr, std::string> SyncClient::call(const std::vector<std::string_view>& argv) {
  if (!slots_)
    return session_->call(argv);
  if (!argv.empty() && is_command(argv[0], "SCRIPT"))
    return call_every_master(argv);
  if (auto key = routing_key(argv))
    return call_by_key(*key, argv);
  return session_->call(argv);
}

std::expected<ReplyPtr, std::string> SyncClient::call_node(
    const NodeAddress& node, const std::vector<std::string_view>& argv, bool asking) {
  Session* session = nullptr;
  for (auto& [address, known] : nodes_) {
    if (address == node)
      session = known.get();
  }
  if (session == nullptr) {
    auto made = Session::open(session_->endpoint().at(node.host, node.port), timeout_);
    if (!made)
      return std::unexpected(made.error());
    session = made->get();
    nodes_.emplace_back(node, std::move(*made));
  }
  if (asking) {
    auto ok = session->call({"ASKING"});
    if (!ok)
      return ok;
  }
  return session->call(argv);
}

std::expected<ReplyPtr, std::string> SyncClient::call_by_key(
    std::string_view key, const std::vector<std::string_view>& argv) {
  const uint16_t slot = key_slot(key);
  auto owner = slots_->master_of(slot);
  if (!owner)
    return session_->call(argv);  // no master known: the server says where with MOVED
  NodeAddress node = *owner;
  bool asking = false;
  for (int redirects = 0;; ++redirects) {
    auto reply = call_node(node, argv, asking);
    if (!reply || !is_error(reply->get()) || redirects == k_most_redirects)
      return reply;
    auto redirect = parse_redirect(std::string_view((*reply)->str, (*reply)->len));
    if (!redirect)
      return reply;
    if (redirect->to.host.empty())
      redirect->to.host = node.host;
    node = redirect->to;
    asking = redirect->kind == Redirect::Kind::ask;
    if (!asking)
      slots_->assign(redirect->slot, node);
  }
}

std::expected<ReplyPtr, std::string> SyncClient::call_every_master(
    const std::vector<std::string_view>& argv) {
  std::expected<ReplyPtr, std::string> first = std::unexpected(std::string("no master"));
  for (const NodeAddress& master : slots_->masters()) {
    auto reply = call_node(master, argv, false);
    if (!reply || is_error(reply->get()))
      return reply;
    if (!first)
      first = std::move(reply);
  }
  return first;
}

std::expected<ReplyPtr, std::string> SyncClient::read_reply() {
  return session_->read_reply();
}

const Endpoint& SyncClient::endpoint() const {
  return session_->endpoint();
}

}  // namespace rlcheck::redis
