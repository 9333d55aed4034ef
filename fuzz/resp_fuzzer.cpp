// Fuzzes what rlcheck reads from a Redis server outside the strategies: replies described for
// messages, NOSCRIPT, the cluster's MOVED / ASK / TRYAGAIN / CLUSTERDOWN / CROSSSLOT error texts
// and the CLUSTER SLOTS reply (with the slot map then queried and updated by a redirect).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "redis/cluster_slots.hpp"
#include "redis/reply.hpp"
#include "resp_input.hpp"

using namespace rlcheck::redis;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  rlcheck::fuzz::for_each_reply(data, size, [](ReplyPtr reply) {
    (void)describe_reply(reply.get());
    (void)is_noscript(reply.get());
    std::optional<Redirect> redirect;
    if (is_error(reply.get()) || reply->type == REDIS_REPLY_STATUS ||
        reply->type == REDIS_REPLY_STRING) {
      const std::string_view text(reply->str, reply->len);
      redirect = parse_redirect(text);
      (void)is_retry_later(text);
      (void)is_crossslot(text);
      (void)key_slot(text);
    }
    auto map = SlotMap::from_cluster_slots(*reply, "127.0.0.1");
    if (!map)
      return;
    for (uint16_t slot : {0, 1, 5000, 16383})
      (void)map->master_of(slot);
    (void)map->covered();
    if (redirect) {
      const int index = map->assign(redirect->slot, redirect->to);
      if (index >= 0 && map->master_of(redirect->slot) != redirect->to)
        __builtin_trap();  // the slot is served by the master it was moved to
    }
  });
  return 0;
}
