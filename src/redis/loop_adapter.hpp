#pragma once
// Binds a hiredis async context to a libevent loop, leaner than hiredis' own libevent adapter:
// the read event is persistent (added once, not re-armed after every reply), and commands are
// written by a deferred callback at the end of the current loop pass instead of by arming and
// disarming an EV_WRITE event per command. A write event is armed only while connecting or
// when the socket's buffer is full. Per request that saves three epoll_ctl calls.

#include <hiredis/async.h>

struct event_base;

namespace rlcheck::redis {

// Like redisLibeventAttach: REDIS_OK, or REDIS_ERR if something is already attached. The
// events are freed by hiredis through the cleanup hook when the context goes.
int attach_to_loop(redisAsyncContext* context, event_base* base);

}  // namespace rlcheck::redis
