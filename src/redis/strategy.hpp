#pragma once
// A limiter strategy is the real client-side code a team ships, written as a state machine
// over replies: one request may take several commands (naive: GET, INCR, EXPIRE). Strategies
// are stateless and shared across threads; each request's state lives in RequestState.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <hiredis/hiredis.h>

#include "config/config.hpp"
#include "engine/client_rng.hpp"
#include "engine/record_log.hpp"
#include "engine/request_clock.hpp"
#include "engine/request_record.hpp"
#include "redis/command_buffer.hpp"

namespace rlcheck::redis {

// A Lua limiter loaded into the server's script cache.
struct LoadedScript {
  std::string name;    // "sliding_window.lua", or the --script path, for messages
  std::string source;  // sent again with EVAL when the cache lost it (NOSCRIPT)
  std::string sha;     // from SCRIPT LOAD
};

// What a strategy may do while deciding one request, on the connection that carries it.
// Replies come back to Strategy::on_reply in the order the commands were sent.
class DecisionIo {
 public:
  virtual ~DecisionIo() = default;
  virtual void send(const std::vector<std::string_view>& argv) = 0;
  // EVALSHA script <key count> KEYS... ARGV...: `head` (eval_head("EVALSHA", script.sha, ...))
  // is written, then the strategy writes the keys and the args straight into the buffer
  // returned (CommandBuffer::add; append_raw for arguments it keeps in RESP already), and calls
  // end_eval(). `first_key` places the request in a cluster. On NOSCRIPT the client sends EVAL
  // with the source and the same arguments, and the strategy only sees the final reply.
  virtual CommandBuffer& begin_eval(const LoadedScript& script, const EvalHead& head,
                                    std::string_view first_key) = 0;
  virtual void end_eval() = 0;
};

struct RequestState {
  uint64_t seq = 0;                  // request number within the run
  uint32_t identity = 0;             // the identity it speaks for (< identities)
  int32_t cost = 1;                  // its units (--cost), for {cost}
  int step = 0;                      // the strategy's position in its command sequence
  int64_t bucket = 0;                // fixed windows: the window index
  engine::RequestClock clock;        // the time the request reads ({now_ms}, a window index)
  int64_t now_ms = 0;                // that time, where a strategy read it
  engine::ClientRng* rng = nullptr;  // the client's generator, for {uuid}
  std::string key;                   // the identity's key, when there are several identities
  // A strategy's bytes for this client's last identity (the script strategy: its keys and the
  // constant arguments after them, in RESP), valid while `cached_for` and `cached_identity`
  // are the strategy's (a number no other strategy of the process has) and the request's.
  std::string cached;
  uint64_t cached_for = 0;
  uint32_t cached_identity = 0;
};

// The limiter key of each identity: the run's key alone, or suffixed ":<id>" when the load is
// spread over several identities (--identities). With `hash_tag_each`, each identity's key is
// one Redis Cluster hash tag ({rlcheck:ab12:lua:1:7}), so an identity's keys (--script-keys)
// share a slot while identities spread over the masters.
class IdentityKeys {
 public:
  IdentityKeys(std::string key, int64_t identities, bool hash_tag_each = false)
      : key_(std::move(key)), identities_(identities), tagged_(hash_tag_each) {
    if (tagged_ && identities_ <= 1)
      key_ = "{" + key_ + "}";
  }
  // The key request `state` counts against: its identity's (built into state.key only when
  // needed).
  const std::string& of(RequestState& state) const;
  // The key of identity `id`.
  std::string of_identity(uint64_t id) const;
  // Every identity's key.
  std::vector<std::string> all() const;

 private:
  // Identity `id`'s key (of several) into `out`, reusing its capacity.
  void identity_into(std::string& out, uint64_t id) const;

  std::string key_;
  int64_t identities_;
  bool tagged_;
};

// The KEYS a script is given for the limiter key `key` (--script-keys): the key itself when
// `count` is 1, else <key>:0 ... <key>:<count-1>, which share one Redis Cluster hash tag so a
// cluster can run the script: the key's own {tag} when it has one, else the whole key in braces
// ({rlcheck:ab12:script:1}:0).
void script_key_into(std::string& out, std::string_view key, int64_t count, int64_t index);
std::vector<std::string> script_keys(std::string_view key, int64_t count);

class Strategy {
 public:
  virtual ~Strategy() = default;
  // Sends the first command(s) of request state.seq.
  virtual void begin(RequestState& state, DecisionIo& io) const = 0;
  // Takes the next non-error reply; returns the decision once made, nullopt while more
  // replies are awaited. Error replies never get here: they end the request as errors.
  virtual std::optional<engine::Decision> on_reply(RequestState& state, const redisReply& reply,
                                                   DecisionIo& io) const = 0;
  // Every key this run may have written, for the key-ttl check and for clean-up.
  virtual std::vector<std::string> keys_touched(engine::RecordView records) const = 0;
  // Whether a server error reply names a script (for messages).
  virtual const LoadedScript* script() const { return nullptr; }
};

struct StrategyParams {
  config::Strategy kind = config::Strategy::sliding_window;
  std::string key;  // the limiter key of this run (of identity 0..K-1: key:<id> when K > 1)
  int64_t identities = 1;
  int64_t group_size = 0;  // --group-size, for {group}
  bool weighted = false;   // --cost: the built-in strategies that take a cost are given it
  int64_t limit = 10;
  int64_t window_ms = 60'000;
  int64_t burst = 10;       // token-bucket / gcra capacity
  int64_t hold_ms = 0;      // concurrency (serve): how long each admission is held; 0: unknown
  config::Rate refill;      // token-bucket / gcra refill
  int run = 1;              // 1-based run number, for {run}
  std::string instance_id;  // hex id of this invocation (no braces)
  const LoadedScript* script = nullptr;    // Lua strategies and --script
  std::vector<std::string> arg_templates;  // --script arguments with placeholders
  config::ReplyFormat reply = config::ReplyFormat::contract;  // --script's reply shape
  int64_t script_keys = 1;              // --script's KEYS per request (script_keys())
  bool hash_tag_each_identity = false;  // a cluster and generated keys: see IdentityKeys
  // Built-in scripts: client passes {now_ms} as the last ARGV, so the script reads the
  // client's (skewed) clock instead of Redis TIME.
  config::TimeSource time_source = config::TimeSource::redis;
};

std::unique_ptr<Strategy> make_strategy(const StrategyParams& params);

// Decision helpers shared by the strategies.
engine::Decision allowed_decision();
engine::Decision denied_decision(std::optional<int64_t> retry_ms, bool hint_expected);
engine::Decision bad_reply_decision(std::string message);

}  // namespace rlcheck::redis
