#include "serve/semaphore_release.hpp"

namespace rlcheck::serve {
namespace {

class SemaphoreRelease final : public redis::Strategy {
 public:
  SemaphoreRelease(std::string key, std::string member)
      : key_(std::move(key)), member_(std::move(member)) {}

  void begin(redis::RequestState&, redis::DecisionIo& io) const override {
    io.send({"ZREM", key_, member_});
  }

  std::optional<engine::Decision> on_reply(redis::RequestState&, const redisReply&,
                                           redis::DecisionIo&) const override {
    return redis::allowed_decision();
  }

  std::vector<std::string> keys_touched(engine::RecordView) const override { return {key_}; }

 private:
  std::string key_;
  std::string member_;
};

}  // namespace

std::unique_ptr<redis::Strategy> make_semaphore_release(std::string key, std::string member) {
  return std::make_unique<SemaphoreRelease>(std::move(key), std::move(member));
}

}  // namespace rlcheck::serve
