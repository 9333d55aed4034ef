#include "redis/cluster_slots.hpp"

#include <array>
#include <charconv>

#include <fmt/format.h>

namespace rlcheck::redis {
namespace {

constexpr std::array<uint16_t, 256> make_crc16_table() {
  std::array<uint16_t, 256> table{};
  for (unsigned byte = 0; byte < 256; ++byte) {
    auto crc = static_cast<uint16_t>(byte << 8);
    for (int bit = 0; bit < 8; ++bit)
      crc = static_cast<uint16_t>((crc & 0x8000) ? (crc << 1) ^ 0x1021 : crc << 1);
    table[byte] = crc;
  }
  return table;
}

constexpr std::array<uint16_t, 256> k_crc16_table = make_crc16_table();

// What a CLUSTER SLOTS reply says about one slot range, checked.
struct SlotRange {
  long long first = 0;
  long long last = 0;
  NodeAddress master;
};

std::expected<NodeAddress, std::string> read_node(const redisReply& node,
                                                  std::string_view fallback_host) {
  if (node.type != REDIS_REPLY_ARRAY || node.elements < 2)
    return std::unexpected("the master is not an array of host and port");
  const redisReply* host = node.element[0];
  const redisReply* port = node.element[1];
  NodeAddress address;
  if (host->type == REDIS_REPLY_STRING) {
    address.host.assign(host->str, host->len);
  } else if (host->type != REDIS_REPLY_NIL) {
    return std::unexpected("the master's host is not a string");
  }
  if (address.host == "?")
    return std::unexpected("the master's endpoint is unknown ('?')");
  if (address.host.empty())
    address.host = fallback_host;
  if (port->type != REDIS_REPLY_INTEGER)
    return std::unexpected("the master's port is not an integer");
  if (port->integer < 1 || port->integer > 65535)
    return std::unexpected(
        fmt::format("the master's port {} is not within 1-65535", port->integer));
  address.port = static_cast<int>(port->integer);
  return address;
}

std::expected<SlotRange, std::string> read_range(const redisReply& entry,
                                                 std::string_view fallback_host) {
  if (entry.type != REDIS_REPLY_ARRAY || entry.elements < 3)
    return std::unexpected("not an array of start, end and master");
  const redisReply* first = entry.element[0];
  const redisReply* last = entry.element[1];
  if (first->type != REDIS_REPLY_INTEGER || last->type != REDIS_REPLY_INTEGER)
    return std::unexpected("the slot range is not two integers");
  if (first->integer < 0 || last->integer >= k_cluster_slots || first->integer > last->integer) {
    return std::unexpected(fmt::format("slot range {}-{} is not within 0-{}", first->integer,
                                       last->integer, k_cluster_slots - 1));
  }
  auto master = read_node(*entry.element[2], fallback_host);
  if (!master)
    return std::unexpected(master.error());
  return SlotRange{first->integer, last->integer, std::move(*master)};
}

std::optional<int> parse_int(std::string_view text) {
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size())
    return std::nullopt;
  return value;
}

bool starts_with_word(std::string_view text, std::string_view word) {
  return text.starts_with(word) && (text.size() == word.size() || text[word.size()] == ' ');
}

}  // namespace

uint16_t crc16(std::string_view data) {
  uint16_t crc = 0;
  for (const char c : data) {
    const auto byte = static_cast<unsigned char>(c);
    crc = static_cast<uint16_t>((crc << 8) ^ k_crc16_table[((crc >> 8) ^ byte) & 0xff]);
  }
  return crc;
}

uint16_t key_slot(std::string_view key) {
  const size_t open = key.find('{');
  if (open != std::string_view::npos) {
    const size_t close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1)
      key = key.substr(open + 1, close - open - 1);
  }
  return static_cast<uint16_t>(crc16(key) % k_cluster_slots);
}

std::string NodeAddress::name() const {
  return fmt::format("{}:{}", host, port);
}

std::expected<SlotMap, std::string> SlotMap::from_cluster_slots(const redisReply& reply,
                                                                std::string_view fallback_host) {
  if (reply.type == REDIS_REPLY_ERROR)
    return std::unexpected(
        fmt::format("CLUSTER SLOTS: {}", std::string_view(reply.str, reply.len)));
  if (reply.type != REDIS_REPLY_ARRAY)
    return std::unexpected("CLUSTER SLOTS: the reply is not an array");
  SlotMap map;
  for (size_t i = 0; i < reply.elements; ++i) {
    auto range = read_range(*reply.element[i], fallback_host);
    if (!range)
      return std::unexpected(fmt::format("CLUSTER SLOTS: entry {}: {}", i + 1, range.error()));
    const int index = map.index_of(range->master);
    for (long long slot = range->first; slot <= range->last; ++slot)
      map.owner_[static_cast<size_t>(slot)] = static_cast<int16_t>(index);
  }
  return map;
}

int SlotMap::master_index(uint16_t slot) const {
  return slot < k_cluster_slots ? owner_[slot] : -1;
}

std::optional<NodeAddress> SlotMap::master_of(uint16_t slot) const {
  const int index = master_index(slot);
  if (index < 0)
    return std::nullopt;
  return masters_[static_cast<size_t>(index)];
}

int SlotMap::assign(uint16_t slot, const NodeAddress& master) {
  if (slot >= k_cluster_slots)
    return -1;
  const int index = index_of(master);
  owner_[slot] = static_cast<int16_t>(index);
  return index;
}

bool SlotMap::covered() const {
  for (const int16_t owner : owner_) {
    if (owner < 0)
      return false;
  }
  return true;
}

int SlotMap::index_of(const NodeAddress& master) {
  for (size_t i = 0; i < masters_.size(); ++i) {
    if (masters_[i] == master)
      return static_cast<int>(i);
  }
  masters_.push_back(master);
  return static_cast<int>(masters_.size() - 1);
}

std::optional<Redirect> parse_redirect(std::string_view error_text) {
  Redirect redirect;
  if (starts_with_word(error_text, "MOVED")) {
    redirect.kind = Redirect::Kind::moved;
    error_text.remove_prefix(5);
  } else if (starts_with_word(error_text, "ASK")) {
    redirect.kind = Redirect::Kind::ask;
    error_text.remove_prefix(3);
  } else {
    return std::nullopt;
  }
  if (!error_text.starts_with(' '))
    return std::nullopt;
  error_text.remove_prefix(1);
  const size_t space = error_text.find(' ');
  if (space == std::string_view::npos)
    return std::nullopt;
  const auto slot = parse_int(error_text.substr(0, space));
  if (!slot || *slot < 0 || *slot >= k_cluster_slots)
    return std::nullopt;
  redirect.slot = static_cast<uint16_t>(*slot);

  const std::string_view address = error_text.substr(space + 1);
  const size_t colon = address.rfind(':');
  if (colon == std::string_view::npos || address.find(' ') != std::string_view::npos)
    return std::nullopt;
  const auto port = parse_int(address.substr(colon + 1));
  if (!port || *port < 1 || *port > 65535)
    return std::nullopt;
  redirect.to.host = std::string(address.substr(0, colon));
  redirect.to.port = *port;
  return redirect;
}

bool is_retry_later(std::string_view error_text) {
  return starts_with_word(error_text, "TRYAGAIN") || starts_with_word(error_text, "CLUSTERDOWN");
}

// The texts redis-server 7.0.15 gives (seen on a two-master cluster):
//   "CROSSSLOT Keys in request don't hash to the same slot"            (declared keys, MSET)
//   "ERR Script attempted to access keys that do not hash to the same slot script: <sha>,
//    on @user_script:2."                   (a script with a #! line touching another slot here)
//   "ERR Script attempted to access a non local key in a cluster node script: <sha>,
//    on @user_script:1."                   (any script touching a key another master serves)
// redis.pcall hands the same words to the script without the " script: ..." tail, and a
// function (FCALL) names "@user_function" instead, so the middle of the text is what is matched.
bool is_crossslot(std::string_view error_text) {
  return starts_with_word(error_text, "CROSSSLOT") ||
         error_text.find("Script attempted to access keys that do not hash to the same slot") !=
             std::string_view::npos ||
         error_text.find("Script attempted to access a non local key in a cluster node") !=
             std::string_view::npos;
}

}  // namespace rlcheck::redis
