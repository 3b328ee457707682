// StatusCode ↔ HTTP status, one table for every server built on http/.
#pragma once

#include "core/status.h"

namespace tandem::http {

// HTTP status for a StatusCode (kInvalidArgument → 400, kNotFound → 404, kConflict → 409, ...).
int HttpStatusFor(StatusCode code);

// The reason phrase in CamelCase without spaces ("NotFound", "Conflict"), as GPUStack's error
// bodies carry it in `reason`; "InternalServerError" for statuses not listed.
const char* HttpReasonFor(int http_status);

}  // namespace tandem::http
