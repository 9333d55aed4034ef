#include "http/native_client.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <unistd.h>

#include <event2/event.h>
#include <fmt/format.h>

#include "http/response_decision.hpp"

namespace rlcheck::http {
namespace {

NativeRequests make_native_requests(const HttpRequests& requests, HttpUrl url) {
  NativeRequests native{requests, std::move(url), {}, nullptr, {}};
  native.request =
      RequestTemplate::make(requests.method, native.url, requests.header_texts, requests.body_text);
  if (native.url.tls) {
    auto context = net::TlsContext::shared_for(requests.tls);
    if (context) {
      native.tls = std::move(*context);
    } else {
      native.tls_error = context.error();
    }
  }
  return native;
}

}  // namespace

const std::vector<NativeLoop::Address>& NativeLoop::addresses(std::string& error) {
  if (!addresses_.empty())
    return addresses_;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(native_.url.port);
  if (const int status = getaddrinfo(native_.url.host.c_str(), port.c_str(), &hints, &found);
      status != 0) {
    error = fmt::format("cannot resolve {}: {}", native_.url.host, gai_strerror(status));
    return addresses_;
  }
  for (addrinfo* address = found; address != nullptr; address = address->ai_next) {
    Address kept{};
    std::memcpy(&kept.storage, address->ai_addr, address->ai_addrlen);
    kept.length = address->ai_addrlen;
    addresses_.push_back(kept);
  }
  freeaddrinfo(found);
  return addresses_;
}

NativeClientFactory::NativeClientFactory(const HttpRequests& requests, HttpUrl url)
    : native_(make_native_requests(requests, std::move(url))) {}

NativeHttpClient::NativeHttpClient(event_base* base, NativeLoop& loop, const NativeRequests& native,
                                   engine::ClientListener& listener, int slot, int client_id)
    : base_(base),
      loop_(loop),
      native_(native),
      listener_(listener),
      slot_(slot),
      rng_(engine::client_seed(native.requests.seed, client_id)) {
  // The connection made before the run leaves from the address this client's number picks,
  // so that the clients' first connections spread over the addresses.
  if (!native.requests.source_addresses.empty())
    source_ = static_cast<size_t>(client_id) % native.requests.source_addresses.size();
}

NativeHttpClient::~NativeHttpClient() {
  close_connection();
  for (auto& parked : parked_) {
    if (parked)
      drop(*parked);
  }
}

void NativeHttpClient::connect() {
  // The connection opens before the run starts, so that the first request's instants do not
  // include the connect (and TLS handshake). Whatever the outcome the slot is ready: a
  // connection that could not be made is tried again by the first request, which then reports
  // why (refused, resolve, tls) as curl's would.
  preconnecting_ = true;
  open_connection();
}

void NativeHttpClient::connection_ready() {
  if (preconnecting_) {
    preconnecting_ = false;
    phase_ = Phase::idle;
    // Not reused_: a request it fails is not sent again (the server may have counted it).
    listener_.on_connected(slot_, true, {});
    return;
  }
  phase_ = Phase::sending;
  send_some();
}

void NativeHttpClient::start(const engine::RequestTicket& ticket) {
  engine::PlaceholderContext context = native_.requests.placeholders;
  context.seq = ticket.seq;
  context.identity = ticket.identity;
  context.cost = ticket.cost;
  context.rng = &rng_;
  context.clock = &ticket.clock;
  engine::copy_clock(clock_, ticket.clock);
  request_ = &native_.request.render(context, scratch_);
  written_ = 0;
  parser_.reset(native_.request.head_request());
  in_flight_ = true;
  preconnecting_ = false;
  if (!native_.requests.source_addresses.empty())
    use_source(native_.requests.source_index(ticket.identity));
  if (!stream_ || phase_ != Phase::idle) {
    open_connection();  // none yet, or one still connecting from connect()
    return;
  }
  phase_ = Phase::sending;
  progress();
}

void NativeHttpClient::use_source(size_t source) {
  if (source == source_)
    return;
  if (stream_ && phase_ == Phase::idle) {
    park();
  } else {
    close_connection();  // still connecting from connect(): not worth keeping
  }
  source_ = source;
  unpark();
}

void NativeHttpClient::park() {
  if (parked_.size() <= source_)
    parked_.resize(source_ + 1);
  if (!parked_[source_])
    parked_[source_] = std::make_unique<Parked>();
  Parked& parked = *parked_[source_];
  drop(parked);
  parked.reused = reused_;
  parked.stream = std::move(stream_);
  close_connection();  // the events; the stream is parked's now
  parked.idle_event = event_new(base_, parked.stream->fd(), EV_READ | EV_PERSIST,
                                &NativeHttpClient::on_parked_io, &parked);
  event_add(parked.idle_event, nullptr);
}

void NativeHttpClient::unpark() {
  if (parked_.size() <= source_ || !parked_[source_] || !parked_[source_]->stream)
    return;
  Parked& parked = *parked_[source_];
  event_free(parked.idle_event);
  parked.idle_event = nullptr;
  stream_ = std::move(parked.stream);
  reused_ = parked.reused;
  phase_ = Phase::idle;
  watch(stream_->fd());
  event_add(read_event_, nullptr);
}

void NativeHttpClient::drop(Parked& parked) {
  if (parked.idle_event != nullptr) {
    event_free(parked.idle_event);
    parked.idle_event = nullptr;
  }
  parked.stream.reset();
}

void NativeHttpClient::on_parked_io(int, short, void* parked_arg) {
  auto& parked = *static_cast<Parked*>(parked_arg);
  // As on_idle_readable: an idle connection may only be closed by the server.
  char scratch[512];
  const net::IoResult result = parked.stream->read(scratch, sizeof scratch);
  if (result.status != net::IoStatus::want_read && result.status != net::IoStatus::want_write)
    drop(parked);
}

void NativeHttpClient::abort(engine::ErrorKind why) {
  if (!in_flight_)
    return;
  // A late response must not answer the next request: the connection goes.
  close_connection();
  fail(why, "no response within --timeout");
}

void NativeHttpClient::open_connection() {
  close_connection();
  reused_ = false;
  if (!native_.tls_error.empty()) {
    fail(engine::ErrorKind::tls, native_.tls_error);
    return;
  }
  std::string error;
  if (loop_.addresses(error).empty()) {
    fail(engine::ErrorKind::resolve, error);
    return;
  }
  address_index_ = 0;
  connect_failure_.clear();
  try_address();
}

void NativeHttpClient::try_address() {
  std::string dummy;
  const auto& addresses = loop_.addresses(dummy);
  while (address_index_ < addresses.size()) {
    const NativeLoop::Address& address = addresses[address_index_];
    const int fd =
        ::socket(address.storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      connect_failure_ = std::strerror(errno);
      ++address_index_;
      continue;
    }
    const int on = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    if (!native_.requests.source_addresses.empty()) {
      auto bound = net::bind_source(fd, address.storage.ss_family,
                                    native_.requests.source_addresses[source_]);
      if (!bound) {
        connect_failure_ = bound.error();
        ::close(fd);
        ++address_index_;
        continue;
      }
    }
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&address.storage), address.length) == 0 ||
        errno == EINPROGRESS) {
      connecting_fd_ = fd;
      phase_ = Phase::connecting;
      watch(fd);
      want_write();
      return;
    }
    connect_failure_ = std::strerror(errno);
    ::close(fd);
    ++address_index_;
  }
  fail(engine::ErrorKind::refused,
       fmt::format("cannot connect to {} port {}: {}", native_.url.host, native_.url.port,
                   connect_failure_.empty() ? "no address" : connect_failure_));
}

void NativeHttpClient::watch(int fd) {
  read_event_ = event_new(base_, fd, EV_READ | EV_PERSIST, &NativeHttpClient::on_io, this);
  write_event_ = event_new(base_, fd, EV_WRITE, &NativeHttpClient::on_io, this);
  // Reading starts once connected; the connect's end shows as writable.
}

void NativeHttpClient::want_write() {
  event_add(write_event_, nullptr);
}

void NativeHttpClient::on_io(int, short, void* self_arg) {
  auto* self = static_cast<NativeHttpClient*>(self_arg);
  switch (self->phase_) {
    case Phase::idle:
      self->on_idle_readable();
      return;
    case Phase::connecting:
      self->on_connect_ready();
      return;
    default:
      self->progress();
  }
}

void NativeHttpClient::on_connect_ready() {
  const int fd = connecting_fd_;
  if (const std::string error = net::connect_error(fd); !error.empty()) {
    connect_failure_ = error;
    close_connection();
    ++address_index_;
    try_address();
    return;
  }
  connecting_fd_ = -1;
  event_add(read_event_, nullptr);
  stream_ = native_.url.tls ? native_.tls->wrap(fd, native_.url.host) : net::plain_stream(fd);
  if (!native_.url.tls) {
    connection_ready();
    return;
  }
  phase_ = Phase::handshaking;
  progress();
}

void NativeHttpClient::progress() {
  if (phase_ == Phase::handshaking) {
    const net::IoResult result = stream_->handshake();
    switch (result.status) {
      case net::IoStatus::done:
        connection_ready();
        return;
      case net::IoStatus::want_write:
        want_write();
        return;
      case net::IoStatus::want_read:
        return;
      default: {
        const std::string why = stream_->error();
        close_connection();
        fail(engine::ErrorKind::tls, why.empty() ? "TLS handshake failed" : why);
        return;
      }
    }
  }
  if (phase_ == Phase::sending) {
    send_some();
    return;
  }
  if (phase_ == Phase::receiving)
    receive_some();
}

void NativeHttpClient::send_some() {
  while (written_ < request_->size()) {
    const net::IoResult result =
        stream_->write(request_->data() + written_, request_->size() - written_);
    switch (result.status) {
      case net::IoStatus::done:
        written_ += result.bytes;
        break;
      case net::IoStatus::want_write:
        want_write();
        return;
      case net::IoStatus::want_read:
        return;
      case net::IoStatus::closed:
      case net::IoStatus::failed:
        connection_lost(stream_->error());
        return;
    }
  }
  phase_ = Phase::receiving;
  // The response is read when the socket says so: a read now would almost always find nothing.
}

void NativeHttpClient::receive_some() {
  char* buffer = loop_.buffer();
  while (true) {
    const net::IoResult result = stream_->read(buffer, loop_.buffer_size());
    if (result.status == net::IoStatus::want_read)
      return;
    if (result.status == net::IoStatus::want_write) {
      want_write();
      return;
    }
    if (result.status == net::IoStatus::closed || result.status == net::IoStatus::failed) {
      if (parser_.started() && parser_.feed_eof() == ResponseParser::State::complete) {
        close_connection();  // a body that ran to the close
        break;
      }
      connection_lost(stream_->error());
      return;
    }
    size_t used = 0;
    const ResponseParser::State state = parser_.feed(buffer, result.bytes, used);
    if (state == ResponseParser::State::failed) {
      close_connection();
      fail(parser_.over_cap() ? engine::ErrorKind::too_large : engine::ErrorKind::protocol,
           parser_.error());
      return;
    }
    if (state == ResponseParser::State::complete) {
      // Bytes past the response answer no request: the connection cannot be trusted.
      if (used < result.bytes || !parser_.keep_alive())
        close_connection();
      break;
    }
  }
  if (stream_) {
    phase_ = Phase::idle;
    reused_ = true;
  }
  in_flight_ = false;
  listener_.on_decision(
      slot_, decide_response(parser_.status(), parser_.headers(), native_.requests.rules, clock_));
}

void NativeHttpClient::on_idle_readable() {
  if (!stream_)
    return;
  // Between requests the server may only close (an idle timeout); anything else is not HTTP.
  const net::IoResult result = stream_->read(loop_.buffer(), loop_.buffer_size());
  if (result.status != net::IoStatus::want_read && result.status != net::IoStatus::want_write)
    close_connection();
}

void NativeHttpClient::connection_lost(const std::string& why) {
  const bool stale = reused_ && !parser_.started();
  close_connection();
  if (stale) {
    // A keep-alive connection the server had closed: the request never reached it.
    written_ = 0;
    parser_.reset(native_.request.head_request());
    open_connection();  // a fresh connection is not reused_: one retry at most
    return;
  }
  fail(engine::ErrorKind::reset,
       why.empty() ? "the server closed the connection before a whole response" : why);
}

void NativeHttpClient::close_connection() {
  if (read_event_ != nullptr) {
    event_free(read_event_);
    read_event_ = nullptr;
  }
  if (write_event_ != nullptr) {
    event_free(write_event_);
    write_event_ = nullptr;
  }
  if (connecting_fd_ >= 0) {
    ::close(connecting_fd_);
    connecting_fd_ = -1;
  }
  stream_.reset();
  phase_ = Phase::idle;
}

void NativeHttpClient::fail(engine::ErrorKind kind, std::string message) {
  if (preconnecting_) {
    preconnecting_ = false;
    close_connection();
    listener_.on_connected(slot_, true, {});
    return;
  }
  engine::Decision decision;
  decision.outcome = engine::Outcome::error;
  decision.error = kind;
  decision.error_message = std::move(message);
  finish(std::move(decision));
}

void NativeHttpClient::finish(engine::Decision&& decision) {
  in_flight_ = false;
  listener_.on_decision(slot_, std::move(decision));
}

}  // namespace rlcheck::http
