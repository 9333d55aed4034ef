#pragma once
// Redis Cluster routing as pure logic: the hash slot of a key (CRC16 and hash tags, as the
// Cluster specification), the slot-to-master map read from CLUSTER SLOTS and kept current
// after MOVED, and the cluster's error replies read (MOVED/ASK, TRYAGAIN/CLUSTERDOWN,
// CROSSSLOT and the script errors that mean the same). No I/O here.

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <hiredis/hiredis.h>

namespace rlcheck::redis {

inline constexpr int k_cluster_slots = 16384;

// CRC16-CCITT (XMODEM: polynomial 0x1021, initial value 0), the checksum Redis Cluster uses.
uint16_t crc16(std::string_view data);
// The slot of `key`: crc16 mod 16384 of its hash tag (what lies between the first '{' and the
// next '}', when that is not empty), else of the whole key.
uint16_t key_slot(std::string_view key);

struct NodeAddress {
  std::string host;
  int port = 0;

  std::string name() const;  // "host:port", also for IPv6 hosts ("::1:7000")
  bool operator==(const NodeAddress&) const = default;
};

// Which master serves each slot. Masters keep their index for the map's lifetime (a master
// that loses all its slots stays listed), so callers can keep per-master state in a vector
// indexed the same way.
class SlotMap {
 public:
  // Reads a CLUSTER SLOTS reply (RESP2 arrays: start, end, [host, port, id, ...], replicas...).
  // An empty host means the node that answered: `fallback_host`. On error, what is wrong with
  // the reply, e.g. "CLUSTER SLOTS: entry 2: slot range 9000-100 is not within 0-16383".
  static std::expected<SlotMap, std::string> from_cluster_slots(const redisReply& reply,
                                                                std::string_view fallback_host);

  // Distinct masters in the order first seen.
  const std::vector<NodeAddress>& masters() const { return masters_; }
  // Index into masters() of the master serving `slot`, or -1 when no master serves it.
  int master_index(uint16_t slot) const;
  // The master serving `slot`, or nullopt when none does.
  std::optional<NodeAddress> master_of(uint16_t slot) const;
  // Records that `master` now serves `slot` (after a MOVED); adds it to masters() if new.
  // Returns its index. A slot outside 0-16383 is ignored and returns -1.
  int assign(uint16_t slot, const NodeAddress& master);
  // True when every one of the 16384 slots has a master.
  bool covered() const;

 private:
  SlotMap() : owner_(k_cluster_slots, -1) {}
  int index_of(const NodeAddress& master);

  std::vector<NodeAddress> masters_;
  std::vector<int16_t> owner_;  // slot -> index into masters_, -1: unassigned
};

struct Redirect {
  enum class Kind { moved, ask };
  Kind kind = Kind::moved;
  uint16_t slot = 0;
  NodeAddress to;  // host may be empty: the node that answered
};

// Reads "MOVED 15549 127.0.0.1:7003" or "ASK 3999 127.0.0.1:6381" (the error text as hiredis
// gives it, without '-'). The port follows the last ':', so "MOVED 1 ::1:7000" is host "::1";
// "MOVED 1 :7000" leaves the host empty. Anything else is nullopt.
std::optional<Redirect> parse_redirect(std::string_view error_text);

// TRYAGAIN (a multi-key command during a slot migration) or CLUSTERDOWN (the cluster or the
// slot is not served right now): the same command may succeed a moment later.
bool is_retry_later(std::string_view error_text);

// The command's keys, or the keys a script touched, are not all in one slot (or not on this
// node): the command can never run as written on Redis Cluster.
bool is_crossslot(std::string_view error_text);

}  // namespace rlcheck::redis
