#pragma once
// A fake DecisionIo for strategy tests: records every command and eval a strategy sends.

#include <string>
#include <string_view>
#include <vector>

#include "redis/strategy.hpp"

namespace rlcheck::test {

struct EvalCall {
  const redis::LoadedScript* script;
  std::string key;                // the first of keys
  std::vector<std::string> keys;  // every KEYS entry
  std::vector<std::string> args;
};

class RecordingIo : public redis::DecisionIo {
 public:
  void send(const std::vector<std::string_view>& argv) override {
    sent.emplace_back(argv.begin(), argv.end());
  }
  std::vector<std::string>& eval_keys() override { return keys; }
  std::vector<std::string>& eval_args() override { return args; }
  void eval(const redis::LoadedScript& script) override {
    evals.push_back({&script, keys.empty() ? std::string() : keys[0], keys, args});
  }

  std::vector<std::vector<std::string>> sent;
  std::vector<EvalCall> evals;
  std::vector<std::string> keys;
  std::vector<std::string> args;
};

}  // namespace rlcheck::test
