#include "targets/grpc/grpc_calls.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <google/protobuf/compiler/importer.h>
#include <google/protobuf/descriptor.h>
#include <google/protobuf/descriptor_database.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/type_resolver.h>
#include <google/protobuf/util/type_resolver_util.h>

#include "targets/grpc/status_codes.hpp"

namespace rlcheck::grpc_target {

namespace pb = google::protobuf;

// The descriptors of the --proto files and what they import, in a pool of their own, and the
// factory of their dynamic messages. The well-known types (google/protobuf/duration.proto,
// ...) come from the protobuf library itself, as protoc's built-in include does, so no
// --import-path is needed for them.
class MessageTypes final : private pb::compiler::MultiFileErrorCollector {
 public:
  MessageTypes()
      : builtin_(*pb::DescriptorPool::generated_pool()),
        from_disk_(&tree_),
        merged_({&builtin_, &described_, &from_disk_}),
        pool_(&merged_, from_disk_.GetValidationErrorCollector()) {
    from_disk_.RecordErrorsTo(this);
  }

  // Maps the import paths, and the folder of each file given; loads the files. False with the
  // first error ("file:line:col: message").
  bool load(const std::vector<std::string>& files, const std::vector<std::string>& import_paths,
            std::string& error) {
    for (const std::string& path : import_paths)
      tree_.MapPath("", path);
    std::vector<std::string> virtual_files;
    for (const std::string& file : files) {
      std::string virtual_file;
      std::string shadowing;
      auto result = tree_.DiskFileToVirtualFile(file, &virtual_file, &shadowing);
      if (result == pb::compiler::DiskSourceTree::NO_MAPPING) {
        // Not under an import path: its folder is one, as protoc does without -I.
        const std::filesystem::path folder = std::filesystem::path(file).parent_path();
        tree_.MapPath("", folder.empty() ? "." : folder.string());
        result = tree_.DiskFileToVirtualFile(file, &virtual_file, &shadowing);
      }
      if (result == pb::compiler::DiskSourceTree::CANNOT_OPEN) {
        error = fmt::format("{}: cannot be read", file);
        return false;
      }
      if (result == pb::compiler::DiskSourceTree::SHADOWED) {
        error = fmt::format("{} is shadowed by {} on the import path", file, shadowing);
        return false;
      }
      if (result != pb::compiler::DiskSourceTree::SUCCESS) {
        error = fmt::format("{}: not under any --import-path", file);
        return false;
      }
      virtual_files.push_back(virtual_file);
    }
    for (const std::string& file : virtual_files) {
      if (pool_.FindFileByName(file) == nullptr) {
        error = first_error_.empty() ? fmt::format("{}: does not load", file) : first_error_;
        return false;
      }
    }
    return true;
  }

  // Loads the files the service described (serialized FileDescriptorProtos). False with the
  // first error.
  bool load_described(const std::vector<std::string>& files, std::string& error) {
    std::vector<std::string> names;
    for (const std::string& bytes : files) {
      pb::FileDescriptorProto file;
      if (!file.ParseFromString(bytes)) {
        error = "a file the service described does not parse";
        return false;
      }
      if (std::find(names.begin(), names.end(), file.name()) != names.end())
        continue;  // the first one counts, as a pool's would
      names.push_back(file.name());
      if (!described_.AddAndOwn(new pb::FileDescriptorProto(std::move(file)))) {
        error = fmt::format("{}: clashes with another file the service described", names.back());
        return false;
      }
    }
    for (const std::string& name : names) {
      if (pool_.FindFileByName(name) == nullptr) {
        error = first_error_.empty() ? fmt::format("{}: does not load", name) : first_error_;
        return false;
      }
    }
    return true;
  }

  const pb::DescriptorPool& pool() const { return pool_; }
  const pb::Message* prototype(const pb::Descriptor& type) { return factory_.GetPrototype(&type); }

 private:
  void AddError(const std::string& filename, int line, int column,
                const std::string& message) override {
    if (!first_error_.empty())
      return;
    // A described file has no source: no line to name.
    first_error_ = line < 0 ? fmt::format("{}: {}", filename, message)
                            : fmt::format("{}:{}:{}: {}", filename, line + 1, column + 1, message);
  }

  pb::compiler::DiskSourceTree tree_;
  pb::DescriptorPoolDatabase builtin_;
  pb::SimpleDescriptorDatabase described_;
  pb::compiler::SourceTreeDescriptorDatabase from_disk_;
  pb::MergedDescriptorDatabase merged_;
  pb::DescriptorPool pool_;
  pb::DynamicMessageFactory factory_;
  std::string first_error_;
};

namespace {

constexpr const char* k_type_url_prefix = "type.googleapis.com";

}  // namespace

GrpcCalls::~GrpcCalls() = default;

std::optional<std::pair<std::string, std::string>> GrpcCalls::split_method(std::string_view text) {
  if (text.starts_with('/'))
    text.remove_prefix(1);
  size_t cut = text.find('/');
  if (cut == std::string_view::npos)
    cut = text.rfind('.');
  if (cut == std::string_view::npos || cut == 0 || cut + 1 >= text.size())
    return std::nullopt;
  return std::pair{std::string(text.substr(0, cut)), std::string(text.substr(cut + 1))};
}

namespace {

// The whole of file `path` (a PEM file of a --tls-* flag); empty path: empty text.
std::expected<std::string, std::string> read_pem(const std::string& flag, const std::string& path) {
  if (path.empty())
    return std::string();
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  if (!file || text.str().empty())
    return std::unexpected(fmt::format("{}: {} cannot be read", flag, path));
  return text.str();
}

}  // namespace

std::expected<GrpcCalls::TlsPem, std::string> GrpcCalls::read_tls_pem(const GrpcOptions& options) {
  TlsPem pem;
  if (!options.use_tls)
    return pem;
  if (options.tls.insecure) {
    return std::unexpected(
        "--insecure: not for gRPC (its library verifies every server); give the CA with "
        "--tls-ca");
  }
  if (options.tls.cert_file.empty() != options.tls.key_file.empty())
    return std::unexpected(
        "--tls-cert: a client certificate needs --tls-key, and the other "
        "way round");
  for (auto [flag, path, text] :
       {std::tuple{"--tls-ca", &options.tls.ca_file, &pem.roots},
        std::tuple{"--tls-cert", &options.tls.cert_file, &pem.cert_chain},
        std::tuple{"--tls-key", &options.tls.key_file, &pem.private_key}}) {
    auto read = read_pem(flag, *path);
    if (!read)
      return std::unexpected(read.error());
    *text = std::move(*read);
  }
  return pem;
}

std::expected<std::shared_ptr<const GrpcCalls>, std::string> GrpcCalls::make(
    const GrpcOptions& options) {
  auto built = build(options, true);
  if (!built)
    return std::unexpected(built.error());
  return std::shared_ptr<const GrpcCalls>(std::move(*built));
}

std::expected<void, std::string> GrpcCalls::check_untyped(const GrpcOptions& options) {
  auto built = build(options, false);
  if (!built)
    return std::unexpected(built.error());
  return {};
}

// `typed`: the types are loaded (from --proto, else the described files) and every option is
// checked against them; else only what needs no types is.
std::expected<std::shared_ptr<GrpcCalls>, std::string> GrpcCalls::build(const GrpcOptions& options,
                                                                        bool typed) {
  std::shared_ptr<GrpcCalls> calls(new GrpcCalls());
  calls->options_ = options;
  const auto method = split_method(options.method);
  if (!method) {
    return std::unexpected(fmt::format("--method: '{}' is not pkg.Service/Method", options.method));
  }
  const bool from_proto = !options.proto_files.empty();
  std::string error;
  if (typed) {
    calls->types_ = std::make_shared<MessageTypes>();
    if (from_proto && !calls->types_->load(options.proto_files, options.import_paths, error))
      return std::unexpected(fmt::format("--proto: {}", error));
    if (!from_proto && options.described_files.empty()) {
      return std::unexpected(
          "--proto: the method's types come from its .proto file, or from the service by server "
          "reflection");
    }
    if (!from_proto && !calls->types_->load_described(options.described_files, error)) {
      return std::unexpected(
          fmt::format("the service's reflection describes types that do not load: {}", error));
    }
    const pb::ServiceDescriptor* service = calls->types_->pool().FindServiceByName(method->first);
    if (service == nullptr) {
      return std::unexpected(fmt::format(
          "--method: no service {} in {}", method->first,
          from_proto ? "the --proto files" : "the files the service described by reflection"));
    }
    const pb::MethodDescriptor* rpc = service->FindMethodByName(method->second);
    if (rpc == nullptr) {
      std::string names;
      for (int i = 0; i < service->method_count(); ++i)
        names += (i == 0 ? "" : ", ") + service->method(i)->name();
      return std::unexpected(fmt::format("--method: {} has no method {} (it has {})", method->first,
                                         method->second, names));
    }
    if (rpc->client_streaming() || rpc->server_streaming()) {
      return std::unexpected(
          fmt::format("--method: {} streams; only unary methods are supported", rpc->full_name()));
    }
    calls->input_ = rpc->input_type();
    calls->output_ = rpc->output_type();
    calls->method_path_ = fmt::format("/{}/{}", service->full_name(), rpc->name());
    calls->resolver_.reset(
        pb::util::NewTypeResolverForDescriptorPool(k_type_url_prefix, &calls->types_->pool()));
    calls->input_url_ = fmt::format("{}/{}", k_type_url_prefix, calls->input_->full_name());
  }

  auto data =
      engine::PlaceholderTemplate::parse(options.data, engine::PlaceholderTemplate::Unknown::keep);
  if (!data)
    return std::unexpected(fmt::format("--data: {}", data.error()));
  calls->data_ = *data;
  if (typed) {
    // The JSON must fit the type now, not at the first call: expanded for request 0.
    engine::PlaceholderContext sample = options.placeholders;
    engine::ClientRng rng(options.seed);
    sample.rng = &rng;
    std::string json;
    std::string bytes;
    if (!calls->encode_request(sample, json, bytes, error))
      return std::unexpected(fmt::format("--data: {}", error));
    if (calls->data_.is_constant())
      calls->constant_request_ = bytes;
  }
  for (const std::string& pair : options.metadata) {
    const size_t colon = pair.find(':');
    if (colon == std::string::npos || colon == 0) {
      return std::unexpected(fmt::format("--metadata: '{}' is not 'key: value'", pair));
    }
    std::string key = pair.substr(0, colon);
    std::transform(key.begin(), key.end(), key.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    std::string_view value = std::string_view(pair).substr(colon + 1);
    while (value.starts_with(' '))
      value.remove_prefix(1);
    auto value_template =
        engine::PlaceholderTemplate::parse(value, engine::PlaceholderTemplate::Unknown::keep);
    if (!value_template)
      return std::unexpected(fmt::format("--metadata: {}", value_template.error()));
    calls->metadata_.emplace_back(std::move(key), std::move(*value_template));
  }

  auto code = parse_status_code(options.denied_code);
  if (!code)
    return std::unexpected(fmt::format("--denied-code: {}", code.error()));
  if (*code == 0)
    return std::unexpected("--denied-code: OK is how admissions end; use --denied-when");
  calls->rules_.denied_code = *code;
  if (typed) {
    for (const std::string& spec : options.denied_when) {
      auto match = FieldMatch::parse(*calls->output_, spec);
      if (!match)
        return std::unexpected(fmt::format("--denied-when: {}", match.error()));
      calls->rules_.denied_when.push_back(std::move(*match));
    }
    if (!options.hint_field.empty()) {
      auto path = FieldPath::parse(*calls->output_, options.hint_field);
      if (!path)
        return std::unexpected(fmt::format("--hint-field: {}", path.error()));
      calls->rules_.hint_field = std::move(*path);
    }
  }
  calls->rules_.require_hint = options.require_hint;

  auto pem = read_tls_pem(options);
  if (!pem)
    return std::unexpected(pem.error());
  calls->tls_pem_ = std::move(*pem);
  return calls;
}

std::shared_ptr<const GrpcCalls> GrpcCalls::for_run(int run, uint64_t seed,
                                                    std::chrono::nanoseconds timeout) const {
  std::shared_ptr<GrpcCalls> calls(new GrpcCalls(*this));
  calls->options_.placeholders.run = run;
  calls->options_.seed = seed;
  calls->options_.timeout = timeout;
  return calls;
}

std::unique_ptr<pb::Message> GrpcCalls::new_request() const {
  return std::unique_ptr<pb::Message>(types_->prototype(*input_)->New());
}

std::unique_ptr<pb::Message> GrpcCalls::new_response() const {
  return std::unique_ptr<pb::Message>(types_->prototype(*output_)->New());
}

bool GrpcCalls::encode_request(const engine::PlaceholderContext& context, std::string& json,
                               std::string& out, std::string& error) const {
  if (constant_request_) {
    out = *constant_request_;
    return true;
  }
  data_.expand_into(context, json);
  out.clear();
  const auto status = pb::util::JsonToBinaryString(resolver_.get(), input_url_, json, &out);
  if (!status.ok()) {
    error = fmt::format("{} (JSON for {}: {})", std::string(status.message()), input_->full_name(),
                        json.substr(0, 200));
    return false;
  }
  return true;
}

void GrpcCalls::expand_metadata(const engine::PlaceholderContext& context,
                                std::vector<std::pair<std::string, std::string>>& out) const {
  out.resize(metadata_.size());
  for (size_t i = 0; i < metadata_.size(); ++i) {
    out[i].first = metadata_[i].first;
    metadata_[i].second.expand_into(context, out[i].second);
  }
}

}  // namespace rlcheck::grpc_target
