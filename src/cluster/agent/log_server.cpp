#include "cluster/agent/log_server.h"

#include <fmt/format.h>
#include <openssl/crypto.h>

#include <chrono>
#include <fstream>

#include "cluster/agent/process.h"
#include "core/logging.h"

namespace tandem::cluster::agent {

namespace {

// A query parameter's raw value, "" when absent.
std::string Param(const std::string& query, const std::string& name) {
  size_t pos = 0;
  while (pos <= query.size()) {
    size_t end = query.find('&', pos);
    if (end == std::string::npos) end = query.size();
    const std::string part = query.substr(pos, end - pos);
    if (part.rfind(name + "=", 0) == 0) return part.substr(name.size() + 1);
    pos = end + 1;
  }
  return "";
}

bool SafeName(const std::string& name) {
  if (name.empty() || name.size() > 200 || name[0] == '.') return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      return false;
  }
  return true;
}

}  // namespace

LogServer::~LogServer() { Stop(); }

Status LogServer::Start(const std::string& host, uint16_t port) {
  http::SessionOptions options;
  options.keep_alive_timeout_s = 30;
  listener_ = std::make_unique<http::HttpListener>(
      options, [this](http::HttpRequest request, std::shared_ptr<http::ResponseSink> sink) {
        Handle(std::move(request), std::move(sink));
      });
  TANDEM_RETURN_IF_ERROR(listener_->Open(host, port));
  thread_ = std::thread([this] { listener_->Run(1); });
  return Status::Ok();
}

void LogServer::SetSecret(std::string secret) {
  std::lock_guard lock(mutex_);
  secret_ = std::move(secret);
}

void LogServer::Stop() {
  std::lock_guard stop_lock(stop_mutex_);  // one caller joins; the others wait for it
  stopping_ = true;
  if (listener_) listener_->Stop();
  if (thread_.joinable()) thread_.join();
  while (followers_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

void LogServer::Handle(http::HttpRequest request, std::shared_ptr<http::ResponseSink> sink) {
  const auto error = [&](int status, const std::string& message) {
    sink->SendResponse(status, "application/json",
                       fmt::format(R"({{"code": {}, "message": "{}"}})", status, message));
  };
  {
    std::lock_guard lock(mutex_);
    const std::string expected = "Bearer " + secret_;
    const std::string_view given = request.authorization();
    if (secret_.empty() || given.size() != expected.size() ||
        CRYPTO_memcmp(given.data(), expected.data(), given.size()) != 0) {
      return error(401, "only the manager reads logs here");
    }
  }
  // /instances/NAME/logs
  const std::string prefix = "/instances/";
  const std::string& path = request.path;
  if (request.method != "GET" || path.rfind(prefix, 0) != 0 || path.size() < prefix.size() + 6 ||
      path.compare(path.size() - 5, 5, "/logs") != 0) {
    return error(404, "no route");
  }
  const std::string name = path.substr(prefix.size(), path.size() - prefix.size() - 5);
  const std::string run = Param(request.query, "run");
  bool run_ok = !run.empty() && run.size() < 10;
  for (char c : run) run_ok = run_ok && c >= '0' && c <= '9';
  if (!SafeName(name) || !run_ok) return error(400, "bad instance name or run");
  const std::string file = fmt::format("{}/{}.{}.log", log_dir_, name, run);
  std::ifstream in(file, std::ios::binary);
  if (!in) return error(404, fmt::format("no log for {} run {} on this worker", name, run));
  const std::string tail = Param(request.query, "tail");
  std::string text;
  if (!tail.empty()) {
    text = TailOfFile(file, std::max(0, std::atoi(tail.c_str())));
    if (!text.empty()) text += "\n";
  } else {
    text.assign(std::istreambuf_iterator<char>(in), {});
  }
  if (Param(request.query, "follow") != "true") {
    return sink->SendResponse(200, "text/plain; charset=utf-8", std::move(text));
  }
  sink->StartStream("text/plain; charset=utf-8");
  if (!text.empty()) sink->SendStreamData(std::move(text));
  auto gone = std::make_shared<std::atomic<bool>>(false);
  sink->SetOnDisconnect([gone] { *gone = true; });
  ++followers_;
  std::thread([this, file, sink, gone] {
    std::ifstream f(file, std::ios::binary);
    f.seekg(0, std::ios::end);
    std::string chunk(65536, '\0');
    while (!*gone && !stopping_) {
      f.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
      const std::streamsize got = f.gcount();
      if (got > 0) {
        sink->SendStreamData(chunk.substr(0, static_cast<size_t>(got)));
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
      f.clear();  // past EOF: read again later
    }
    sink->EndStream();
    --followers_;
  }).detach();
}

}  // namespace tandem::cluster::agent
