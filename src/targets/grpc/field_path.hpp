#pragma once
// Paths into a response message, as --denied-when and --hint-field name its fields:
// "overall_code", "statuses.0.duration_until_reset". A step is a field's name (as in the
// .proto, or its JSON name) or, after a repeated field, an index. Checked against the message
// type once; read by reflection per response.

#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace google::protobuf {
class Descriptor;
class FieldDescriptor;
class Message;
}  // namespace google::protobuf

namespace rlcheck::grpc_target {

class FieldPath {
 public:
  // The path in `type`; an error names the step that is not there ("statuses.x: no field x").
  static std::expected<FieldPath, std::string> parse(const google::protobuf::Descriptor& type,
                                                     std::string_view path);

  // The field the path ends at.
  const google::protobuf::FieldDescriptor& leaf() const { return *steps_.back().field; }
  const std::string& text() const { return text_; }

  // The leaf's value as text: an enum's value name, true/false, a number in decimal, a string
  // as it is. Nullopt when the path does not reach it in `message` (an index past the end, an
  // unset message on the way) or the leaf is a message.
  std::optional<std::string> read_text(const google::protobuf::Message& message) const;
  // The leaf as a wait in milliseconds: a google.protobuf.Duration (rounded up to the ms), or a
  // number of seconds. Nullopt when not reached or unset (a Duration not set, a message of
  // another type). `whole_seconds` is set when the value counts whole seconds only (a number
  // of seconds, or a Duration without nanos).
  std::optional<int64_t> read_wait_ms(const google::protobuf::Message& message,
                                      bool* whole_seconds = nullptr) const;

 private:
  struct Step {
    const google::protobuf::FieldDescriptor* field = nullptr;
    int index = -1;  // a repeated field's element; -1 for a singular field
  };
  // The message holding the leaf in `message`, or null where the path leaves it.
  const google::protobuf::Message* leaf_parent(const google::protobuf::Message& message) const;

  std::vector<Step> steps_;
  std::string text_;
};

// --denied-when FIELD=VALUE: an OK response whose field reads VALUE is a denial.
class FieldMatch {
 public:
  // "overall_code=OVER_LIMIT" in `type`; VALUE must be one the field can hold (an enum's value
  // name or number, true/false, a number); errors name the field and what it takes.
  static std::expected<FieldMatch, std::string> parse(const google::protobuf::Descriptor& type,
                                                      std::string_view spec);
  bool matches(const google::protobuf::Message& message) const;
  const std::string& text() const { return text_; }

 private:
  FieldPath path_;
  std::string value_;  // as read_text writes it (an enum given by number: its name)
  std::string text_;
};

}  // namespace rlcheck::grpc_target
