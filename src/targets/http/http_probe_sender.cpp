#include "targets/http/http_probe_sender.hpp"

#include "targets/http/http_endpoint.hpp"

namespace rlcheck::targets {
namespace {

using probe::probe_seed;
using probe::ProbeSender;
using runner::StateChoice;
using runner::Target;

class HttpProbeSender final : public ProbeSender {
 public:
  explicit HttpProbeSender(const config::Config& config)
      : ProbeSender(config), endpoint_(config, config.http.urls.front(), probe_seed(config)) {
    // Large and random, so that a second probe of the same server meets fresh identities too.
    first_run_ = 1'000'000 + static_cast<int>(endpoint_.seed() % 1'000'000'000);
    addresses_ = static_cast<int>(config.load.source_addresses.size());
  }
  std::string describe() const override { return endpoint_.address(); }
  bool fresh_identities() const override { return endpoint_.fresh_states(); }
  std::string fresh_identity_source() const override { return endpoint_.fresh_state_source(); }
  std::string where_written(std::string_view placeholder) const override {
    return endpoint_.where_written(placeholder);
  }
  int distinct_identities() const override {
    if (addresses_ >= 2)
      return addresses_;
    return ProbeSender::distinct_identities();
  }

 protected:
  StateChoice state_of(int identity) const override {
    return {first_run_ + identity, endpoint_.seed(), "", true};
  }
  Target& target() override { return endpoint_; }

 private:
  HttpEndpoint endpoint_;
  int first_run_ = 1;
  int addresses_ = 0;  // --source-address: identities cycle through them
};

}  // namespace

std::unique_ptr<ProbeSender> make_http_probe_sender(const config::Config& config) {
  return std::make_unique<HttpProbeSender>(config);
}

}  // namespace rlcheck::targets
