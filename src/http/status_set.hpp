#pragma once
// Sets of HTTP statuses as the command line spells them: "200-299,304", "429".

#include <bitset>
#include <expected>
#include <string>
#include <string_view>

namespace rlcheck::http {

class StatusSet {
 public:
  // Comma-separated statuses and inclusive ranges, each 100-599.
  static std::expected<StatusSet, std::string> parse(std::string_view text);
  bool contains(int status) const { return status >= 0 && status < 600 && set_.test(status); }
  bool overlaps(const StatusSet& other) const { return (set_ & other.set_).any(); }

 private:
  std::bitset<600> set_;
};

}  // namespace rlcheck::http
