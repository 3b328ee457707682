#include "cluster/manager/watch_stream.h"

#include <boost/asio/post.hpp>

namespace tandem::cluster::manager {

using nlohmann::json;

Status WatchStream::Start(store::Store& store, store::Table table, ListQuery query,
                          std::string search_field, PublicView view,
                          std::shared_ptr<http::ResponseSink> sink,
                          boost::asio::io_context& io_context, double heartbeat_s,
                          OpenStreams& open_streams) {
  std::shared_ptr<WatchStream> self(new WatchStream(store, io_context));
  self->table_ = table;
  self->query_ = std::move(query);
  self->search_field_ = std::move(search_field);
  self->view_ = std::move(view);
  self->sink_ = sink;
  self->heartbeat_s_ = heartbeat_s;
  sink->StartStream("application/json");
  std::weak_ptr<WatchStream> weak = self;
  auto handle = store.Subscribe(
      table,
      [weak](const store::WatchEvent& event) {
        if (auto s = weak.lock()) s->OnEvent(event);
      },
      /*replay=*/true);
  if (!handle.ok()) {
    sink->EndStream();
    return handle.status();
  }
  self->handle_ = *handle;
  // The sink's disconnect callback keeps the stream alive until the client leaves.
  sink->SetOnDisconnect([self] { self->Stop(); });
  self->ArmHeartbeat();
  self->open_ = open_streams.Add([weak] {
    if (auto s = weak.lock()) {
      s->Stop();
      s->sink_->EndStream();
    }
  });
  return Status::Ok();
}

WatchStream::~WatchStream() = default;

void WatchStream::OnEvent(const store::WatchEvent& event) {
  if (stopped_) return;
  json data = view_(event.record);
  if (!MatchesListQuery(query_, data, search_field_)) return;
  json out = {{"type", static_cast<int>(event.type)},
              {"id", event.record.id},
              {"data", std::move(data)},
              {"changed_fields", event.changed_fields}};
  sink_->SendStreamData(out.dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n");
  sent_since_heartbeat_ = true;
}

void WatchStream::ArmHeartbeat() {
  timer_.expires_after(std::chrono::milliseconds(static_cast<int64_t>(heartbeat_s_ * 1000)));
  std::weak_ptr<WatchStream> weak = weak_from_this();
  timer_.async_wait([weak](boost::system::error_code ec) {
    auto self = weak.lock();
    if (ec || !self || self->stopped_) return;
    if (!self->sent_since_heartbeat_.exchange(false)) self->sink_->SendStreamData("\n");
    self->ArmHeartbeat();
  });
}

void WatchStream::Stop() {
  if (stopped_.exchange(true)) return;
  // The sink's disconnect callback is what owns this stream (Start): drop it, or the stream and
  // its sink would keep each other alive after the response.
  sink_->SetOnDisconnect(nullptr);
  store_.Unsubscribe(handle_);
  boost::asio::post(timer_.get_executor(), [self = shared_from_this()] { self->timer_.cancel(); });
}

}  // namespace tandem::cluster::manager
