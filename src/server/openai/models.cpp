#include "server/openai/models.h"

#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "server/json_dump.h"

namespace tandem::server::openai {

std::string ModelListJson(const ServerConfig& config) {
  nlohmann::json data = nlohmann::json::array();
  const int64_t created = UnixSeconds();
  for (const std::string& name : config.served_model_names) {
    data.push_back({{"id", name},
                    {"object", "model"},
                    {"created", created},
                    {"owned_by", "tandem"},
                    {"root", config.model_root.empty() ? name : config.model_root},
                    {"parent", nullptr},
                    {"max_model_len", config.max_model_len}});
  }
  return DumpJson({{"object", "list"}, {"data", data}});
}

void HandleModels(const ServerContext& context, const HttpRequest& request,
                  std::shared_ptr<ResponseSink> sink) {
  sink->SendResponse(200, "application/json", ModelListJson(context.config));
}

}  // namespace tandem::server::openai
