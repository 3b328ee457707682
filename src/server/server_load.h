// vLLM's --enable-server-load-tracking: how many generation requests this API server holds
// (from arrival until their response has ended and every handler let go of it), answered by
// GET /load as {"server_load": N}. A sink wrapper counts: it is made when a request arrives and
// destroyed when the last reference to the exchange goes.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "server/http_types.h"

namespace tandem::server {

using ServerLoad = std::shared_ptr<std::atomic<int64_t>>;

class LoadTrackingSink : public ResponseSink {
 public:
  LoadTrackingSink(std::shared_ptr<ResponseSink> inner, ServerLoad load)
      : inner_(std::move(inner)), load_(std::move(load)) {
    load_->fetch_add(1);
  }
  ~LoadTrackingSink() override { load_->fetch_sub(1); }

  void SendResponse(int s, std::string ct, std::string body) override {
    inner_->SendResponse(s, std::move(ct), std::move(body));
  }
  void SendResponseWithHeaders(int s, std::string ct, std::string body,
                               std::vector<std::pair<std::string, std::string>> h) override {
    inner_->SendResponseWithHeaders(s, std::move(ct), std::move(body), std::move(h));
  }
  void StartStream(std::string ct, int s) override { inner_->StartStream(std::move(ct), s); }
  void SendStreamData(std::string data) override { inner_->SendStreamData(std::move(data)); }
  void EndStream() override { inner_->EndStream(); }
  void SetOnDisconnect(std::function<void()> f) override { inner_->SetOnDisconnect(std::move(f)); }
  void AddResponseHeader(std::string name, std::string value) override {
    inner_->AddResponseHeader(std::move(name), std::move(value));
  }
  boost::asio::any_io_executor Executor() const override { return inner_->Executor(); }

 private:
  std::shared_ptr<ResponseSink> inner_;
  ServerLoad load_;
};

}  // namespace tandem::server
