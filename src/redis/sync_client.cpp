#include "redis/sync_client.hpp"

#include <chrono>
#include <deque>

#include <event2/event.h>
#include <fmt/format.h>

#include "engine/event_time.hpp"
#include "redis/command_buffer.hpp"
#include "redis/connection.hpp"
#include "redis/tls_stream.hpp"

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

  std::expected<void, std::string> open() {
    connection_->when_ready(this);
    run_until([this] { return settled_; });
    if (connection_->ready())
      return {};
    connection_->forget(this);
    const std::string& why = connection_->last_error();
    const Endpoint& where = connection_->endpoint();
    if (why.starts_with("refused "))
      return std::unexpected(fmt::format("{} {}", where.display(), why));
    return std::unexpected(fmt::format("cannot connect to {}: {}", where.display(),
                                       why.empty() ? "no answer within the timeout" : why));
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
    return fmt::format("{}: {}", endpoint().display(),
                       connection_->last_error().empty() ? "the connection is closed"
                                                         : connection_->last_error());
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

SyncClient::SyncClient(std::unique_ptr<Session> session) : session_(std::move(session)) {}
SyncClient::SyncClient(SyncClient&&) noexcept = default;
SyncClient& SyncClient::operator=(SyncClient&&) noexcept = default;
SyncClient::~SyncClient() = default;

std::expected<SyncClient, std::string> SyncClient::connect(const Endpoint& endpoint,
                                                           config::Nanos timeout) {
  ConnectionSettings settings;
  settings.endpoint = endpoint;
  settings.login = login_commands(endpoint);
  settings.connect_timeout = timeout;
  if (endpoint.tls) {
    auto tls = TlsContext::shared_for(endpoint.tls_options);
    if (!tls)
      return std::unexpected(tls.error());
    settings.tls = std::move(*tls);
  }
  auto session = std::make_unique<Session>(std::move(settings), timeout);
  if (auto opened = session->open(); !opened)
    return std::unexpected(opened.error());
  return SyncClient(std::move(session));
}

std::expected<ReplyPtr, std::string> SyncClient::call(const std::vector<std::string_view>& argv) {
  return session_->call(argv);
}

std::expected<ReplyPtr, std::string> SyncClient::read_reply() {
  return session_->read_reply();
}

const Endpoint& SyncClient::endpoint() const {
  return session_->endpoint();
}

}  // namespace rlcheck::redis
