#include "protocol/message.h"

namespace tandem::protocol {

Result<MessageType> PeekType(std::string_view frame) {
  if (frame.empty()) return InvalidArgument("empty message frame");
  return static_cast<MessageType>(static_cast<uint8_t>(frame[0]));
}

}  // namespace tandem::protocol
