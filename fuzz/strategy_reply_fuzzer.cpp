// Fuzzes the strategies that read plain-command replies themselves (naive GET then INCR,
// INCR + EXPIRE, fixed window): replies read from the bytes are handed to the strategy's state
// machine, one request after another, as redis::AsyncClient does.
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "redis/strategy.hpp"
#include "resp_input.hpp"

using namespace rlcheck;

namespace {

class DiscardingIo final : public redis::DecisionIo {
 public:
  void send(const std::vector<std::string_view>&) override {}
  redis::CommandBuffer& begin_eval(const redis::LoadedScript&, const redis::EvalHead&,
                                   std::string_view) override {
    written_.clear();
    return written_;
  }
  void end_eval() override {}

 private:
  redis::CommandBuffer written_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0)
    return 0;
  constexpr config::Strategy k_kinds[] = {config::Strategy::naive, config::Strategy::incr_expire,
                                          config::Strategy::fixed_window};
  redis::StrategyParams params;
  params.kind = k_kinds[data[0] % 3];
  params.key = "rlcheck:fuzz";
  params.identities = data[0] % 2 + 1;
  params.instance_id = "ab12";
  const auto strategy = redis::make_strategy(params);

  engine::ClientRng rng(1);
  DiscardingIo io;
  redis::RequestState state;
  state.rng = &rng;
  state.now_ms = 1'700'000'000'000;
  strategy->begin(state, io);
  fuzz::for_each_reply(data + 1, size - 1, [&](redis::ReplyPtr reply) {
    if (reply->type == REDIS_REPLY_ERROR)
      return;  // error replies end the request before the strategy sees them
    if (strategy->on_reply(state, *reply, io)) {
      state = redis::RequestState{.seq = state.seq + 1, .now_ms = state.now_ms, .rng = &rng};
      strategy->begin(state, io);
    }
  });
  return 0;
}
