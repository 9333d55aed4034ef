#pragma once
// curl's multi interface driven by a libevent loop (the "multi_socket" API): curl says which
// sockets to watch and when to wake it; the loop tells curl when they are ready. One per
// worker loop, shared by that loop's clients; connections are cached and reused across
// transfers.

#include <memory>
#include <set>

#include <curl/curl.h>
#include <event2/util.h>

#include "engine/client.hpp"

struct event;
struct event_base;

namespace rlcheck::http {

// Told when its transfer ends, on the loop's thread, after the handle left the multi.
class TransferOwner {
 public:
  virtual ~TransferOwner() = default;
  virtual void on_transfer_done(CURLcode result) = 0;
};

class CurlMulti final : public engine::LoopShared {
 public:
  CurlMulti(event_base* base, long max_connections);
  ~CurlMulti() override;
  CurlMulti(const CurlMulti&) = delete;
  CurlMulti& operator=(const CurlMulti&) = delete;

  // Starts `easy`; `owner` is told when it ends. False if curl refused the handle.
  bool start(CURL* easy, TransferOwner& owner);
  // Stops `easy` without telling its owner (the owner is the one asking).
  void cancel(CURL* easy);

 private:
  struct Watch;
  static int on_socket(CURL* easy, curl_socket_t socket, int what, void* self, void* watch);
  static int on_timer(CURLM* multi, long timeout_ms, void* self);
  static void on_socket_ready(evutil_socket_t socket, short kind, void* self);
  static void on_timeout(evutil_socket_t, short, void* self);
  void act(curl_socket_t socket, int action);
  void finish_done_transfers();

  event_base* base_;
  CURLM* multi_;
  event* timer_;
  std::set<Watch*> watches_;  // freed by curl's REMOVE, or by the destructor
};

}  // namespace rlcheck::http
