#include "redis/strategies/script_strategy.hpp"

#include <algorithm>
#include <atomic>

#include <fmt/format.h>

#include "config/strategy_name.hpp"
#include "engine/placeholder_template.hpp"
#include "redis/script_reply.hpp"

namespace rlcheck::redis {
namespace {

using config::Strategy;
using engine::PlaceholderContext;
using engine::PlaceholderTemplate;

// The ARGV of each built-in script, in the order its header comment documents, without the
// optional trailing now_ms.
std::vector<std::string> builtin_arg_templates_of(const StrategyParams& p) {
  const auto period_ms = std::chrono::duration_cast<std::chrono::milliseconds>(p.refill.period);
  switch (p.kind) {
    case Strategy::sliding_window:
      // A member unique per request, even across invocations sharing an explicit --key.
      return {"{limit}", "{window_ms}", fmt::format("{}:{{run}}:{{seq}}", p.instance_id)};
    case Strategy::sliding_counter:
    case Strategy::fixed_first_hit:
      return {"{limit}", "{window_ms}"};
    case Strategy::concurrency: {
      // The lease travels as the window (serve_command); the member is unique per request;
      // the hold, when known, places the hint at the earliest holder's release.
      std::vector<std::string> args{"{limit}", "{window_ms}",
                                    concurrency_member(p.instance_id, "{run}", "{seq}")};
      if (p.hold_ms > 0)
        args.push_back(std::to_string(p.hold_ms));
      return args;
    }
    case Strategy::leaky_queue:  // the queue travels as the burst (serve_command)
    case Strategy::token_bucket:
    case Strategy::gcra:
      return {std::to_string(p.burst), std::to_string(p.refill.tokens),
              std::to_string(std::max<int64_t>(1, period_ms.count()))};
    default:
      return p.arg_templates.empty() ? std::vector<std::string>{"{limit}", "{window_ms}", "{uuid}"}
                                     : p.arg_templates;
  }
}

}  // namespace

std::string concurrency_member(std::string_view instance_id, std::string_view run,
                               std::string_view seq) {
  return fmt::format("{}:{}:{}", instance_id, run, seq);
}

std::vector<std::string> builtin_arg_templates(const StrategyParams& p) {
  std::vector<std::string> templates = builtin_arg_templates_of(p);
  const bool client_time =
      config::time_source_matters(p.kind) && p.time_source == config::TimeSource::client;
  if (client_time)
    templates.emplace_back("{now_ms}");
  // --cost: the last argument of the scripts that take one, after the caller's time where they
  // read one ("-" when they read Redis's: not a number, read as absent).
  if (p.weighted && config::strategy_takes_cost(p.kind)) {
    if (!client_time && config::time_source_matters(p.kind))
      templates.emplace_back("-");
    templates.emplace_back("{cost}");
  }
  return templates;
}

namespace {

// The ARGV of a request: runs of arguments every request repeats, written once in RESP, and
// the templates each request expands.
struct ArgPiece {
  std::string resp;   // constant arguments, in RESP
  size_t expand = 0;  // else: the template to expand
  bool constant = false;
};

std::vector<ArgPiece> arg_pieces(const std::vector<PlaceholderTemplate>& templates,
                                 const PlaceholderContext& fixed) {
  std::vector<ArgPiece> pieces;
  for (size_t i = 0; i < templates.size(); ++i) {
    if (!templates[i].is_constant()) {
      pieces.push_back({{}, i, false});
      continue;
    }
    CommandBuffer resp;
    resp.add(templates[i].expand(fixed));
    if (pieces.empty() || !pieces.back().constant)
      pieces.push_back({{}, 0, true});
    pieces.back().resp += resp.text();
  }
  return pieces;
}

uint64_t next_cache_id() {
  static std::atomic<uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

// Adds `text` expanded: in place when it is short and plain (expand_to), else via `scratch`.
void add_expanded(CommandBuffer& out, const PlaceholderTemplate& text,
                  const PlaceholderContext& context, std::string& scratch) {
  constexpr size_t k_most_in_place = 128;
  const auto expand = [&](char* at, size_t room) { return text.expand_to(context, at, room); };
  if (out.add_in_place(k_most_in_place, expand))
    return;
  text.expand_into(context, scratch);
  out.add(scratch);
}

class ScriptStrategy final : public redis::Strategy {
 public:
  ScriptStrategy(const StrategyParams& params, std::vector<PlaceholderTemplate> templates)
      : keys_(params.key, params.identities, params.hash_tag_each_identity),
        script_(*params.script),
        templates_(std::move(templates)),
        reply_(params.reply),
        queue_(params.kind == config::Strategy::leaky_queue),
        limit_(params.limit),
        key_count_(std::max<int64_t>(1, params.script_keys)),
        context_{params.limit, params.window_ms, params.run, 0, 0, nullptr, {}} {
    context_.group_size = params.group_size;
    for (PlaceholderTemplate& text : templates_)
      text = text.bound(context_);
    pieces_ = arg_pieces(templates_, context_);
    first_after_keys_ = !pieces_.empty() && pieces_.front().constant ? 1 : 0;
    head_ = eval_head("EVALSHA", script_.sha, static_cast<size_t>(key_count_), templates_.size());
  }

  void begin(RequestState& state, DecisionIo& io) const override {
    PlaceholderContext context = context_;
    context.seq = state.seq;
    context.identity = state.identity;
    context.cost = state.cost;
    context.rng = state.rng;
    context.clock = &state.clock;
    // One per thread: the strategy is shared by every connection of the run.
    thread_local std::string scratch;
    const std::string& key = keys_.of(state);
    CommandBuffer& out = io.begin_eval(script_, head_, key);
    if (state.cached_for != cache_id_ || state.cached_identity != state.identity)
      cache_keys(state, key);
    out.append_raw(state.cached);
    for (size_t i = first_after_keys_; i < pieces_.size(); ++i) {
      const ArgPiece& piece = pieces_[i];
      if (piece.constant)
        out.append_raw(piece.resp);
      else
        add_expanded(out, templates_[piece.expand], context, scratch);
    }
    io.end_eval();
  }

  std::optional<engine::Decision> on_reply(RequestState&, const redisReply& reply,
                                           DecisionIo&) const override {
    // Built in place and returned by name: the hot path moves no Decision.
    std::optional<engine::Decision> decision(std::in_place);
    if (auto read = read_decision(reply_, limit_, reply, *decision); !read) {
      *decision = bad_reply_decision(fmt::format("script {} {}; expected {}{}", script_.name,
                                                 read.error(), expected_reply_shape(reply_),
                                                 reply_that_reads(reply_, limit_, reply)));
      return decision;
    }
    // cell's hints count whole seconds: retry-after-accuracy judges them as such.
    decision->hint_resolution_ms = static_cast<int32_t>(hint_resolution_ms(reply_));
    // leaky-queue admits with the wait before the request leaves (lua/leaky_queue.lua).
    if (queue_ && decision->outcome == engine::Outcome::allowed && reply.elements == 3 &&
        reply.element[2]->type == REDIS_REPLY_INTEGER) {
      decision->hold_ms = std::max<int64_t>(0, reply.element[2]->integer);
    }
    return decision;
  }

  std::vector<std::string> keys_touched(engine::RecordView) const override {
    std::vector<std::string> keys;
    for (const std::string& key : keys_.all()) {
      for (std::string& script_key : script_keys(key, key_count_))
        keys.push_back(std::move(script_key));
    }
    return keys;
  }

  const LoadedScript* script() const override { return &script_; }

 private:
  // The keys of `key`'s identity in RESP, then the constant arguments that follow them: what
  // a client's requests for one identity all begin with after the head.
  void cache_keys(RequestState& state, std::string_view key) const {
    CommandBuffer resp;
    if (key_count_ == 1) {
      resp.add(key);
    } else {
      std::string script_key;
      for (int64_t i = 0; i < key_count_; ++i) {
        script_key_into(script_key, key, key_count_, i);
        resp.add(script_key);
      }
    }
    if (first_after_keys_ > 0)
      resp.append_raw(pieces_.front().resp);
    state.cached.assign(resp.text());
    state.cached_for = cache_id_;
    state.cached_identity = state.identity;
  }

  IdentityKeys keys_;
  const LoadedScript& script_;
  std::vector<PlaceholderTemplate> templates_;
  std::vector<ArgPiece> pieces_;
  size_t first_after_keys_ = 0;  // the pieces after those cache_keys writes
  // What RequestState::cached_for names this strategy by: unique in the process, not reused.
  uint64_t cache_id_ = next_cache_id();
  EvalHead head_;
  config::ReplyFormat reply_;
  bool queue_;         // leaky-queue: an admission's third element is its wait
  int64_t limit_;      // counter replies are allowed up to it
  int64_t key_count_;  // KEYS per request
  PlaceholderContext context_;
};

}  // namespace

std::unique_ptr<redis::Strategy> make_script_strategy(const StrategyParams& params) {
  std::vector<PlaceholderTemplate> templates;
  for (const std::string& text : builtin_arg_templates(params)) {
    auto parsed = PlaceholderTemplate::parse(text);
    // Built-in templates are fixed and --arg values were validated by the command line.
    if (parsed)
      templates.push_back(std::move(*parsed));
  }
  return std::make_unique<ScriptStrategy>(params, std::move(templates));
}

}  // namespace rlcheck::redis
