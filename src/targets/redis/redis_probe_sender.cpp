#include "targets/redis/redis_probe_sender.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "targets/redis/redis_target.hpp"

namespace rlcheck::targets {
namespace {

using probe::ProbeSender;
using runner::StateChoice;
using runner::Target;

class RedisProbeSender final : public ProbeSender {
 public:
  explicit RedisProbeSender(const config::Config& config)
      : ProbeSender(config),
        config_(config),
        session_(open_redis_session(config)),
        limiter_(session_, config, config.redis.strategy) {
    limiter_.prepare_test();
  }
  // Only the keys this probe created, whatever happened.
  ~RedisProbeSender() override { (void)limiter_.delete_keys(keys_); }
  std::string describe() const override {
    return fmt::format("{} on {}", limiter_.records_name(), limiter_.address());
  }
  std::string fresh_identity_source() const override { return "a key of its own"; }
  // A built-in strategy is sent {cost} itself; a --script where its --arg values say.
  std::string where_written(std::string_view placeholder) const override {
    const config::RedisConfig& redis = config_.redis;
    if (redis.strategy != config::Strategy::script)
      return placeholder == "{cost}" ? "the strategy's arguments" : "";
    const auto& args = redis.script_args;
    return std::find(args.begin(), args.end(), placeholder) != args.end() ? "--arg" : "";
  }

 protected:
  // Identity i is a fresh key under rlcheck:<id>:probe:.
  StateChoice state_of(int identity) const override {
    return {identity,
            session_.seed + static_cast<uint64_t>(identity) * 7919 +
                static_cast<uint64_t>(requests_sent()),
            "probe", true};
  }
  void sent(const StateChoice& state, engine::RecordView records) override {
    for (std::string& key : limiter_.keys_touched(state, records)) {
      if (std::find(keys_.begin(), keys_.end(), key) == keys_.end())
        keys_.push_back(std::move(key));
    }
  }
  Target& target() override { return limiter_; }

 private:
  const config::Config& config_;
  RedisSession session_;
  RedisTarget limiter_;
  std::vector<std::string> keys_;
};

}  // namespace

std::unique_ptr<ProbeSender> make_redis_probe_sender(const config::Config& config) {
  return std::make_unique<RedisProbeSender>(config);
}

}  // namespace rlcheck::targets
