// --progress-interval, --metrics-listen and --metrics-linger on the command line.
#include <doctest/doctest.h>

#include "command_line_support.hpp"

using namespace std::chrono_literals;
using rlcheck::config::ListenAddress;
using rlcheck::testing::mentions;
using rlcheck::testing::parse_arguments;
using rlcheck::testing::usage_error;

TEST_CASE("observe flags: unset by default, given values reach the config") {
  const auto defaults = parse_arguments({"redis"}).config.observe;
  CHECK_FALSE(defaults.progress_interval);
  CHECK_FALSE(defaults.metrics_listen);
  CHECK(defaults.metrics_linger == 0s);

  const auto given = parse_arguments({"http", "http://127.0.0.1:1/", "--progress-interval", "30s",
                                      "--metrics-listen", "[::1]:9464", "--metrics-linger", "1m"})
                         .config.observe;
  CHECK(given.progress_interval == 30s);
  CHECK(given.metrics_listen == ListenAddress{"::1", 9464});
  CHECK(given.metrics_linger == 1min);
  CHECK(parse_arguments({"compare", "--progress-interval", "0"}).config.observe.progress_interval ==
        0s);
}

TEST_CASE("observe flags: refusals name their flag") {
  CHECK(mentions(usage_error({"redis", "--progress-interval", "10"}), "--progress-interval:"));
  CHECK(mentions(usage_error({"redis", "--progress-interval", "-1s"}), "--progress-interval:"));
  CHECK(mentions(usage_error({"redis", "--metrics-listen", "9464"}),
                 "--metrics-listen: '9464' is not HOST:PORT"));
  CHECK(
      mentions(usage_error({"redis", "--metrics-listen", "127.0.0.1:70000"}), "--metrics-listen:"));
  CHECK(mentions(usage_error({"redis", "--metrics-linger", "5s"}),
                 "--metrics-linger: needs --metrics-listen"));
  CHECK(mentions(
      usage_error({"redis", "--hook", "--metrics-listen", "127.0.0.1:0", "--metrics-linger", "5s"}),
      "--metrics-linger: cannot be combined with --hook"));
  CHECK(mentions(
      usage_error({"redis", "--metrics-listen", "127.0.0.1:0", "--metrics-linger", "soon"}),
      "--metrics-linger:"));
}
