// The script cache is lost on restart and failover: a SCRIPT FLUSH in the middle of a run must
// not change its outcome. The flush is made at an exact point (after the 5th reply) through
// the engine's observer, so the test never depends on timing.

#include <doctest/doctest.h>

#include <atomic>

#include "cli/command_line.hpp"
#include "runner/run_loop.hpp"
#include "support/test_redis.hpp"
#include "targets/redis/redis_target.hpp"

using namespace rlcheck;

namespace {

class FlushAfter final : public engine::RunObserver {
 public:
  explicit FlushAfter(uint64_t replies) : replies_(replies) {}

  void on_record(const engine::RequestRecord&) override {
    if (++seen_ != replies_)
      return;
    auto client = testing::TestRedis::shared().connect();
    auto reply = client.call({"SCRIPT", "FLUSH"});
    flushed_ = reply && (*reply)->type == REDIS_REPLY_STATUS;
  }
  bool flushed() const { return flushed_; }

 private:
  uint64_t replies_;
  std::atomic<uint64_t> seen_{0};
  bool flushed_ = false;
};

config::Config config_for(const char* strategy) {
  const std::string url = testing::TestRedis::shared().tcp_url();
  const char* argv[] = {"rlcheck", "redis", "--redis", url.c_str(), "--strategy", strategy,
                        "-n",      "200",   "-p",      "50",        "-r",         "1"};
  return cli::parse_command_line(12, argv).config;
}

}  // namespace

TEST_CASE("SCRIPT FLUSH in the middle of a run: the script is loaded again, same outcome") {
  for (const char* strategy : {"sliding-window", "token-bucket", "gcra"}) {
    const std::string strategy_name = strategy;
    CAPTURE(strategy_name);
    const config::Config config = config_for(strategy);
    targets::RedisSession session = targets::open_redis_session(config);
    FlushAfter flush(5);
    targets::RedisTarget target(session, config, config.redis.strategy);
    const report::Report report = runner::run_test(target, config, {&flush});
    REQUIRE(flush.flushed());
    CHECK(report.script_reloads >= 1);
    REQUIRE(report.runs.size() == 1);
    CHECK(report.runs[0].allowed == 10);
    CHECK(report.runs[0].denied == 190);
    CHECK(report.runs[0].errors == 0);
    CHECK(report.verdict == checks::Verdict::pass);
  }
}
