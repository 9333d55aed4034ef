#pragma once
// Message types for unit tests, from .proto text held in the test: parsed with protobuf's own
// parser into a pool of their own (google/protobuf/duration.proto available to import), and
// messages of them filled from protobuf's text format.

#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include <google/protobuf/compiler/parser.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/duration.pb.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/text_format.h>

namespace rlcheck::testing {

class ProtoTypes {
 public:
  // `proto`: the text of one .proto file (proto3), named "test.proto".
  explicit ProtoTypes(std::string_view proto) {
    google::protobuf::FileDescriptorProto duration;
    google::protobuf::Duration::descriptor()->file()->CopyTo(&duration);
    pool_.BuildFile(duration);
    google::protobuf::io::ArrayInputStream input(proto.data(), static_cast<int>(proto.size()));
    google::protobuf::io::Tokenizer tokenizer(&input, nullptr);
    google::protobuf::compiler::Parser parser;
    google::protobuf::FileDescriptorProto file;
    if (!parser.Parse(&tokenizer, &file))
      throw std::runtime_error("the test's .proto text does not parse");
    file.set_name("test.proto");
    if (pool_.BuildFile(file) == nullptr)
      throw std::runtime_error("the test's .proto text does not build");
  }

  const google::protobuf::Descriptor& type(const std::string& full_name) const {
    const google::protobuf::Descriptor* found = pool_.FindMessageTypeByName(full_name);
    if (found == nullptr)
      throw std::runtime_error("no message type " + full_name);
    return *found;
  }

  // A message of `full_name` holding `text` (protobuf's text format).
  std::unique_ptr<google::protobuf::Message> make(const std::string& full_name,
                                                  const std::string& text = {}) {
    std::unique_ptr<google::protobuf::Message> message(
        factory_.GetPrototype(&type(full_name))->New());
    if (!google::protobuf::TextFormat::ParseFromString(text, message.get()))
      throw std::runtime_error("text format does not fit " + full_name + ": " + text);
    return message;
  }

 private:
  google::protobuf::DescriptorPool pool_;
  google::protobuf::DynamicMessageFactory factory_;
};

}  // namespace rlcheck::testing
