// WatchStream: one `GET /v2/<resource>?watch=true` response. Replays every matching row as
// type 1 (created), then writes each committed change of the table as
// `{"type": 1|2|3, "id": N, "data": {...}, "changed_fields": {...}}` followed by a blank line,
// and a blank line after `heartbeat_s` without events. Events of rows that do not match the
// list filters are not sent. Ends when the client leaves, or with its last chunk when the
// manager stops (OpenStreams::EndAll).
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <atomic>
#include <functional>
#include <memory>

#include "cluster/manager/list_query.h"
#include "cluster/manager/open_streams.h"
#include "cluster/store/store.h"
#include "http/types.h"

namespace tandem::cluster::manager {

// The row as the API shows it (secrets removed).
using PublicView = std::function<nlohmann::json(const store::Record&)>;

class WatchStream : public std::enable_shared_from_this<WatchStream> {
 public:
  // Starts streaming on `sink`. Errors: the store's (nothing was sent then).
  static Status Start(store::Store& store, store::Table table, ListQuery query,
                      std::string search_field, PublicView view,
                      std::shared_ptr<http::ResponseSink> sink, boost::asio::io_context& io_context,
                      double heartbeat_s, OpenStreams& open_streams);
  ~WatchStream();

 private:
  WatchStream(store::Store& store, boost::asio::io_context& io_context)
      : store_(store), timer_(boost::asio::make_strand(io_context)) {}
  void OnEvent(const store::WatchEvent& event);
  void ArmHeartbeat();
  void Stop();

  store::Store& store_;
  store::Table table_{};
  ListQuery query_;
  std::string search_field_;
  PublicView view_;
  std::shared_ptr<http::ResponseSink> sink_;
  boost::asio::steady_timer timer_;  // on a strand: re-armed by its handler, cancelled by Stop
  double heartbeat_s_ = 15;
  std::atomic<int64_t> handle_{0};
  std::atomic<bool> sent_since_heartbeat_{false};
  std::atomic<bool> stopped_{false};
  std::shared_ptr<void> open_;  // registered in OpenStreams while alive
};

}  // namespace tandem::cluster::manager
