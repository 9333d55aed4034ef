#include "targets/grpc/field_path.hpp"

#include <charconv>
#include <cmath>

#include <fmt/format.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

namespace rlcheck::grpc_target {

namespace pb = google::protobuf;

namespace {

const pb::FieldDescriptor* field_named(const pb::Descriptor& type, std::string_view name) {
  for (int i = 0; i < type.field_count(); ++i) {
    const pb::FieldDescriptor* field = type.field(i);
    if (field->name() == name || field->json_name() == name)
      return field;
  }
  return nullptr;
}

std::optional<int> index_of(std::string_view text) {
  int index = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), index);
  if (error != std::errc{} || end != text.data() + text.size() || text.empty() || index < 0)
    return std::nullopt;
  return index;
}

bool is_duration(const pb::FieldDescriptor& field) {
  return field.cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE &&
         field.message_type()->full_name() == "google.protobuf.Duration";
}

std::string field_names(const pb::Descriptor& type) {
  std::string names;
  for (int i = 0; i < type.field_count(); ++i)
    names += (i == 0 ? "" : ", ") + type.field(i)->name();
  return names.empty() ? "none" : names;
}

}  // namespace

std::expected<FieldPath, std::string> FieldPath::parse(const pb::Descriptor& type,
                                                       std::string_view path) {
  FieldPath parsed;
  parsed.text_ = std::string(path);
  const pb::Descriptor* within = &type;
  size_t at = 0;
  while (at <= path.size()) {
    const size_t dot = std::min(path.find('.', at), path.size());
    const std::string_view step = path.substr(at, dot - at);
    const std::string walked(path.substr(0, dot));
    if (step.empty())
      return std::unexpected(fmt::format("'{}': an empty step", path));
    if (!parsed.steps_.empty() && parsed.steps_.back().field->is_repeated() &&
        parsed.steps_.back().index < 0) {
      const std::optional<int> index = index_of(step);
      if (!index) {
        return std::unexpected(fmt::format("'{}': {} is repeated, so an index comes next", walked,
                                           parsed.steps_.back().field->name()));
      }
      parsed.steps_.back().index = *index;
    } else {
      if (within == nullptr) {
        return std::unexpected(
            fmt::format("'{}': {} has no fields", walked, parsed.steps_.back().field->name()));
      }
      const pb::FieldDescriptor* field = field_named(*within, step);
      if (field == nullptr) {
        return std::unexpected(fmt::format("'{}': {} has no field {} (it has {})", walked,
                                           within->full_name(), step, field_names(*within)));
      }
      if (field->is_map())
        return std::unexpected(fmt::format("'{}': {} is a map", walked, field->name()));
      parsed.steps_.push_back({field, -1});
      within = field->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE ? field->message_type()
                                                                         : nullptr;
    }
    at = dot + 1;
  }
  if (parsed.steps_.back().field->is_repeated() && parsed.steps_.back().index < 0) {
    return std::unexpected(fmt::format("'{}': {} is repeated: name an element ({}.0)", path,
                                       parsed.steps_.back().field->name(), path));
  }
  return parsed;
}

const pb::Message* FieldPath::leaf_parent(const pb::Message& message) const {
  const pb::Message* at = &message;
  for (size_t i = 0; i + 1 < steps_.size(); ++i) {
    const Step& step = steps_[i];
    const pb::Reflection& reflection = *at->GetReflection();
    if (step.index >= 0) {
      if (step.index >= reflection.FieldSize(*at, step.field))
        return nullptr;
      at = &reflection.GetRepeatedMessage(*at, step.field, step.index);
    } else {
      if (!reflection.HasField(*at, step.field))
        return nullptr;
      at = &reflection.GetMessage(*at, step.field);
    }
  }
  return at;
}

std::optional<std::string> FieldPath::read_text(const pb::Message& message) const {
  const pb::Message* parent = leaf_parent(message);
  if (parent == nullptr)
    return std::nullopt;
  const Step& step = steps_.back();
  const pb::FieldDescriptor* field = step.field;
  const pb::Reflection& reflection = *parent->GetReflection();
  const bool repeated = step.index >= 0;
  if (repeated && step.index >= reflection.FieldSize(*parent, field))
    return std::nullopt;
  const int i = step.index;
  switch (field->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32:
      return std::to_string(repeated ? reflection.GetRepeatedInt32(*parent, field, i)
                                     : reflection.GetInt32(*parent, field));
    case pb::FieldDescriptor::CPPTYPE_INT64:
      return std::to_string(repeated ? reflection.GetRepeatedInt64(*parent, field, i)
                                     : reflection.GetInt64(*parent, field));
    case pb::FieldDescriptor::CPPTYPE_UINT32:
      return std::to_string(repeated ? reflection.GetRepeatedUInt32(*parent, field, i)
                                     : reflection.GetUInt32(*parent, field));
    case pb::FieldDescriptor::CPPTYPE_UINT64:
      return std::to_string(repeated ? reflection.GetRepeatedUInt64(*parent, field, i)
                                     : reflection.GetUInt64(*parent, field));
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
      return fmt::format("{}", repeated ? reflection.GetRepeatedDouble(*parent, field, i)
                                        : reflection.GetDouble(*parent, field));
    case pb::FieldDescriptor::CPPTYPE_FLOAT:
      return fmt::format("{}", repeated ? reflection.GetRepeatedFloat(*parent, field, i)
                                        : reflection.GetFloat(*parent, field));
    case pb::FieldDescriptor::CPPTYPE_BOOL:
      return (repeated ? reflection.GetRepeatedBool(*parent, field, i)
                       : reflection.GetBool(*parent, field))
                 ? "true"
                 : "false";
    case pb::FieldDescriptor::CPPTYPE_ENUM: {
      const int number = repeated ? reflection.GetRepeatedEnumValue(*parent, field, i)
                                  : reflection.GetEnumValue(*parent, field);
      const pb::EnumValueDescriptor* value = field->enum_type()->FindValueByNumber(number);
      return value != nullptr ? value->name() : std::to_string(number);
    }
    case pb::FieldDescriptor::CPPTYPE_STRING:
      return repeated ? reflection.GetRepeatedString(*parent, field, i)
                      : reflection.GetString(*parent, field);
    case pb::FieldDescriptor::CPPTYPE_MESSAGE:
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<int64_t> FieldPath::read_wait_ms(const pb::Message& message,
                                               bool* whole_seconds) const {
  const pb::FieldDescriptor& field = leaf();
  if (is_duration(field)) {
    const pb::Message* parent = leaf_parent(message);
    if (parent == nullptr)
      return std::nullopt;
    const pb::Reflection& reflection = *parent->GetReflection();
    const Step& step = steps_.back();
    const pb::Message* duration = nullptr;
    if (step.index >= 0) {
      if (step.index >= reflection.FieldSize(*parent, &field))
        return std::nullopt;
      duration = &reflection.GetRepeatedMessage(*parent, &field, step.index);
    } else {
      if (!reflection.HasField(*parent, &field))
        return std::nullopt;
      duration = &reflection.GetMessage(*parent, &field);
    }
    const pb::Descriptor& type = *duration->GetDescriptor();
    const pb::Reflection& fields = *duration->GetReflection();
    const int64_t seconds = fields.GetInt64(*duration, type.FindFieldByName("seconds"));
    const int32_t nanos = fields.GetInt32(*duration, type.FindFieldByName("nanos"));
    if (whole_seconds != nullptr)
      *whole_seconds = nanos == 0;
    return seconds * 1000 + (nanos + 999'999) / 1'000'000;
  }
  const std::optional<std::string> text = read_text(message);
  if (!text)
    return std::nullopt;
  double seconds = 0;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), seconds);
  if (error != std::errc{} || end != text->data() + text->size() || !std::isfinite(seconds))
    return std::nullopt;
  if (whole_seconds != nullptr)
    *whole_seconds = seconds == std::floor(seconds);
  return static_cast<int64_t>(std::ceil(seconds * 1000));
}

std::expected<FieldMatch, std::string> FieldMatch::parse(const pb::Descriptor& type,
                                                         std::string_view spec) {
  const size_t equals = spec.find('=');
  if (equals == std::string_view::npos) {
    return std::unexpected(
        fmt::format("'{}' is not FIELD=VALUE (overall_code=OVER_LIMIT, say)", spec));
  }
  auto path = FieldPath::parse(type, spec.substr(0, equals));
  if (!path)
    return std::unexpected(path.error());
  const std::string_view value = spec.substr(equals + 1);
  const pb::FieldDescriptor& field = path->leaf();
  FieldMatch match;
  match.text_ = std::string(spec);
  switch (field.cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_MESSAGE:
      return std::unexpected(
          fmt::format("'{}': {} is a message; name one of its fields", spec, field.name()));
    case pb::FieldDescriptor::CPPTYPE_ENUM: {
      const pb::EnumDescriptor& values = *field.enum_type();
      const pb::EnumValueDescriptor* found = values.FindValueByName(std::string(value));
      if (found == nullptr) {
        if (const std::optional<int> number = index_of(value))
          found = values.FindValueByNumber(*number);
      }
      if (found == nullptr) {
        std::string names;
        for (int i = 0; i < values.value_count(); ++i)
          names += (i == 0 ? "" : ", ") + values.value(i)->name();
        return std::unexpected(fmt::format("'{}': {} is one of {}", spec, field.name(), names));
      }
      match.value_ = found->name();
      break;
    }
    case pb::FieldDescriptor::CPPTYPE_BOOL:
      if (value != "true" && value != "false")
        return std::unexpected(fmt::format("'{}': {} is true or false", spec, field.name()));
      match.value_ = std::string(value);
      break;
    case pb::FieldDescriptor::CPPTYPE_STRING:
      match.value_ = std::string(value);
      break;
    default: {
      // A number, written as read_text writes it.
      double number = 0;
      const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
      if (error != std::errc{} || end != value.data() + value.size() || value.empty())
        return std::unexpected(fmt::format("'{}': {} is a number", spec, field.name()));
      match.value_ = std::string(value);
      break;
    }
  }
  match.path_ = std::move(*path);
  return match;
}

bool FieldMatch::matches(const pb::Message& message) const {
  const std::optional<std::string> read = path_.read_text(message);
  return read && *read == value_;
}

}  // namespace rlcheck::grpc_target
