// Envelope for control-plane messages: one ZeroMQ frame = [1 byte MessageType][msgpack body].
#pragma once

#include <msgpack.hpp>

#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace tandem::protocol {

enum class MessageType : uint8_t {
  kAddRequest = 1,       // EngineRequest, API server → engine
  kAbortRequests = 2,    // AbortRequests, API server → engine
  kOutputs = 3,          // EngineOutputs, engine → API server (also the heartbeat)
  kReady = 4,            // EngineStats, engine → API server once the model is loaded
  kShutdown = 5,         // empty, API server → engine
  kEngineHello = 10,     // EngineHello, engine → head handshake ROUTER
  kHandshakeReply = 11,  // HandshakeReply, head → engine
  kEngineReady = 12,     // EngineReadyInfo, engine → head once loaded
  kEngineStats = 13,     // EngineStats, engine → coordinator
  kLoadSnapshot = 14,    // LoadSnapshot, coordinator → API servers
  kStartWave = 15,       // StartWave, engine → coordinator → every engine (DP waves)
  kApiServerHello = 16,  // ApiServerHello, API machine → head handshake ROUTER (hybrid LB)
  kWorkerInit = 20,      // WorkerInit, engine (TP rank 0) → TP worker processes
  kStepPlan = 21,        // StepPlan, engine → TP worker processes, every step
  kWorkerAck = 22,       // WorkerAck, TP worker → engine (init done, step done or failed)
};

// Serializes `msg` with a leading type byte.
template <typename T>
std::string Encode(MessageType type, const T& msg) {
  msgpack::sbuffer buf;
  buf.write(reinterpret_cast<const char*>(&type), 1);
  msgpack::pack(buf, msg);
  return std::string(buf.data(), buf.size());
}

// Reads the type byte of a frame; kInvalidArgument on an empty frame.
Result<MessageType> PeekType(std::string_view frame);

// Decodes the body of a frame made by Encode. Errors: kInvalidArgument when the bytes are not
// a valid T (never throws across the module boundary).
template <typename T>
Status Decode(std::string_view frame, T* out) {
  if (frame.empty()) return InvalidArgument("empty message frame");
  try {
    msgpack::object_handle oh = msgpack::unpack(frame.data() + 1, frame.size() - 1);
    oh.get().convert(*out);
  } catch (const std::exception& e) {
    return InvalidArgument(std::string("cannot decode message: ") + e.what());
  }
  return Status::Ok();
}

}  // namespace tandem::protocol
