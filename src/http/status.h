// StatusCode ↔ HTTP status, one table for every server built on http/.
#pragma once

#include "core/status.h"

namespace tandem::http {

// HTTP status for a StatusCode (kInvalidArgument → 400, kNotFound → 404, kConflict → 409, ...).
int HttpStatusFor(StatusCode code);

// The reason phrase in CamelCase without spaces ("NotFound", "Conflict"), as GPUStack's error
// bodies carry it in `reason`; "InternalServerError" for statuses not listed.
const char* HttpReasonFor(int http_status);

// The `type` of an OpenAI-shaped error body for an HTTP status: the openai-python exception
// class vLLM names it after ("BadRequestError" for 400, "NotFoundError" for 404, ...);
// statuses openai-python has no class for get the status's name + "Error"
// ("RequestHeaderFieldsTooLargeError" for 431); "InternalServerError" for the rest. One table
// for `tandem serve` (server/errors.cpp) and the manager's OpenAI routes (cluster/manager).
const char* OpenAiErrorTypeFor(int http_status);

}  // namespace tandem::http
