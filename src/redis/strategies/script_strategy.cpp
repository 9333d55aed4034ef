#include "redis/strategies/script_strategy.hpp"

#include <fmt/format.h>

#include "engine/placeholder_template.hpp"
#include "redis/script_reply.hpp"

namespace rlcheck::redis {
namespace {

using config::Strategy;
using engine::PlaceholderContext;
using engine::PlaceholderTemplate;

// The ARGV of each built-in script, in the order its header comment documents.
std::vector<std::string> builtin_arg_templates(const StrategyParams& p) {
  const auto period_ms = std::chrono::duration_cast<std::chrono::milliseconds>(p.refill.period);
  switch (p.kind) {
    case Strategy::sliding_window:
      // A member unique per request, even across invocations sharing an explicit --key.
      return {"{limit}", "{window_ms}", fmt::format("{}:{{run}}:{{seq}}", p.instance_id)};
    case Strategy::token_bucket:
    case Strategy::gcra:
      return {std::to_string(p.burst), std::to_string(p.refill.tokens),
              std::to_string(std::max<int64_t>(1, period_ms.count()))};
    default:
      return p.arg_templates.empty() ? std::vector<std::string>{"{limit}", "{window_ms}", "{uuid}"}
                                     : p.arg_templates;
  }
}

class ScriptStrategy final : public redis::Strategy {
 public:
  ScriptStrategy(const StrategyParams& params, std::vector<PlaceholderTemplate> templates)
      : keys_(params.key, params.identities),
        script_(*params.script),
        templates_(std::move(templates)),
        context_{params.limit, params.window_ms, params.run, 0, params.identities, nullptr} {}

  void begin(RequestState& state, DecisionIo& io) const override {
    PlaceholderContext context = context_;
    context.seq = state.seq;
    context.rng = state.rng;
    std::vector<std::string>& args = io.eval_args();
    args.resize(templates_.size());
    for (size_t i = 0; i < templates_.size(); ++i)
      templates_[i].expand_into(context, args[i]);
    io.eval(script_, keys_.of(state));
  }

  std::optional<engine::Decision> on_reply(RequestState&, const redisReply& reply,
                                           DecisionIo&) const override {
    auto decision = decision_from_script_reply(reply);
    if (!decision) {
      return bad_reply_decision(
          fmt::format("script {} {}; expected 1, 0 or {{allowed, remaining, retry_ms}}",
                      script_.name, decision.error()));
    }
    return *decision;
  }

  std::vector<std::string> keys_touched(const std::vector<engine::RequestRecord>&) const override {
    return keys_.all();
  }

  const LoadedScript* script() const override { return &script_; }

 private:
  IdentityKeys keys_;
  const LoadedScript& script_;
  std::vector<PlaceholderTemplate> templates_;
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
