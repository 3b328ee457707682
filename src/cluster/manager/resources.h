// Validation of the /v2 request bodies (GPUStack's field names, MANAGER.md §3): each Validate*
// takes the body a client sent and returns the resource's stored fields, defaults filled.
// Unknown fields and wrong types are refused naming the field (kInvalidArgument); read-only
// fields (id, created_at, updated_at, resource_version and the ones each resource lists) are
// accepted and ignored, so a body built from a GET can be sent back (the UI's Clone and Edit).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "core/status.h"

namespace tandem::cluster::manager {

// The built-in backend: `tandem serve`, parameters in space format, health at /v1/models.
inline constexpr const char* kBuiltinBackend = "tandem";

// A deployment (/v2/models).
Result<nlohmann::json> ValidateModel(const nlohmann::json& body);

// A backend (/v2/inference-backends). Custom names must end in "-custom".
Result<nlohmann::json> ValidateBackend(const nlohmann::json& body);

// The built-in `tandem` backend's row.
nlohmann::json BuiltinBackend();

// An API key's create body: name, description, expires_in (s; <= 0 never), scope[]
// (*, management, inference), allowed_model_names[] (empty = all).
Result<nlohmann::json> ValidateApiKeyRequest(const nlohmann::json& body);

// A user: username, password (required when `create`), is_admin.
Result<nlohmann::json> ValidateUserRequest(const nlohmann::json& body, bool create);

// A worker's editable fields (labels, maintenance) merged into `current`.
Result<nlohmann::json> ValidateWorkerUpdate(const nlohmann::json& body,
                                            const nlohmann::json& current);

// Names of deployments, backends, workers: 1–63 characters of [A-Za-z0-9._-], starting with a
// letter or digit. Errors: kInvalidArgument naming `field`.
Status ValidateName(const std::string& field, const std::string& name);

}  // namespace tandem::cluster::manager
