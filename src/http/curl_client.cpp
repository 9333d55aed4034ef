#include "http/curl_client.hpp"

#include <chrono>
#include <string>
#include <vector>

#include <curl/curl.h>
#include <fmt/format.h>

#include "engine/client_rng.hpp"
#include "http/curl_failure.hpp"
#include "http/curl_library.hpp"
#include "http/curl_multi.hpp"
#include "http/response_decision.hpp"

namespace rlcheck::http {
namespace {

// What rlcheck keeps of one response's header section. A limiter's headers are a few hundred
// bytes; past this the response is an error of kind too_large and its connection is closed.
// As curl's own (and the native client's): 300 KB of response headers in all.
constexpr size_t k_max_header_bytes = 300 * 1024;

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t'))
    text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r' ||
                           text.back() == '\n')) {
    text.remove_suffix(1);
  }
  return text;
}

// The options only matter for https:// URLs; curl ignores them for http://.
void apply_tls(CURL* easy, const config::TlsConfig& tls) {
  if (!tls.ca_file.empty())
    curl_library().easy_setopt(easy, CURLOPT_CAINFO, tls.ca_file.c_str());
  if (!tls.cert_file.empty())
    curl_library().easy_setopt(easy, CURLOPT_SSLCERT, tls.cert_file.c_str());
  if (!tls.key_file.empty())
    curl_library().easy_setopt(easy, CURLOPT_SSLKEY, tls.key_file.c_str());
  if (tls.insecure) {
    curl_library().easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_library().easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 0L);
  }
}

class CurlClient final : public engine::Client, private TransferOwner {
 public:
  CurlClient(CurlMulti& multi, engine::ClientListener& listener, int slot,
             const HttpRequests& requests, int client_id);
  ~CurlClient() override;
  CurlClient(const CurlClient&) = delete;
  CurlClient& operator=(const CurlClient&) = delete;

  void connect() override;
  void start(const engine::RequestTicket& ticket) override;
  void abort(engine::ErrorKind why) override;
  bool alive() const override { return true; }

 private:
  void on_transfer_done(CURLcode result) override;
  void finish(engine::Decision&& decision);
  static size_t on_header(char* data, size_t size, size_t count, void* self);
  static size_t on_body(char* data, size_t size, size_t count, void* self);

  CurlMulti& multi_;
  engine::ClientListener& listener_;
  int slot_;
  const HttpRequests& requests_;
  engine::ClientRng rng_;
  engine::RequestClock clock_;  // the request in flight's, for the time its response is read at
  CURL* easy_;
  curl_slist* header_list_ = nullptr;
  std::string url_;       // the URL curl holds
  std::string expanded_;  // a URL or header of this request, expanded, before comparing
  std::string body_;
  std::string interface_;  // CURLOPT_INTERFACE of this request: "host!ADDR" (empty: unset)
  std::vector<std::string> header_lines_;
  HeaderList response_headers_;
  size_t header_bytes_ = 0;         // of the response being read, counted against the cap
  bool headers_too_large_ = false;  // the cap was reached: the transfer was stopped
  char error_buffer_[CURL_ERROR_SIZE] = {};
  bool in_flight_ = false;
};

class CurlClientFactory final : public engine::ClientFactory {
 public:
  explicit CurlClientFactory(const HttpRequests& requests) : requests_(requests) {}
  std::unique_ptr<engine::LoopShared> make_loop_shared(event_base* base) override {
    return std::make_unique<CurlMulti>(base, requests_.concurrency);
  }
  std::unique_ptr<engine::Client> make(event_base*, engine::LoopShared* shared,
                                       engine::ClientListener& listener, int slot,
                                       int client_id) override {
    return std::make_unique<CurlClient>(static_cast<CurlMulti&>(*shared), listener, slot, requests_,
                                        client_id);
  }

 private:
  const HttpRequests& requests_;
};

}  // namespace

CurlClient::CurlClient(CurlMulti& multi, engine::ClientListener& listener, int slot,
                       const HttpRequests& requests, int client_id)
    : multi_(multi),
      listener_(listener),
      slot_(slot),
      requests_(requests),
      rng_(engine::client_seed(requests.seed, client_id)),
      easy_(curl_library().easy_init()) {
  const long timeout_ms = static_cast<long>(
      std::chrono::duration_cast<std::chrono::milliseconds>(requests_.timeout).count());
  curl_library().easy_setopt(easy_, CURLOPT_NOSIGNAL, 1L);
  curl_library().easy_setopt(easy_, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_library().easy_setopt(easy_, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
  curl_library().easy_setopt(easy_, CURLOPT_ERRORBUFFER, error_buffer_);
  curl_library().easy_setopt(easy_, CURLOPT_HEADERFUNCTION, &CurlClient::on_header);
  curl_library().easy_setopt(easy_, CURLOPT_HEADERDATA, this);
  curl_library().easy_setopt(easy_, CURLOPT_WRITEFUNCTION, &CurlClient::on_body);
  curl_library().easy_setopt(easy_, CURLOPT_WRITEDATA, this);
  curl_library().easy_setopt(easy_, CURLOPT_USERAGENT, "rlcheck");
  apply_tls(easy_, requests_.tls);
  if (requests_.http2) {
    curl_library().easy_setopt(easy_, CURLOPT_HTTP_VERSION,
                               requests_.url_text.starts_with("https://")
                                   ? CURL_HTTP_VERSION_2TLS
                                   : CURL_HTTP_VERSION_2_PRIOR_KNOWLEDGE);
  }
  if (requests_.method == "HEAD") {
    curl_library().easy_setopt(easy_, CURLOPT_NOBODY, 1L);
  } else if (requests_.method != "GET" || requests_.body) {
    curl_library().easy_setopt(easy_, CURLOPT_CUSTOMREQUEST, requests_.method.c_str());
  }
}

CurlClient::~CurlClient() {
  if (in_flight_)
    multi_.cancel(easy_);
  curl_library().easy_cleanup(easy_);
  curl_library().slist_free_all(header_list_);
}

void CurlClient::connect() {
  // Connections open with the first request and stay open: curl reuses them.
  listener_.on_connected(slot_, true, {});
}

void CurlClient::start(const engine::RequestTicket& ticket) {
  engine::PlaceholderContext context = requests_.placeholders;
  context.seq = ticket.seq;
  context.identity = ticket.identity;
  context.cost = ticket.cost;
  context.rng = &rng_;
  context.clock = &ticket.clock;
  engine::copy_clock(clock_, ticket.clock);
  // curl parses the URL again whenever it is set: only when a placeholder changed it.
  requests_.url.expand_into(context, expanded_);
  if (expanded_ != url_) {
    url_.swap(expanded_);
    curl_library().easy_setopt(easy_, CURLOPT_URL, url_.c_str());
  }

  // Like the URL, the header list is built again only when a placeholder changed a header.
  bool headers_changed = header_list_ == nullptr && !requests_.headers.empty();
  header_lines_.resize(requests_.headers.size());
  for (size_t i = 0; i < requests_.headers.size(); ++i) {
    requests_.headers[i].expand_into(context, expanded_);
    if (expanded_ != header_lines_[i]) {
      header_lines_[i].swap(expanded_);
      headers_changed = true;
    }
  }
  if (headers_changed) {
    curl_library().slist_free_all(header_list_);
    header_list_ = nullptr;
    for (const std::string& line : header_lines_)
      header_list_ = curl_library().slist_append(header_list_, line.c_str());
    curl_library().easy_setopt(easy_, CURLOPT_HTTPHEADER, header_list_);
  }
  if (!requests_.source_addresses.empty()) {
    // curl's connection cache matches the local interface too: a kept connection is reused
    // only by requests that leave from the address it was bound to.
    expanded_ = "host!" + requests_.source_addresses[requests_.source_index(ticket.identity)];
    if (expanded_ != interface_) {
      interface_.swap(expanded_);
      curl_library().easy_setopt(easy_, CURLOPT_INTERFACE, interface_.c_str());
    }
  }
  if (requests_.body) {
    requests_.body->expand_into(context, body_);
    curl_library().easy_setopt(easy_, CURLOPT_POSTFIELDSIZE, static_cast<long>(body_.size()));
    curl_library().easy_setopt(easy_, CURLOPT_POSTFIELDS, body_.data());
  }

  response_headers_.clear();
  header_bytes_ = 0;
  headers_too_large_ = false;
  error_buffer_[0] = '\0';
  in_flight_ = true;
  if (!multi_.start(easy_, *this)) {
    finish(decide_transport_failure(CURLE_FAILED_INIT, "curl refused the transfer"));
  }
}

void CurlClient::abort(engine::ErrorKind why) {
  if (!in_flight_)
    return;
  multi_.cancel(easy_);
  engine::Decision decision;
  decision.error = why;
  decision.error_message = "no response within --timeout";
  finish(std::move(decision));
}

void CurlClient::on_transfer_done(CURLcode result) {
  if (!in_flight_)
    return;
  if (headers_too_large_) {
    engine::Decision decision;
    decision.error = engine::ErrorKind::too_large;
    decision.error_message =
        fmt::format("response headers over {} KiB (rlcheck's cap)", k_max_header_bytes / 1024);
    finish(std::move(decision));
    return;
  }
  if (result != CURLE_OK) {
    finish(decide_transport_failure(result, error_buffer_));
    return;
  }
  long status = 0;
  curl_library().easy_getinfo(easy_, CURLINFO_RESPONSE_CODE, &status);
  finish(decide_response(static_cast<int>(status), response_headers_, requests_.rules, clock_));
}

void CurlClient::finish(engine::Decision&& decision) {
  in_flight_ = false;
  listener_.on_decision(slot_, std::move(decision));
}

size_t CurlClient::on_header(char* data, size_t size, size_t count, void* self_arg) {
  auto* self = static_cast<CurlClient*>(self_arg);
  const std::string_view line(data, size * count);
  const bool status_line = line.starts_with("HTTP/");
  if (status_line) {
    self->response_headers_.clear();  // a new response (after 100 Continue or a redirect)
    self->header_bytes_ = 0;
  }
  self->header_bytes_ += line.size();
  if (self->header_bytes_ > k_max_header_bytes) {
    self->headers_too_large_ = true;
    return 0;  // curl stops the transfer and closes the connection
  }
  if (status_line)
    return size * count;
  if (const size_t colon = line.find(':'); colon != std::string_view::npos) {
    self->response_headers_.emplace_back(std::string(trim(line.substr(0, colon))),
                                         std::string(trim(line.substr(colon + 1))));
  }
  return size * count;
}

size_t CurlClient::on_body(char*, size_t size, size_t count, void*) {
  return size * count;
}

std::unique_ptr<engine::ClientFactory> make_curl_client_factory(const HttpRequests& requests) {
  return std::make_unique<CurlClientFactory>(requests);
}

}  // namespace rlcheck::http
