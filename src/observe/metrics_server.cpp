#include "observe/metrics_server.hpp"

#include <cerrno>
#include <cstring>

#include <arpa/inet.h>
#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace rlcheck::observe {
namespace {

// How often the loop looks at the stop flag: no libevent call crosses threads.
constexpr timeval k_stop_poll{0, 100'000};

// A listening socket on `address`, or why there is none.
std::expected<int, std::string> listen_on(const config::ListenAddress& address) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(address.port);
  const int resolved = getaddrinfo(address.host.empty() ? nullptr : address.host.c_str(),
                                   port.c_str(), &hints, &found);
  if (resolved != 0)
    return std::unexpected(std::string(gai_strerror(resolved)));
  std::string why = "no address to listen on";
  int fd = -1;
  for (addrinfo* candidate = found; candidate != nullptr; candidate = candidate->ai_next) {
    fd = socket(candidate->ai_family, candidate->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK,
                candidate->ai_protocol);
    if (fd < 0) {
      why = std::strerror(errno);
      continue;
    }
    const int on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (bind(fd, candidate->ai_addr, candidate->ai_addrlen) == 0 && listen(fd, 128) == 0)
      break;
    why = std::strerror(errno);
    close(fd);
    fd = -1;
  }
  freeaddrinfo(found);
  if (fd < 0)
    return std::unexpected(why);
  return fd;
}

uint16_t port_of(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  return address.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6*>(&address)->sin6_port)
                                       : ntohs(reinterpret_cast<sockaddr_in*>(&address)->sin_port);
}

}  // namespace

struct MetricsServer::Loop {
  event_base* base = nullptr;
  evhttp* http = nullptr;
  event* poll = nullptr;
  Render render;
  std::atomic<bool>* stop = nullptr;

  ~Loop() {
    if (poll != nullptr)
      event_free(poll);
    if (http != nullptr)
      evhttp_free(http);
    if (base != nullptr)
      event_base_free(base);
  }

  static void on_request(evhttp_request* request, void* arg) {
    auto* loop = static_cast<Loop*>(arg);
    const char* path = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(request));
    if (evhttp_request_get_command(request) != EVHTTP_REQ_GET || path == nullptr ||
        std::strcmp(path, "/metrics") != 0) {
      evhttp_send_error(request, HTTP_NOTFOUND, "Not Found");
      return;
    }
    const char* accept = evhttp_find_header(evhttp_request_get_input_headers(request), "Accept");
    const Format format = negotiate(accept != nullptr ? accept : "");
    const std::string body = loop->render(format);
    evhttp_add_header(evhttp_request_get_output_headers(request), "Content-Type",
                      content_type(format));
    evbuffer* buffer = evbuffer_new();
    evbuffer_add(buffer, body.data(), body.size());
    evhttp_send_reply(request, HTTP_OK, "OK", buffer);
    evbuffer_free(buffer);
  }

  static void on_poll(int, short, void* arg) {
    auto* loop = static_cast<Loop*>(arg);
    if (loop->stop->load())
      event_base_loopbreak(loop->base);
  }
};

std::expected<std::unique_ptr<MetricsServer>, std::string> MetricsServer::start(
    const config::ListenAddress& address, Render render) {
  auto fd = listen_on(address);
  if (!fd)
    return std::unexpected(fd.error());
  std::unique_ptr<MetricsServer> server(new MetricsServer());
  server->bound_ = address;
  server->bound_.port = port_of(*fd);
  auto loop = std::make_unique<Loop>();
  loop->render = std::move(render);
  loop->stop = &server->stop_;
  loop->base = event_base_new();
  loop->http = loop->base != nullptr ? evhttp_new(loop->base) : nullptr;
  if (loop->http == nullptr || evhttp_accept_socket_with_handle(loop->http, *fd) == nullptr) {
    close(*fd);
    return std::unexpected(std::string("cannot start an HTTP server"));
  }
  evhttp_set_allowed_methods(loop->http, EVHTTP_REQ_GET);
  evhttp_set_gencb(loop->http, &Loop::on_request, loop.get());
  loop->poll = event_new(loop->base, -1, EV_PERSIST, &Loop::on_poll, loop.get());
  event_add(loop->poll, &k_stop_poll);
  server->loop_ = std::move(loop);
  server->thread_ = std::jthread([base = server->loop_->base] { event_base_dispatch(base); });
  return server;
}

MetricsServer::~MetricsServer() {
  stop_.store(true);
  if (thread_.joinable())
    thread_.join();
}

}  // namespace rlcheck::observe
