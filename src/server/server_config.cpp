#include "server/server_config.h"

#include <fmt/format.h>

namespace tandem::server {

Status ServerConfig::Validate() const {
  if (served_model_names.empty()) {
    return InvalidArgument("ServerConfig.served_model_names is empty; expected at least one name "
                           "(--served-model-name or the model path)");
  }
  if (max_model_len < 1) {
    return InvalidArgument(fmt::format("ServerConfig.max_model_len is {}; expected >= 1",
                                       max_model_len));
  }
  if (max_body_bytes == 0) return InvalidArgument("ServerConfig.max_body_bytes must be > 0");
  if (num_io_threads < 1) {
    return InvalidArgument(fmt::format("ServerConfig.num_io_threads is {}; expected >= 1",
                                       num_io_threads));
  }
  return Status::Ok();
}

}  // namespace tandem::server
