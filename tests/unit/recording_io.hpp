#pragma once
// A fake DecisionIo for strategy tests: records every command and eval a strategy sends.

#include <stdexcept>
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
  redis::CommandBuffer& begin_eval(const redis::LoadedScript& script, const redis::EvalHead& head,
                                   std::string_view) override {
    pending_ = {&script, {}, {}, {}};
    // The key count: the head's last argument ("$1\r\n2\r\n").
    const std::string_view count = std::string_view(head.text).substr(head.count_at);
    key_count_ = std::stoul(std::string(count.substr(count.find('\n') + 1)));
    arg_count_ = head.argc - 3 - key_count_;
    written_.clear();
    return written_;
  }
  // Reads the keys and args back from the RESP the strategy wrote.
  void end_eval() override {
    std::vector<std::string> bulks;
    std::string_view text = written_.text();
    while (!text.empty()) {
      const size_t line_end = text.find("\r\n");
      const size_t length = std::stoul(std::string(text.substr(1, line_end - 1)));
      bulks.emplace_back(text.substr(line_end + 2, length));
      text.remove_prefix(line_end + 2 + length + 2);
    }
    if (bulks.size() != key_count_ + arg_count_)
      throw std::logic_error("the eval's argument count differs from what it wrote");
    pending_.keys.assign(bulks.begin(), bulks.begin() + static_cast<std::ptrdiff_t>(key_count_));
    pending_.args.assign(bulks.begin() + static_cast<std::ptrdiff_t>(key_count_), bulks.end());
    pending_.key = pending_.keys.empty() ? std::string() : pending_.keys.front();
    evals.push_back(pending_);
  }

  std::vector<std::vector<std::string>> sent;
  std::vector<EvalCall> evals;

 private:
  EvalCall pending_;
  size_t key_count_ = 0;
  size_t arg_count_ = 0;
  redis::CommandBuffer written_;
};

}  // namespace rlcheck::test
