#include "http/status.h"

namespace tandem::http {

int HttpStatusFor(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kUnauthenticated:
      return 401;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kMethodNotAllowed:
      return 405;
    case StatusCode::kConflict:
      return 409;
    case StatusCode::kPayloadTooLarge:
      return 413;
    case StatusCode::kResourceExhausted:
      return 503;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kUnimplemented:
      return 501;
    case StatusCode::kDataLoss:
      return 500;
    case StatusCode::kInternal:
      return 500;
  }
  return 500;
}

const char* HttpReasonFor(int http_status) {
  switch (http_status) {
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 204:
      return "NoContent";
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 405:
      return "MethodNotAllowed";
    case 408:
      return "RequestTimeout";
    case 409:
      return "Conflict";
    case 413:
      return "PayloadTooLarge";
    case 415:
      return "UnsupportedMediaType";
    case 429:
      return "TooManyRequests";
    case 431:
      return "RequestHeaderFieldsTooLarge";
    case 501:
      return "NotImplemented";
    case 503:
      return "ServiceUnavailable";
    default:
      return "InternalServerError";
  }
}

const char* OpenAiErrorTypeFor(int http_status) {
  switch (http_status) {
    case 400:
      return "BadRequestError";
    case 401:
      return "AuthenticationError";
    case 403:
      return "PermissionDeniedError";
    case 404:
      return "NotFoundError";
    case 405:
      return "MethodNotAllowedError";
    case 408:
      return "RequestTimeoutError";
    case 409:
      return "ConflictError";
    case 413:
      return "RequestEntityTooLargeError";
    case 415:
      return "UnsupportedMediaTypeError";
    case 429:
      return "RateLimitError";
    case 431:
      return "RequestHeaderFieldsTooLargeError";
    case 501:
      return "NotImplementedError";
    case 503:
      return "ServiceUnavailableError";
    default:
      return "InternalServerError";
  }
}

}  // namespace tandem::http
