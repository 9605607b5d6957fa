// Port 2005: the Flockbot's socket protocol as the 2014 student clients speak
// it (client_codec.hpp): length-prefixed messages, their "hello" probe, and
// only SP, ACK and DMC for them until they send EXT.
#pragma once

#include <cstdint>

#include "flockbridge/bridge/native_client.hpp"
#include "flockbridge/protocol/message_decoder.hpp"

namespace flockbridge::bridge::flockbot {

/// Port 2005's messages of the Uno's packets: `1C 'S' 'P'` + the SEN
/// payload's values, another packet as it came.
[[nodiscard]] SharedBuffer native_sensor(protocol::ByteView sen_payload);
[[nodiscard]] SharedBuffer native_packet(protocol::ByteView payload);

class FlockbotClient final : public NativeClient {
 public:
  FlockbotClient();
  void feed(protocol::ByteView bytes, SteadyTime now) override { decoder_.feed(bytes, now); }
  [[nodiscard]] std::optional<NativeInput> next() override;
  [[nodiscard]] std::size_t expire(SteadyTime now, std::chrono::milliseconds timeout) override;
  [[nodiscard]] bool admit(std::string_view message, MessageOrigin origin) override;
  /// LNK, DRP, EXT, ERR; a confirmed command's ACK.
  [[nodiscard]] SharedBuffer encode(const Notice& notice) const override;
  [[nodiscard]] bool exclusive_control() const noexcept override { return false; }

 private:
  protocol::MessageDecoder decoder_;
};

}  // namespace flockbridge::bridge::flockbot
