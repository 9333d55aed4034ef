#include <doctest/doctest.h>

#include <optional>
#include <vector>

#include "judging/advertised_params.hpp"

using rlcheck::engine::Outcome;
using rlcheck::engine::RequestRecord;
using rlcheck::engine::RunResult;
using rlcheck::judging::AdvertisedParams;
using rlcheck::judging::read_advertised_params;

namespace {

RequestRecord response(Outcome outcome, std::optional<int64_t> limit,
                       std::optional<int64_t> reset_s, std::optional<int64_t> window_s) {
  RequestRecord record;
  record.outcome = outcome;
  record.status = outcome == Outcome::allowed ? 200 : 429;
  record.advertised_limit = limit;
  record.advertised_reset_s = reset_s;
  record.advertised_window_s = window_s;
  return record;
}

RunResult run_of(std::vector<RequestRecord> records) {
  RunResult result;
  result.records = std::move(records);
  return result;
}

}  // namespace

TEST_CASE("advertised window: a policy's w= wins over any reset") {
  const auto params = read_advertised_params({run_of({
      response(Outcome::allowed, 5, 60, 10),
      response(Outcome::allowed, 5, std::nullopt, 10),
      response(Outcome::denied, 5, 9, 10),
  })});
  CHECK(params.limit == 5);
  CHECK(params.window_s == 10);
  CHECK(params.window_basis == AdvertisedParams::WindowBasis::policy);
}

TEST_CASE("advertised window: the w= most responses carry, the smaller on a tie") {
  const auto majority =
      read_advertised_params({run_of({
                                  response(Outcome::allowed, 5, std::nullopt, 60),
                                  response(Outcome::allowed, 5, std::nullopt, 10),
                              }),
                              run_of({response(Outcome::allowed, 5, std::nullopt, 10)})});
  CHECK(majority.window_s == 10);
  const auto tie = read_advertised_params({run_of({
      response(Outcome::allowed, 5, std::nullopt, 60),
      response(Outcome::allowed, 5, std::nullopt, 30),
  })});
  CHECK(tie.window_s == 30);
}

TEST_CASE("advertised window: without w=, the largest reset of an allowed response") {
  // A fresh window's first admission says the whole window; later ones say what is left.
  const auto params =
      read_advertised_params({run_of({
                                  response(Outcome::allowed, 5, 30, std::nullopt),
                                  response(Outcome::allowed, 5, 29, std::nullopt),
                                  response(Outcome::allowed, 5, 28, std::nullopt),
                              }),
                              run_of({response(Outcome::allowed, 5, 27, std::nullopt)})});
  CHECK(params.window_s == 30);
  CHECK(params.window_basis == AdvertisedParams::WindowBasis::reset);
}

TEST_CASE("advertised window: a denial's reset is a wait, never the window") {
  const auto params = read_advertised_params({run_of({
      response(Outcome::allowed, 5, 20, std::nullopt),
      response(Outcome::denied, 5, 45, std::nullopt),
  })});
  CHECK(params.window_s == 20);
  const auto denials_only = read_advertised_params({run_of({
      response(Outcome::allowed, 5, std::nullopt, std::nullopt),
      response(Outcome::denied, 5, 45, std::nullopt),
  })});
  CHECK_FALSE(denials_only.window_s.has_value());
  CHECK(denials_only.window_basis == AdvertisedParams::WindowBasis::none);
}

TEST_CASE("advertised window: a reset of 0 tells no window") {
  const auto params = read_advertised_params({run_of({
      response(Outcome::allowed, 5, 0, std::nullopt),
      response(Outcome::error, std::nullopt, 50, std::nullopt),
  })});
  CHECK_FALSE(params.window_s.has_value());
}

TEST_CASE("advertised params: nothing advertised, nothing known") {
  const auto params = read_advertised_params({run_of({
      response(Outcome::allowed, std::nullopt, std::nullopt, std::nullopt),
  })});
  CHECK_FALSE(params.limit.has_value());
  CHECK_FALSE(params.window_s.has_value());
  CHECK(read_advertised_params({}).window_basis == AdvertisedParams::WindowBasis::none);
}

TEST_CASE("advertised window: a timestamp reset read against Date is the window or one more") {
  // Flask-Limiter, 2 s window: the reset is sent as the second after the window's end, the Date
  // truncated: read as 3 on the first admission.
  RequestRecord first = response(Outcome::allowed, 5, 3, std::nullopt);
  first.reset_from_date = true;
  RequestRecord later = response(Outcome::allowed, 5, 2, std::nullopt);
  later.reset_from_date = true;
  const auto params = read_advertised_params({run_of({first, later})});
  CHECK(params.window_s == 3);
  CHECK(params.window_basis == AdvertisedParams::WindowBasis::reset);
  CHECK(params.window_readings_s == std::vector<int64_t>{2, 3});

  // A 1 s reading leaves no window below it.
  RequestRecord short_window = response(Outcome::allowed, 5, 1, std::nullopt);
  short_window.reset_from_date = true;
  CHECK(read_advertised_params({run_of({short_window})}).window_readings_s ==
        std::vector<int64_t>{1});

  // A delta reset (RateLimit-Reset, or a small X-RateLimit-Reset) is read as is.
  const auto delta =
      read_advertised_params({run_of({response(Outcome::allowed, 5, 3, std::nullopt)})});
  CHECK(delta.window_s == 3);
  CHECK(delta.window_readings_s.empty());
}
