#pragma once
// One HTTP client slot: a curl easy handle on the worker loop's shared multi handle. The
// handle (and through curl's connection cache, its keep-alive connection) is reused request
// after request.

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <curl/curl.h>

#include "config/config.hpp"
#include "config/duration.hpp"
#include "engine/client.hpp"
#include "engine/placeholder_template.hpp"
#include "http/curl_multi.hpp"
#include "http/response_decision.hpp"

namespace rlcheck::http {

// The requests of one run, read-only and shared by every client.
struct HttpTarget {
  std::string method = "GET";
  engine::PlaceholderTemplate url;
  // The same, as written (the native client serialises the whole request once).
  std::string url_text;
  std::vector<std::string> header_texts;
  std::optional<std::string> body_text;
  bool native = true;  // the native HTTP/1.1 client (http/native_client), else curl
  bool http2 = false;  // --http2: curl, HTTP/2 (over TLS by ALPN; h2c with prior knowledge)
  std::vector<engine::PlaceholderTemplate> headers;  // "Name: value"
  std::optional<engine::PlaceholderTemplate> body;
  ResponseRules rules;
  config::Nanos timeout{std::chrono::seconds(5)};
  config::TlsConfig tls;  // https://: CA, client certificate, --insecure (sni unsupported)
  int concurrency = 50;   // connections the multi handle may keep
  engine::PlaceholderContext placeholders;  // limit, window, run; seq and rng per request
  uint64_t seed = 0;
  // --source-address: identity j (request seq's identity: seq mod placeholders.identities)
  // sends from address j mod count; empty: the system's choice.
  std::vector<std::string> source_addresses;

  // The index into source_addresses of request `seq`'s address (0 without any).
  size_t source_index(uint64_t seq) const {
    if (source_addresses.empty())
      return 0;
    const auto identity =
        seq % static_cast<uint64_t>(std::max<int64_t>(1, placeholders.identities));
    return static_cast<size_t>(identity % source_addresses.size());
  }
};

class HttpClient final : public engine::Client, private TransferOwner {
 public:
  HttpClient(CurlMulti& multi, engine::ClientListener& listener, int slot, const HttpTarget& target,
             int client_id);
  ~HttpClient() override;
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  void connect() override;
  void start(uint64_t seq) override;
  void abort(engine::ErrorKind why) override;
  bool alive() const override { return true; }

 private:
  void on_transfer_done(CURLcode result) override;
  void finish(engine::Decision decision);
  static size_t on_header(char* data, size_t size, size_t count, void* self);
  static size_t on_body(char* data, size_t size, size_t count, void* self);

  CurlMulti& multi_;
  engine::ClientListener& listener_;
  int slot_;
  const HttpTarget& target_;
  std::mt19937_64 rng_;
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

class HttpClientFactory final : public engine::ClientFactory {
 public:
  explicit HttpClientFactory(const HttpTarget& target) : target_(target) {}
  std::unique_ptr<engine::LoopShared> make_loop_shared(event_base* base) override {
    return std::make_unique<CurlMulti>(base, target_.concurrency);
  }
  std::unique_ptr<engine::Client> make(event_base*, engine::LoopShared* shared,
                                       engine::ClientListener& listener, int slot,
                                       int client_id) override {
    return std::make_unique<HttpClient>(static_cast<CurlMulti&>(*shared), listener, slot, target_,
                                        client_id);
  }

 private:
  const HttpTarget& target_;
};

}  // namespace rlcheck::http
