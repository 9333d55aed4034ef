#include "redis/connection.hpp"

#include <algorithm>

#include <event2/event.h>
#include <fmt/format.h>

#include "engine/event_time.hpp"
#include "net/tls_stream.hpp"
#include "redis/command_buffer.hpp"

namespace rlcheck::redis {
namespace {

constexpr config::Nanos k_first_backoff = std::chrono::milliseconds(50);
constexpr config::Nanos k_longest_backoff = std::chrono::seconds(1);
constexpr size_t k_read_chunk = 16 * 1024;

std::string node_name(const Endpoint& endpoint) {
  if (endpoint.is_unix())
    return endpoint.socket_path;
  return fmt::format("{}:{}", endpoint.host, endpoint.port);
}

std::string seconds_text(config::Nanos span) {
  return fmt::format("{:g}s", std::chrono::duration<double>(span).count());
}

std::string over_cap_message() {
  return fmt::format("a reply over {} MiB or {} elements (rlcheck's cap on one reply)",
                     k_max_reply_bytes / (1024 * 1024), k_max_reply_elements);
}

// With --pipeline, a connection's replies go to hundreds of clients in turn, each cold in cache
// by its next reply: the next but one is fetched while this one and the next are handled.
void prefetch_sink(const ReplySink* sink) {
  if (sink == nullptr)
    return;
  // The sink is a base near the start of a client object whose per-request fields come first.
  const auto* bytes = reinterpret_cast<const char*>(sink) - 64;
  for (int line = 0; line < 8; ++line)
    __builtin_prefetch(bytes + 64 * line);
}

}  // namespace

std::vector<std::vector<std::string>> login_commands(const Endpoint& endpoint) {
  std::vector<std::vector<std::string>> commands;
  if (!endpoint.password.empty()) {
    if (endpoint.user.empty()) {
      commands.push_back({"AUTH", endpoint.password});
    } else {
      commands.push_back({"AUTH", endpoint.user, endpoint.password});
    }
  }
  if (endpoint.db != 0)
    commands.push_back({"SELECT", std::to_string(endpoint.db)});
  return commands;
}

std::expected<ConnectionSettings, std::string> connection_settings(const Endpoint& endpoint,
                                                                   config::Nanos connect_timeout) {
  ConnectionSettings settings;
  settings.endpoint = endpoint;
  settings.login = login_commands(endpoint);
  settings.connect_timeout = connect_timeout;
  if (endpoint.tls) {
    auto tls = net::TlsContext::shared_for(endpoint.tls_options);
    if (!tls)
      return std::unexpected(tls.error());
    settings.tls = std::move(*tls);
  }
  return settings;
}

Connection::Connection(event_base* base, ConnectionSettings settings)
    : base_(base), settings_(std::move(settings)), name_(node_name(settings_.endpoint)) {
  flush_event_ = event_new(base_, -1, 0, &Connection::on_flush_event, this);
  timer_ = evtimer_new(base_, &Connection::on_timer_event, this);
}

Connection::~Connection() {
  drop_events();
  event_free(flush_event_);
  event_free(timer_);
  stream_.reset();
}

void Connection::set_events(int fd) {
  socket_event_ = event_new(base_, fd, EV_READ | EV_PERSIST, &Connection::on_socket_event, this);
  write_event_ = event_new(base_, fd, EV_WRITE, &Connection::on_socket_event, this);
}

void Connection::drop_events() {
  if (socket_event_ != nullptr)
    event_free(socket_event_);
  if (write_event_ != nullptr)
    event_free(write_event_);
  socket_event_ = nullptr;
  write_event_ = nullptr;
  write_armed_ = false;
  write_waits_for_read_ = false;
}

void Connection::open() {
  if (state_ != State::idle && state_ != State::backing_off)
    return;
  evtimer_del(timer_);
  auto fd = net::start_connect(settings_.endpoint.host, settings_.endpoint.port,
                               settings_.endpoint.socket_path, settings_.source_address);
  if (!fd) {
    state_ = State::connecting;
    lose(fd.error());
    return;
  }
  stream_ =
      settings_.tls ? settings_.tls->wrap(*fd, settings_.endpoint.host) : net::plain_stream(*fd);
  reader_ = std::make_unique<ReplyReader>();
  state_ = State::connecting;
  set_events(*fd);
  event_add(write_event_, nullptr);
  write_armed_ = true;
  const timeval limit = engine::to_timeval(settings_.connect_timeout);
  evtimer_add(timer_, &limit);
}

std::string Connection::unreachable_message() const {
  const std::string where = settings_.endpoint.display();
  if (last_error_.starts_with("refused "))
    return fmt::format("{} {}", where, last_error_);
  return fmt::format("cannot connect to {}: {}", where,
                     last_error_.empty() ? "no answer within the timeout" : last_error_);
}

void Connection::when_ready(ReadyWaiter* waiter) {
  if (state_ == State::ready) {
    waiter->on_ready();
    return;
  }
  if (state_ == State::unreachable) {
    waiter->on_unreachable(last_error_);
    return;
  }
  if (std::find(waiters_.begin(), waiters_.end(), waiter) == waiters_.end())
    waiters_.push_back(waiter);
  open();
}

void Connection::forget(ReadyWaiter* waiter) {
  std::erase(waiters_, waiter);
}

bool Connection::send(std::string_view commands, size_t count, ReplySink* sink, uint64_t tag) {
  if (state_ != State::ready)
    return false;
  out_.append(commands);
  for (size_t i = 0; i < count; ++i)
    pending_.push_back({sink, tag});
  schedule_flush();
  return true;
}

void Connection::on_socket_event(int, short what, void* self) {
  static_cast<Connection*>(self)->on_socket(what);
}

void Connection::on_flush_event(int, short, void* self) {
  auto* connection = static_cast<Connection*>(self);
  connection->flush_scheduled_ = false;
  connection->flush();
}

void Connection::on_timer_event(int, short, void* self) {
  auto* connection = static_cast<Connection*>(self);
  if (connection->state_ == State::backing_off) {
    connection->open();
    return;
  }
  connection->lose(
      fmt::format("no answer within {}", seconds_text(connection->settings_.connect_timeout)));
}

void Connection::on_socket(short what) {
  if (what & EV_WRITE)
    write_armed_ = false;
  switch (state_) {
    case State::connecting: {
      if (!(what & EV_WRITE))
        return;
      const std::string error = net::connect_error(stream_->fd());
      if (!error.empty()) {
        lose(error);
        return;
      }
      state_ = State::handshaking;
      event_add(socket_event_, nullptr);
      continue_handshake();
      return;
    }
    case State::handshaking:
      continue_handshake();
      return;
    case State::logging_in:
    case State::ready:
      if ((what & EV_WRITE) || ((what & EV_READ) && write_waits_for_read_))
        flush();
      if ((what & EV_READ) && (state_ == State::logging_in || state_ == State::ready))
        read_available();
      return;
    default:
      return;
  }
}

void Connection::continue_handshake() {
  const net::IoResult result = stream_->handshake();
  switch (result.status) {
    case net::IoStatus::done:
      start_login();
      return;
    case net::IoStatus::want_read:
      return;  // the persistent read event calls again
    case net::IoStatus::want_write:
      if (!write_armed_) {
        write_armed_ = true;
        event_add(write_event_, nullptr);
      }
      return;
    case net::IoStatus::closed:
    case net::IoStatus::failed:
      lose(stream_->error().empty() ? "closed during the TLS handshake" : stream_->error());
      return;
  }
}

void Connection::start_login() {
  state_ = State::logging_in;
  auto commands = settings_.login;
  commands.push_back({"PING"});
  login_replies_left_ = commands.size();
  CommandBuffer login;
  for (const auto& command : commands) {
    login.then(command.size());
    for (const std::string& arg : command)
      login.add(arg);
    pending_.push_back({nullptr, 0});
  }
  out_.append(login.text());
  flush();
}

void Connection::handle_login_reply(redisReply* reply) {
  if (is_error(reply)) {
    // Replies come in the order of settings_.login, then PING's.
    const size_t index = settings_.login.size() + 1 - login_replies_left_;
    const std::string command =
        index < settings_.login.size() ? settings_.login[index].front() : std::string("PING");
    last_error_ = fmt::format("refused {}: {}", command, describe_reply(reply));
    was_ready_ = false;  // a refused login is not retried
    lose(last_error_);
    return;
  }
  if (--login_replies_left_ == 0)
    become_ready();
}

void Connection::become_ready() {
  evtimer_del(timer_);
  state_ = State::ready;
  if (was_ready_ && settings_.stats != nullptr)
    settings_.stats->reconnects.fetch_add(1, std::memory_order_relaxed);
  was_ready_ = true;
  backoff_ = config::Nanos(0);
  std::vector<ReadyWaiter*> waiters;
  waiters.swap(waiters_);
  for (ReadyWaiter* waiter : waiters)
    waiter->on_ready();
}

void Connection::read_available() {
  char buffer[k_read_chunk];
  for (;;) {
    const net::IoResult result = stream_->read(buffer, sizeof buffer);
    if (result.status == net::IoStatus::want_read)
      return;
    if (result.status == net::IoStatus::want_write) {
      if (!write_armed_) {
        write_armed_ = true;
        event_add(write_event_, nullptr);
      }
      return;
    }
    if (result.status != net::IoStatus::done) {
      lose(result.status == net::IoStatus::closed
               ? (stream_->error().empty() ? "closed by the server" : stream_->error())
               : stream_->error());
      return;
    }
    last_read_ = std::chrono::steady_clock::now();
    reader_->feed(buffer, result.bytes);
    for (;;) {
      ReplyPtr reply;
      const ReplyReader::Status status = reader_->next(reply);
      if (status == ReplyReader::Status::error) {
        if (reader_->over_cap()) {
          lose(over_cap_message(), LossCause::too_large);
        } else {
          lose(fmt::format("protocol error: {}", reader_->error()), LossCause::protocol);
        }
        return;
      }
      if (status == ReplyReader::Status::more) {
        // What waits for the rest of a reply (a bulk string announced larger) counts too.
        if (reader_->buffered() > k_max_reply_bytes) {
          lose(over_cap_message(), LossCause::too_large);
          return;
        }
        break;
      }
      dispatch(std::move(reply));
      if (state_ != State::ready && state_ != State::logging_in)
        return;  // lost, or refused the login
    }
    if (result.bytes < sizeof buffer && !stream_->has_buffered())
      return;
  }
}

void Connection::dispatch(ReplyPtr reply) {
  if (pending_.empty()) {
    if (push_sink_ != nullptr) {
      push_sink_->on_reply(0, std::move(reply), {});
    } else {
      // RESP2 has no pushes: a reply nobody asked for puts every later reply out of step.
      lose(fmt::format("protocol error: a reply to no command ({})", describe_reply(reply.get())),
           LossCause::protocol);
    }
    return;
  }
  const Pending pending = pending_.front();
  pending_.pop_front();
  if (pending_.size() > 1)
    prefetch_sink(pending_[1].sink);
  if (!pending_.empty() && pending_[0].sink != nullptr)
    pending_[0].sink->warm_up();  // its object came in with the prefetch a reply ago
  if (pending.sink == nullptr) {
    if (state_ == State::logging_in)
      handle_login_reply(reply.get());
    return;
  }
  pending.sink->on_reply(pending.tag, std::move(reply), {});
}

void Connection::schedule_flush() {
  if (flush_scheduled_ || write_armed_)
    return;
  flush_scheduled_ = true;
  event_active(flush_event_, 0, 0);
}

void Connection::flush() {
  write_waits_for_read_ = false;
  while (out_sent_ < out_.size()) {
    const net::IoResult result = stream_->write(out_.data() + out_sent_, out_.size() - out_sent_);
    if (result.status == net::IoStatus::done) {
      out_sent_ += result.bytes;
      continue;
    }
    if (result.status == net::IoStatus::want_write) {
      if (!write_armed_) {
        write_armed_ = true;
        event_add(write_event_, nullptr);
      }
      return;
    }
    if (result.status == net::IoStatus::want_read) {
      write_waits_for_read_ = true;
      return;
    }
    lose(stream_->error().empty() ? "closed by the server" : stream_->error());
    return;
  }
  out_.clear();
  out_sent_ = 0;
}

void Connection::lose(const std::string& why, LossCause cause) {
  if (state_ == State::idle || state_ == State::backing_off || state_ == State::unreachable)
    return;
  last_error_ = why;
  loss_cause_ = cause;
  drop_events();
  stream_.reset();
  evtimer_del(timer_);
  out_.clear();
  out_sent_ = 0;
  base::RingQueue<Pending> lost;
  lost.swap(pending_);
  if (settings_.reconnect && was_ready_) {
    state_ = State::backing_off;
    backoff_ = backoff_.count() == 0 ? k_first_backoff : std::min(backoff_ * 2, k_longest_backoff);
    const timeval wait = engine::to_timeval(backoff_);
    evtimer_add(timer_, &wait);
  } else {
    state_ = State::unreachable;
  }
  for (size_t i = 0; i < lost.size(); ++i) {
    if (lost[i].sink != nullptr)
      lost[i].sink->on_reply(lost[i].tag, nullptr, why);
  }
  if (state_ == State::unreachable) {
    std::vector<ReadyWaiter*> waiters;
    waiters.swap(waiters_);
    for (ReadyWaiter* waiter : waiters)
      waiter->on_unreachable(why);
  }
}

}  // namespace rlcheck::redis
