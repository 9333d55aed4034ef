#include "redis/loop_adapter.hpp"

#include <event2/event.h>

namespace rlcheck::redis {
namespace {

struct LoopEvents {
  redisAsyncContext* context = nullptr;
  event* read = nullptr;   // EV_READ | EV_PERSIST
  event* write = nullptr;  // EV_WRITE, armed only when a write must wait for the socket
  event* flush = nullptr;  // no fd: activated to write queued commands later in this pass
  bool reading = false;
  bool write_armed = false;
  bool flush_pending = false;
  bool flushing = false;
};

void on_readable(evutil_socket_t, short, void* arg) {
  redisAsyncHandleRead(static_cast<LoopEvents*>(arg)->context);
}

void on_writable(evutil_socket_t, short, void* arg) {
  auto* events = static_cast<LoopEvents*>(arg);
  events->write_armed = false;
  redisAsyncHandleWrite(events->context);
}

void on_flush(evutil_socket_t, short, void* arg) {
  auto* events = static_cast<LoopEvents*>(arg);
  events->flush_pending = false;
  events->flushing = true;
  redisAsyncHandleWrite(events->context);  // may free the context: touch nothing after
}

void add_read(void* arg) {
  auto* events = static_cast<LoopEvents*>(arg);
  if (events->reading)
    return;
  events->reading = true;
  event_add(events->read, nullptr);
}

void del_read(void* arg) {
  auto* events = static_cast<LoopEvents*>(arg);
  if (!events->reading)
    return;
  events->reading = false;
  event_del(events->read);
}

void add_write(void* arg) {
  auto* events = static_cast<LoopEvents*>(arg);
  const bool connected = (events->context->c.flags & REDIS_CONNECTED) != 0;
  if (connected && !events->flushing) {
    // Commands issued during this pass go out together when the pass ends.
    if (!events->flush_pending) {
      events->flush_pending = true;
      event_active(events->flush, 0, 0);
    }
    return;
  }
  // Connecting, or the flush could not write everything: wait until the socket is writable.
  events->flushing = false;
  if (events->write_armed)
    return;
  events->write_armed = true;
  event_add(events->write, nullptr);
}

void del_write(void* arg) {
  auto* events = static_cast<LoopEvents*>(arg);
  events->flushing = false;
  if (!events->write_armed)
    return;
  events->write_armed = false;
  event_del(events->write);
}

void cleanup(void* arg) {
  auto* events = static_cast<LoopEvents*>(arg);
  event_free(events->read);
  event_free(events->write);
  event_free(events->flush);
  delete events;
}

}  // namespace

int attach_to_loop(redisAsyncContext* context, event_base* base) {
  if (context->ev.data != nullptr)
    return REDIS_ERR;
  auto* events = new LoopEvents;
  events->context = context;
  const int fd = context->c.fd;
  events->read = event_new(base, fd, EV_READ | EV_PERSIST, on_readable, events);
  events->write = event_new(base, fd, EV_WRITE, on_writable, events);
  events->flush = event_new(base, -1, 0, on_flush, events);
  context->ev.addRead = add_read;
  context->ev.delRead = del_read;
  context->ev.addWrite = add_write;
  context->ev.delWrite = del_write;
  context->ev.cleanup = cleanup;
  context->ev.data = events;
  add_read(events);
  add_write(events);
  return REDIS_OK;
}

}  // namespace rlcheck::redis
