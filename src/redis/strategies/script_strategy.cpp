#include "redis/strategies/script_strategy.hpp"

#include <algorithm>

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

std::vector<std::string> builtin_arg_templates(const StrategyParams& p) {
  std::vector<std::string> templates = builtin_arg_templates_of(p);
  if (config::time_source_matters(p.kind) && p.time_source == config::TimeSource::client)
    templates.emplace_back("{now_ms}");
  return templates;
}

namespace {

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
    for (PlaceholderTemplate& text : templates_)
      text = text.bound(context_);
  }

  void begin(RequestState& state, DecisionIo& io) const override {
    PlaceholderContext context = context_;
    context.seq = state.seq;
    context.identity = state.identity;
    context.rng = state.rng;
    context.clock = state.clock;
    std::vector<std::string>& args = io.eval_args();
    args.resize(templates_.size());
    for (size_t i = 0; i < templates_.size(); ++i)
      templates_[i].expand_into(context, args[i]);
    const std::string& key = keys_.of(state);
    std::vector<std::string>& keys = io.eval_keys();
    keys.resize(static_cast<size_t>(key_count_));
    for (int64_t i = 0; i < key_count_; ++i)
      script_key_into(keys[static_cast<size_t>(i)], key, key_count_, i);
    io.eval(script_);
  }

  std::optional<engine::Decision> on_reply(RequestState&, const redisReply& reply,
                                           DecisionIo&) const override {
    auto decision = decision_from_reply(reply_, limit_, reply);
    if (!decision) {
      return bad_reply_decision(fmt::format("script {} {}; expected {}", script_.name,
                                            decision.error(), expected_reply_shape(reply_)));
    }
    // cell's hints count whole seconds: retry-after-accuracy judges them as such.
    decision->hint_resolution_ms = static_cast<int32_t>(hint_resolution_ms(reply_));
    // leaky-queue admits with the wait before the request leaves (lua/leaky_queue.lua).
    if (queue_ && decision->outcome == engine::Outcome::allowed && reply.elements == 3 &&
        reply.element[2]->type == REDIS_REPLY_INTEGER) {
      decision->hold_ms = std::max<int64_t>(0, reply.element[2]->integer);
    }
    return std::move(*decision);
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
  IdentityKeys keys_;
  const LoadedScript& script_;
  std::vector<PlaceholderTemplate> templates_;
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
