// Many hosts for real: each worker runs in a network namespace of its own, with its own address
// on a veth pair to a bridge in the test's namespace, and in a time namespace of its own, its
// steady clock hours away from the others'. They load `rlcheck serve`, keyed by the client
// address, over the bridge, and meet on the shared redis-server's unix socket (a path reaches
// across network namespaces). Namespaces need root and a kernel that allows them: where either
// is missing the test says why and checks nothing.
//
// The addresses are link-local (169.254.0.0/16) on a bridge this test makes and removes: the
// traffic never leaves this machine.

#include <doctest/doctest.h>

#include <algorithm>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "process/child_process.hpp"
#include "support/json_outcome.hpp"
#include "support/run_binary.hpp"
#include "support/serve_process.hpp"
#include "support/test_redis.hpp"

using namespace rlcheck::testing;
using nlohmann::json;

namespace {

constexpr int k_workers = 3;
constexpr int k_limit = 5;

// A bridge with `hosts` network namespaces on it, each with one address; removed when it goes.
class NamespaceLab {
 public:
  // nullopt, with `why` set, when this machine cannot make them.
  static std::optional<NamespaceLab> make(int hosts, std::string& why) {
    const auto ip = rlcheck::process::find_on_path("ip");
    const auto unshare = rlcheck::process::find_on_path("unshare");
    if (!ip || !unshare) {
      why = "the ip and unshare commands are not on PATH";
      return std::nullopt;
    }
    if (geteuid() != 0) {
      why = "network namespaces need root";
      return std::nullopt;
    }
    NamespaceLab lab(*ip, *unshare);
    // A subnet of its own per test process, so two runs on one machine do not meet.
    lab.subnet_ = "169.254." + std::to_string(getpid() % 200 + 20) + ".";
    lab.bridge_ = "rlbr" + std::to_string(getpid());
    if (!lab.ip({"link", "add", lab.bridge_, "type", "bridge"}, why))
      return std::nullopt;
    lab.made_bridge_ = true;
    if (!lab.ip({"addr", "add", lab.bridge_address() + "/24", "dev", lab.bridge_}, why) ||
        !lab.ip({"link", "set", lab.bridge_, "up"}, why)) {
      return std::nullopt;
    }
    for (int host = 0; host < hosts; ++host) {
      const std::string ns = "rlck" + std::to_string(getpid()) + "-" + std::to_string(host);
      const std::string outside = "rlh" + std::to_string(getpid()) + "x" + std::to_string(host);
      const std::string inside = "rln" + std::to_string(getpid()) + "x" + std::to_string(host);
      if (!lab.ip({"netns", "add", ns}, why))
        return std::nullopt;
      lab.namespaces_.push_back(ns);
      const std::string address = lab.host_address(host);
      if (!lab.ip({"link", "add", outside, "type", "veth", "peer", "name", inside}, why))
        return std::nullopt;
      lab.links_.push_back(outside);
      if (!lab.ip({"link", "set", inside, "netns", ns}, why) ||
          !lab.ip({"link", "set", outside, "master", lab.bridge_}, why) ||
          !lab.ip({"link", "set", outside, "up"}, why) ||
          !lab.ip({"-n", ns, "addr", "add", address + "/24", "dev", inside}, why) ||
          !lab.ip({"-n", ns, "link", "set", inside, "up"}, why) ||
          !lab.ip({"-n", ns, "link", "set", "lo", "up"}, why)) {
        return std::nullopt;
      }
    }
    // A time namespace per worker, where the kernel has them (Linux 5.6).
    const ProcessOutcome time_ns =
        run_process({lab.unshare_, "--time", "--monotonic", "3600", "true"});
    lab.time_namespaces_ = time_ns.exit_code == 0;
    if (!lab.time_namespaces_)
      lab.time_note_ = "no time namespaces here (" + time_ns.err + "): the clocks are shared";
    return lab;
  }

  NamespaceLab(NamespaceLab&& other) noexcept
      : ip_(std::move(other.ip_)),
        unshare_(std::move(other.unshare_)),
        subnet_(std::move(other.subnet_)),
        bridge_(std::move(other.bridge_)),
        made_bridge_(std::exchange(other.made_bridge_, false)),
        namespaces_(std::move(other.namespaces_)),
        links_(std::move(other.links_)),
        time_namespaces_(other.time_namespaces_),
        time_note_(std::move(other.time_note_)) {
    other.namespaces_.clear();
    other.links_.clear();
  }
  NamespaceLab& operator=(NamespaceLab&&) = delete;

  ~NamespaceLab() {
    std::string ignored;
    // Deleting one end of a veth pair deletes both, at once (a namespace's own links go only
    // when the kernel gets round to destroying it).
    for (const std::string& link : links_)
      ip({"link", "del", link}, ignored);
    for (const std::string& ns : namespaces_)
      ip({"netns", "del", ns}, ignored);
    if (made_bridge_)
      ip({"link", "del", bridge_}, ignored);
  }

  std::string bridge_address() const { return subnet_ + "1"; }
  std::string host_address(int host) const { return subnet_ + std::to_string(10 + host); }
  const std::string& time_note() const { return time_note_; }

  // `argv` run inside host `host`'s network namespace and, where there are time namespaces,
  // with its steady clock `host` hours ahead of this one's.
  std::vector<std::string> inside(int host, const std::vector<std::string>& argv) const {
    std::vector<std::string> wrapped{ip_, "netns", "exec", namespaces_.at(host)};
    if (time_namespaces_) {
      const std::string offset = std::to_string(3600 * (host + 1));
      wrapped.insert(wrapped.end(),
                     {unshare_, "--time", "--monotonic", offset, "--boottime", offset, "--"});
    }
    wrapped.insert(wrapped.end(), argv.begin(), argv.end());
    return wrapped;
  }

 private:
  NamespaceLab(std::string ip, std::string unshare)
      : ip_(std::move(ip)), unshare_(std::move(unshare)) {}

  bool ip(std::vector<std::string> args, std::string& why) const {
    args.insert(args.begin(), ip_);
    const ProcessOutcome outcome = run_process(args);
    if (outcome.exit_code == 0)
      return true;
    why = "'ip";
    for (size_t i = 1; i < args.size(); ++i)
      why += " " + args[i];
    why += "' failed: " + outcome.err;
    return false;
  }

  std::string ip_;
  std::string unshare_;
  std::string subnet_;
  std::string bridge_;
  bool made_bridge_ = false;
  std::vector<std::string> namespaces_;
  std::vector<std::string> links_;  // the outside end of each veth pair
  bool time_namespaces_ = false;
  std::string time_note_;
};

std::string new_session() {
  return "test-netns-" + std::to_string(getpid());
}

// The client addresses in `subnet` (e.g. "169.254.30.") that serve keyed a limiter by, on the
// shared redis-server's database 1, sorted and without repeats.
std::vector<std::string> serve_keys_from(const std::string& subnet) {
  rlcheck::redis::SyncClient client = TestRedis::shared().connect();
  REQUIRE(client.call({"SELECT", "1"}).has_value());
  std::vector<std::string> addresses;
  std::string cursor = "0";
  do {
    auto reply =
        client.call({"SCAN", cursor, "MATCH", "rlcheck:serve:*:" + subnet + "*", "COUNT", "1000"});
    REQUIRE(reply.has_value());
    REQUIRE((*reply)->type == REDIS_REPLY_ARRAY);
    cursor.assign((*reply)->element[0]->str, (*reply)->element[0]->len);
    const redisReply* batch = (*reply)->element[1];
    for (size_t i = 0; i < batch->elements; ++i) {
      const std::string key(batch->element[i]->str, batch->element[i]->len);
      const size_t at = key.find(subnet);
      const size_t end = key.find(':', at);
      addresses.push_back(key.substr(at, end == std::string::npos ? end : end - at));
    }
  } while (cursor != "0");
  std::sort(addresses.begin(), addresses.end());
  addresses.erase(std::unique(addresses.begin(), addresses.end()), addresses.end());
  return addresses;
}

}  // namespace

TEST_CASE("many hosts in network namespaces: each worker's own address gets its own limit") {
  std::string why;
  std::optional<NamespaceLab> lab = NamespaceLab::make(k_workers, why);
  if (!lab) {
    MESSAGE("skipped: cannot make network namespaces here: " << why);
    return;
  }
  if (!lab->time_note().empty())
    MESSAGE(lab->time_note());

  // serve keyed by the client address, listening on the bridge.
  ServeProcess serve({"--redis", TestRedis::shared().tcp_url() + "/1", "--listen",
                      lab->bridge_address() + ":0", "--strategy", "lua", "--limit",
                      std::to_string(k_limit), "--window", "60s"});
  // With --identities equal to --workers, worker K sends every request of identity K, so each
  // identity leaves from one namespace's address. Had they shared an address, the three
  // would share one limit: 5 allowed of 15, and --exact fails.
  const std::string session = new_session();
  const std::vector<std::string> load{"http",
                                      serve.url(),
                                      "--identities",
                                      std::to_string(k_workers),
                                      "-n",
                                      "60",
                                      "-p",
                                      "6",
                                      "-r",
                                      "1",
                                      "--limit",
                                      std::to_string(k_limit),
                                      "--exact",
                                      "--json",
                                      "--workers",
                                      std::to_string(k_workers),
                                      "--coordinator",
                                      TestRedis::shared().unix_url() + "?db=2",
                                      "--session",
                                      session};
  std::vector<std::future<ProcessOutcome>> running;
  for (int host = 0; host < k_workers; ++host) {
    std::vector<std::string> argv{rlcheck_binary()};
    argv.insert(argv.end(), load.begin(), load.end());
    argv.insert(argv.end(), {"--worker-index", std::to_string(host)});
    running.push_back(std::async(std::launch::async,
                                 [argv = lab->inside(host, argv)] { return run_process(argv); }));
  }
  std::vector<ProcessOutcome> outcomes;
  for (auto& outcome : running)
    outcomes.push_back(outcome.get());

  for (const ProcessOutcome& outcome : outcomes) {
    INFO("exit " << outcome.exit_code << "\nstderr: " << outcome.err);
    REQUIRE_FALSE(outcome.timed_out);
    CHECK(outcome.exit_code == 0);
    CHECK(outcome.out == outcomes.front().out);
  }
  INFO("serve: " << serve.log());
  const json report = json::parse(outcomes.front().out);
  CHECK(report.at("verdict") == "pass");
  REQUIRE(report.at("runs").size() == 1);
  CHECK(report.at("runs").at(0).at("allowed") == k_workers * k_limit);
  CHECK(report.at("runs").at(0).at("errors") == 0);
  CHECK(check_status(report, "utilisation") == "pass");
  CHECK(check_status(report, "contract") == "pass");
  REQUIRE(report.at("workers").size() == k_workers);
  for (const json& worker : report.at("workers"))
    CHECK(worker.at("requests") == 20);
  // serve keys its limiter by the peer address: one key per namespace's address, none other.
  std::vector<std::string> seen =
      serve_keys_from(lab->bridge_address().substr(0, lab->bridge_address().rfind('.') + 1));
  std::vector<std::string> expected;
  for (int host = 0; host < k_workers; ++host)
    expected.push_back(lab->host_address(host));
  CHECK(seen == expected);
}
