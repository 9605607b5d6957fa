// Port 2005: the Flockbot's socket protocol as the 2014 student clients speak
// it (client_codec.hpp): length-prefixed messages, their "hello" probe, and
// only SP, ACK and DMC for them until they send EXT.
#pragma once

#include "flockbridge/bridge/native_client.hpp"
#include "flockbridge/protocol/flockbot/message_decoder.hpp"

namespace flockbridge::bridge::flockbot {

class FlockbotClient final : public NativeClient {
 public:
  FlockbotClient();
  void feed(protocol::ByteView bytes, SteadyTime now) override { decoder_.feed(bytes, now); }
  [[nodiscard]] std::optional<NativeInput> next() override;
  [[nodiscard]] std::size_t expire(SteadyTime now, std::chrono::milliseconds timeout) override;
  [[nodiscard]] bool admit(std::string_view message, MessageOrigin origin) override;
  [[nodiscard]] bool exclusive_control() const noexcept override { return false; }

 private:
  protocol::MessageDecoder decoder_;
};

}  // namespace flockbridge::bridge::flockbot
