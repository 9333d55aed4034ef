#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "checks/key_ttl.hpp"

using rlcheck::checks::check_key_ttl;
using rlcheck::checks::CheckParams;
using rlcheck::checks::key_ttl_tolerance_ms;
using rlcheck::checks::KeyTtl;
using rlcheck::checks::RunStats;
using rlcheck::checks::Status;
using rlcheck::checks::ttl_text;

namespace {

bool mentions(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

RunStats run_with(int number, std::vector<KeyTtl> ttls) {
  RunStats run;
  run.run = number;
  run.key_ttls = std::move(ttls);
  for (const KeyTtl& key : run.key_ttls) {
    if (key.ttl_ms == -1)
      run.keys_without_ttl.push_back(key.key);
  }
  return run;
}

// A run that denied request 7, 2.5 s in, while the window surely had room.
RunStats locked_out(RunStats run) {
  rlcheck::checks::LockOut lock_out;
  lock_out.seq = 7;
  lock_out.sent_ns = 2'500'000'000;
  lock_out.used = 3;
  lock_out.capacity = 10;
  run.lockouts.judged = 1;
  run.lockouts.count = 1;
  run.lockouts.worst = lock_out;
  return run;
}

CheckParams window_of(int64_t ms) {
  CheckParams params;
  params.contract = "sliding";
  params.window_ms = ms;
  params.key_ttl_needed_ms = ms;
  return params;
}

}  // namespace

TEST_CASE("key-ttl fails a TTL given in the wrong unit when the run shows the lock-out") {
  // EXPIRE key 1000 for a 1 s window: seconds where milliseconds were meant.
  const RunStats sane = run_with(1, {{"rlcheck:ab:script:1", 998}});
  const RunStats wrong_unit = locked_out(run_with(3, {{"rlcheck:ab:script:3", 60'000'000 - 20}}));
  const auto result = check_key_ttl({sane, wrong_unit}, window_of(1000));
  CHECK(result.status == Status::fail);
  CHECK(mentions(result.detail, "run 3 key rlcheck:ab:script:3 has a TTL of 16h 40m"));
  CHECK(mentions(result.detail, "the 1s window needs at most 2s"));
  CHECK(mentions(result.detail, "run 3 was denied request 7 2.5s into the run"));
  CHECK(check_key_ttl({sane}, window_of(1000)).status == Status::pass);
}

TEST_CASE("a TTL longer than needed with no lock-out seen is a warning, never a fail") {
  // A sliding log that sets PEXPIRE key window*2: it evicts by score, nobody is locked out.
  const auto result = check_key_ttl({run_with(1, {{"log", 119'990}})}, window_of(60'000));
  CHECK(result.status == Status::pass);
  CHECK(result.warning);
  CHECK(mentions(result.detail, "warning: run 1 key log has a TTL of 2m"));
  CHECK(mentions(result.detail, "no lock-out seen"));
  CHECK(mentions(result.detail, "2x"));
  CHECK(!mentions(result.detail, "locked out that long"));
  CHECK(!mentions(result.detail, "MEMORY USAGE"));
  RunStats measured = run_with(1, {{"log", 119'990}});
  measured.key_ttls[0].memory_bytes = 1234;
  CHECK(mentions(check_key_ttl({measured}, window_of(60'000)).detail,
                 "(1234 bytes for this key, MEMORY USAGE)"));
  // A lock-out before the state could have expired is not this key's doing.
  RunStats early = locked_out(run_with(1, {{"log", 119'990}}));
  early.lockouts.worst->sent_ns = 30'000'000'000;
  CHECK(check_key_ttl({early}, window_of(60'000)).status == Status::pass);
  early.lockouts.worst->sent_ns = 61'000'000'000;
  CHECK(check_key_ttl({early}, window_of(60'000)).status == Status::fail);
}

TEST_CASE("key-ttl allows max(1 s, 10 %) beyond what the contract needs") {
  CHECK(key_ttl_tolerance_ms(1000) == 1000);
  CHECK(key_ttl_tolerance_ms(60'000) == 6000);
  const auto judged = [](int64_t ttl_ms, int64_t window_ms) {
    return check_key_ttl({locked_out(run_with(1, {{"k", ttl_ms}}))}, window_of(window_ms));
  };
  CHECK(judged(2000, 1000).status == Status::pass);
  CHECK(!judged(2000, 1000).warning);
  CHECK(judged(2001, 1000).status == Status::fail);
  CHECK(judged(66'000, 60'000).status == Status::pass);
  CHECK(check_key_ttl({run_with(1, {{"k", 66'001}})}, window_of(60'000)).warning);
}

TEST_CASE("a bucket's key needs to live only as long as the bucket takes to refill from empty") {
  CheckParams bucket;
  bucket.contract = "token-bucket";
  bucket.key_ttl_needed_ms = 1000;  // burst 5 refilled at 5/s
  const auto pass = check_key_ttl({run_with(1, {{"tb", 800}})}, bucket);
  CHECK(pass.status == Status::pass);
  CHECK(mentions(pass.detail, "refilling the token-bucket from empty takes 1s"));
  // Three times the refill, and the bucket admitted what it should: a warning.
  const auto twice = check_key_ttl({run_with(1, {{"tb", 3000}})}, bucket);
  CHECK(twice.status == Status::pass);
  CHECK(twice.warning);
  CHECK(check_key_ttl({locked_out(run_with(1, {{"tb", 60'000}}))}, bucket).status == Status::fail);
}

TEST_CASE("a key without TTL fails before any long TTL; keys gone are no evidence") {
  const auto result =
      check_key_ttl({run_with(1, {{"long", 60'000'000}, {"forever", -1}})}, window_of(1000));
  CHECK(result.status == Status::fail);
  CHECK(mentions(result.detail, "key forever has no TTL"));
  // Every key expired or was never written: nothing to judge, not a pass.
  const auto gone = check_key_ttl({run_with(1, {{"k", -2}}), run_with(2, {})}, window_of(1000));
  CHECK(gone.status == Status::skip);
  CHECK(mentions(gone.detail, "no limiter key existed"));
}

TEST_CASE("TTLs read as a person reads them") {
  CHECK(ttl_text(60'000'000) == "16h 40m");
  CHECK(ttl_text(3'600'000) == "1h");
  CHECK(ttl_text(90'000) == "1m 30s");
  CHECK(ttl_text(120'000) == "2m");
  CHECK(ttl_text(2000) == "2s");
  CHECK(ttl_text(1500) == "1.5s");
  CHECK(ttl_text(250) == "250ms");
  CHECK(ttl_text(59'999'980) == "16h 40m");  // read just after EXPIRE key 60000
  CHECK(ttl_text(59'990) == "1m");
}

TEST_CASE(
    "keys Redis was unreachable to read are skipped with the reason; a key seen without "
    "TTL still fails") {
  RunStats read = run_with(1, {{"k1", 50'000}});
  RunStats unread = run_with(2, {});
  unread.keys_unread = "cannot connect to redis://127.0.0.1:6379: Connection refused";
  const auto skipped = check_key_ttl({read, unread}, window_of(60'000));
  CHECK(skipped.status == Status::skip);
  CHECK(skipped.detail ==
        "Redis was unreachable after run 2: cannot connect to redis://127.0.0.1:6379: "
        "Connection refused");
  const auto failed = check_key_ttl({run_with(1, {{"forever", -1}}), unread}, window_of(60'000));
  CHECK(failed.status == Status::fail);
}
