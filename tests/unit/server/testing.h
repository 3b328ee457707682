// Fakes for server tests: a byte tokenizer and an engine that echoes prompt tokens + 1.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "router/engine_client.h"
#include "text/tokenizer.h"

namespace tandem::server::testing {

// One token per byte (id = byte value); 256 = "<s>" (BOS, not added), 257 = "</s>" (EOS).
class FakeTokenizer : public text::Tokenizer {
 public:
  std::vector<int32_t> Encode(std::string_view text, bool add_special_tokens) const override {
    std::vector<int32_t> ids;
    for (unsigned char c : text) ids.push_back(c);
    return ids;
  }
  std::string IdToPiece(int32_t id) const override { return TokenBytes(id); }
  std::string TokenBytes(int32_t id) const override {
    if (id == 256) return "<s>";
    if (id == 257) return "</s>";
    return std::string(1, static_cast<char>(id));
  }
  bool decode_strips_leading_space() const override { return false; }
  int32_t vocab_size() const override { return 258; }
  int32_t bos_token_id() const override { return 256; }
  int32_t eos_token_id() const override { return 257; }
  std::string bos_token() const override { return "<s>"; }
  std::string eos_token() const override { return "</s>"; }
  bool IsSpecial(int32_t id) const override { return id >= 256; }
  bool add_bos() const override { return false; }
};

// Step k of a request outputs prompt[k % prompt_len] + 1, on its own thread, one token per
// `step_ms`; ends with kLength at max_tokens (or kStop on an EOS id unless ignore_eos).
// With set_script(text): step k outputs byte text[k] instead, then EOS (257) after the last.
// Engine times on a made-up clock: queued at 100 s, scheduled at 100.5 s (in the first output),
// step k's output at 101 + k s. Requests go to DP rank set_rank(r) (0 by default).
class FakeEngineClient : public router::EngineClient {
 public:
  explicit FakeEngineClient(int step_ms = 1) : step_ms_(step_ms) {
    worker_ = std::thread([this] { Loop(); });
  }
  ~FakeEngineClient() override {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }

  Status AddRequest(protocol::EngineRequest request, router::OutputCallback cb,
                    int32_t* dp_rank = nullptr) override {
    if (!ready_) return Unavailable("fake engine not ready");
    std::lock_guard lock(mu_);
    if (dp_rank != nullptr) *dp_rank = rank_;
    added_.push_back(request);
    const std::string id = request.request_id;
    running_[id] = Running{std::move(request), std::move(cb), 0};
    cv_.notify_all();
    return Status::Ok();
  }
  void AbortRequest(const std::string& id) override {
    std::lock_guard lock(mu_);
    if (running_.erase(id)) aborted_.insert(id);
  }
  bool IsReady() const override { return ready_; }
  protocol::EngineStats LatestStats(int) const override {
    protocol::EngineStats stats;
    stats.num_running = 3;
    stats.num_waiting = 1;
    stats.kv_cache_usage = 0.25f;
    stats.num_gpu_blocks = 64;
    stats.block_size = 16;
    return stats;
  }

  void set_ready(bool ready) { ready_ = ready; }
  void set_rank(int32_t rank) { rank_ = rank; }
  void set_script(std::string script) {
    std::lock_guard lock(mu_);
    script_ = std::move(script);
  }
  std::set<std::string> aborted() {
    std::lock_guard lock(mu_);
    return aborted_;
  }
  std::vector<protocol::EngineRequest> added() {
    std::lock_guard lock(mu_);
    return added_;
  }
  size_t num_running() {
    std::lock_guard lock(mu_);
    return running_.size();
  }

 private:
  struct Running {
    protocol::EngineRequest request;
    router::OutputCallback callback;
    int32_t num_generated;
  };

  void Loop() {
    std::unique_lock lock(mu_);
    while (!stop_) {
      if (running_.empty()) {
        cv_.wait(lock);
        continue;
      }
      std::vector<std::pair<router::OutputCallback, protocol::EngineOutput>> outputs;
      for (auto it = running_.begin(); it != running_.end();) {
        Running& r = it->second;
        const auto& prompt = r.request.prompt_token_ids;
        int32_t token = prompt[r.num_generated % prompt.size()] + 1;
        if (!script_.empty()) {
          token = r.num_generated < static_cast<int32_t>(script_.size())
                      ? static_cast<unsigned char>(script_[r.num_generated])
                      : 257;
        }
        ++r.num_generated;
        protocol::EngineOutput out;
        out.request_id = r.request.request_id;
        out.new_token_ids = {token};
        out.num_cached_tokens = 2;
        if (r.num_generated == 1) {
          out.queued_time_s = 100.0;
          out.scheduled_time_s = 100.5;
        }
        out.timestamp_s = 100.0 + r.num_generated;
        if (r.request.sampling.logprobs >= 0) {
          protocol::PositionLogprobs lp;
          lp.sampled = {token, -0.5f};
          for (int32_t k = 0; k < r.request.sampling.logprobs; ++k)
            lp.top.push_back({token, -0.5f});
          out.new_logprobs = {lp};
        }
        bool is_eos = false;
        for (int32_t eos : r.request.eos_token_ids) is_eos |= (eos == token);
        if (is_eos && !r.request.sampling.ignore_eos) {
          out.finish_reason = static_cast<uint8_t>(protocol::FinishReason::kStop);
          out.stop_token_id = token;
        } else if (r.num_generated >= r.request.sampling.max_tokens) {
          out.finish_reason = static_cast<uint8_t>(protocol::FinishReason::kLength);
        }
        outputs.emplace_back(r.callback, out);
        it = out.finish_reason ? running_.erase(it) : std::next(it);
      }
      lock.unlock();
      for (auto& [cb, out] : outputs) cb(out);
      std::this_thread::sleep_for(std::chrono::milliseconds(step_ms_));
      lock.lock();
    }
  }

  const int step_ms_;
  std::atomic<bool> ready_{true};
  std::atomic<int32_t> rank_{0};
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::map<std::string, Running> running_;
  std::set<std::string> aborted_;
  std::vector<protocol::EngineRequest> added_;
  std::string script_;
  std::thread worker_;
};

}  // namespace tandem::server::testing
