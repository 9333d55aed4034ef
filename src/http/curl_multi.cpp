#include "http/curl_multi.hpp"

#include <event2/event.h>

#include "http/curl_library.hpp"

namespace rlcheck::http {

// What the loop watches for one of curl's sockets.
struct CurlMulti::Watch {
  event* ev = nullptr;
};

CurlMulti::CurlMulti(event_base* base, long max_connections) : base_(base) {
  multi_ = curl_library().multi_init();  // loads libcurl, once
  timer_ = evtimer_new(base_, &CurlMulti::on_timeout, this);
  curl_library().multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, &CurlMulti::on_socket);
  curl_library().multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
  curl_library().multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, &CurlMulti::on_timer);
  curl_library().multi_setopt(multi_, CURLMOPT_TIMERDATA, this);
  curl_library().multi_setopt(multi_, CURLMOPT_MAXCONNECTS, max_connections);
}

CurlMulti::~CurlMulti() {
  // Closing the multi closes its cached connections, which removes their watches.
  curl_library().multi_cleanup(multi_);
  for (Watch* watch : watches_) {
    event_free(watch->ev);
    delete watch;
  }
  event_free(timer_);
}

bool CurlMulti::start(CURL* easy, TransferOwner& owner) {
  curl_library().easy_setopt(easy, CURLOPT_PRIVATE, &owner);
  return curl_library().multi_add_handle(multi_, easy) == CURLM_OK;
}

void CurlMulti::cancel(CURL* easy) {
  curl_library().multi_remove_handle(multi_, easy);
}

int CurlMulti::on_socket(CURL*, curl_socket_t socket, int what, void* self_arg, void* watch_arg) {
  auto* self = static_cast<CurlMulti*>(self_arg);
  auto* watch = static_cast<Watch*>(watch_arg);
  if (what == CURL_POLL_REMOVE) {
    if (watch != nullptr) {
      event_free(watch->ev);
      self->watches_.erase(watch);
      delete watch;
      curl_library().multi_assign(self->multi_, socket, nullptr);
    }
    return 0;
  }
  const short kind = static_cast<short>(((what & CURL_POLL_IN) ? EV_READ : 0) |
                                        ((what & CURL_POLL_OUT) ? EV_WRITE : 0) | EV_PERSIST);
  if (watch == nullptr) {
    watch = new Watch;
    self->watches_.insert(watch);
    curl_library().multi_assign(self->multi_, socket, watch);
  } else {
    event_free(watch->ev);
  }
  watch->ev = event_new(self->base_, socket, kind, &CurlMulti::on_socket_ready, self);
  event_add(watch->ev, nullptr);
  return 0;
}

int CurlMulti::on_timer(CURLM*, long timeout_ms, void* self_arg) {
  auto* self = static_cast<CurlMulti*>(self_arg);
  if (timeout_ms < 0) {
    evtimer_del(self->timer_);
    return 0;
  }
  const timeval tv{timeout_ms / 1000, static_cast<suseconds_t>((timeout_ms % 1000) * 1000)};
  evtimer_add(self->timer_, &tv);
  return 0;
}

void CurlMulti::on_socket_ready(evutil_socket_t socket, short kind, void* self_arg) {
  const int action =
      ((kind & EV_READ) ? CURL_CSELECT_IN : 0) | ((kind & EV_WRITE) ? CURL_CSELECT_OUT : 0);
  static_cast<CurlMulti*>(self_arg)->act(socket, action);
}

void CurlMulti::on_timeout(evutil_socket_t, short, void* self_arg) {
  static_cast<CurlMulti*>(self_arg)->act(CURL_SOCKET_TIMEOUT, 0);
}

void CurlMulti::act(curl_socket_t socket, int action) {
  int running = 0;
  curl_library().multi_socket_action(multi_, socket, action, &running);
  finish_done_transfers();
}

void CurlMulti::finish_done_transfers() {
  int left = 0;
  while (CURLMsg* message = curl_library().multi_info_read(multi_, &left)) {
    if (message->msg != CURLMSG_DONE)
      continue;
    CURL* easy = message->easy_handle;
    const CURLcode result = message->data.result;
    TransferOwner* owner = nullptr;
    curl_library().easy_getinfo(easy, CURLINFO_PRIVATE, &owner);
    curl_library().multi_remove_handle(multi_, easy);
    // The owner may start its next transfer on the same handle from here.
    if (owner != nullptr)
      owner->on_transfer_done(result);
  }
}

}  // namespace rlcheck::http
