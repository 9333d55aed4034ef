#include "app/serve_command.hpp"

#include <iostream>

#include <event2/event.h>

#include <fmt/format.h>

#include "base/exit_code.hpp"
#include "config/strategy_name.hpp"
#include "engine/event_time.hpp"
#include "engine/interrupt.hpp"
#include "runner/run_preflight.hpp"
#include "serve/rate_limit_server.hpp"
#include "targets/redis/redis_session.hpp"

namespace rlcheck::app {
namespace {

constexpr auto k_interrupt_poll = std::chrono::milliseconds(50);

void log_line(const std::string& line) {
  std::cerr << "rlcheck serve: " << line << std::endl;
}

// What the strategy keeps, as the listening line tells it: "limit 10 per 1m", "burst 5, refill
// 5/s", "queue 5, rate 20/s".
std::string kept_text(const redis::StrategyParams& limiter) {
  switch (limiter.kind) {
    case config::Strategy::token_bucket:
    case config::Strategy::gcra:
      return fmt::format("burst {}, refill {}", limiter.burst, config::format_rate(limiter.refill));
    case config::Strategy::leaky_queue:
      return fmt::format("queue {}, rate {}", limiter.burst, config::format_rate(limiter.refill));
    case config::Strategy::concurrency:
      return fmt::format("cap {} in progress, lease {}", limiter.limit,
                         config::format_duration(std::chrono::milliseconds(limiter.window_ms)));
    default:
      return fmt::format("limit {} per {}", limiter.limit,
                         config::format_duration(std::chrono::milliseconds(limiter.window_ms)));
  }
}

}  // namespace

int run_serve(const config::Config& config) {
  runner::raise_descriptors_to_hard_limit();  // one per client connection, however many come
  targets::RedisSession session = targets::open_redis_session(config);
  const config::Strategy strategy = config.redis.strategy;
  const auto script = targets::load_limiter_script(*session.target.control, config, strategy);

  serve::ServerOptions options;
  const size_t colon = config.serve.listen.rfind(':');
  options.address = config.serve.listen.substr(0, colon);
  options.port = std::stoi(config.serve.listen.substr(colon + 1));
  options.identity_header = config.serve.identity_header;
  options.cost_header = config.serve.cost_header;
  options.fail_open = config.serve.fail_open;
  options.timeout = config.load.timeout;
  options.log = log_line;
  redis::StrategyParams& limiter = options.limiter;
  limiter.kind = strategy;
  limiter.limit = config.checks.limit;
  limiter.window_ms = config::to_milliseconds(config.checks.window);
  // leaky-queue's script takes the queue's depth where a bucket's takes its burst.
  limiter.burst = strategy == config::Strategy::leaky_queue
                      ? config.checks.queue.value_or(config.checks.limit)
                      : config.checks.burst.value_or(config.checks.limit);
  limiter.refill =
      config.checks.refill.value_or(config::Rate{config.checks.limit, config.checks.window});
  limiter.instance_id = session.instance_id;
  // concurrency: each admission held --hold, its lease (the script's window) longer by the
  // decision timeout and a second, so only a release lost for good leaves it to expire.
  if (strategy == config::Strategy::concurrency) {
    options.hold_ms = config::to_milliseconds(config.checks.hold.value_or(config::Nanos{0}));
    limiter.window_ms = options.hold_ms + config::to_milliseconds(options.timeout) + 1000;
    limiter.hold_ms = options.hold_ms;
  }
  limiter.script = script ? &*script : nullptr;

  redis::RunTarget redis_target;
  redis_target.endpoint = session.target.endpoint;
  redis_target.seed = session.seed;
  redis_target.slots = session.target.control->slot_map();

  std::unique_ptr<event_base, void (*)(event_base*)> base(event_base_new(), &event_base_free);
  int exit_code = static_cast<int>(base::ExitCode::ok);
  {
    serve::RateLimitServer server(base.get(), redis_target, options);
    if (auto started = server.start(); !started)
      throw base::usage_error("--listen: " + started.error());
    log_line(fmt::format(
        "listening on http://{}:{}/ ({} {}, identity {}, redis {}{})", options.address,
        server.bound_port(), config::strategy_name(strategy), kept_text(limiter),
        options.identity_header.empty() ? "client address" : "header " + options.identity_header,
        session.target.endpoint.display(),
        config.serve.fail_open ? ", fail-open" : ", fail-closed"));
    event* poll = event_new(
        base.get(), -1, EV_PERSIST,
        [](int, short, void* arg) {
          if (engine::interrupted())
            event_base_loopbreak(static_cast<event_base*>(arg));
        },
        base.get());
    const timeval every = engine::to_timeval(k_interrupt_poll);
    event_add(poll, &every);
    event_base_dispatch(base.get());
    event_free(poll);
    log_line("stopped");
  }
  return exit_code;
}

}  // namespace rlcheck::app
