// Port 8101: an ARIA program (or any client of a Pioneer's HOST port) as it
// would talk to the robot or to MobileSim, sharing the robot with others.
//
// Conditions of the problem (aros.md): every program does the SYNC0, SYNC1,
// SYNC2 handshake, opens the robot, asks for its configuration, sets its
// limits and enables the motors, whether it will drive or only watch; as it
// leaves it sends ENABLE 0 and CLOSE. The robot has one client: the bridge.
// So for each program:
// - SYNC0/1/2 are answered here, SYNC2 with the robot's real name, class and
//   subclass (ARIA loads the subclass's parameters); a program that connects
//   before the bridge has met the robot gets no SYNC2 answer, and retries;
// - OPEN starts the relay of every SIP to it (a Subscribe), CONFIG is
//   answered from the configuration packet the bridge read at connect;
//   PULSE and HOSTBAUD are absorbed (the bridge keeps the robot alive and
//   owns its baud); CLOSE ends its relay and its control (a Release) and the
//   handshake starts again;
// - ENABLE 0 is absorbed: the motors stay on for the next program (the
//   bridge stops the robot whenever control ends);
// - every other command is for the robot, where the core's control rule
//   applies: only the program holding control is forwarded.
// Bytes that are not packets (ARIA's "WMS2\r" on a serial line, noise) are
// skipped by the packet decoder.
#pragma once

#include <deque>

#include "flockbridge/bridge/native_client.hpp"
#include "flockbridge/protocol/pioneer/link.hpp"
#include "flockbridge/protocol/pioneer/packet.hpp"

namespace flockbridge::bridge::pioneer {

class AriaClient final : public NativeClient {
 public:
  /// `link` is the bridge's link to the robot: its identity and configuration packet.
  explicit AriaClient(const protocol::pioneer::Link& link) : link_(link) {}

  void feed(protocol::ByteView bytes, SteadyTime now) override;
  [[nodiscard]] std::optional<NativeInput> next() override;
  [[nodiscard]] std::size_t expire(SteadyTime now, std::chrono::milliseconds timeout) override;
  [[nodiscard]] bool admit(std::string_view message, MessageOrigin origin) override;
  [[nodiscard]] bool exclusive_control() const noexcept override { return true; }

  /// How far the handshake is: 0 to 2, the SYNC expected next; 3: done.
  [[nodiscard]] int handshake() const noexcept { return synced_; }

 private:
  void on_packet(protocol::Byte type, protocol::ByteView payload);
  void reply(protocol::Bytes packet);

  const protocol::pioneer::Link& link_;
  protocol::pioneer::PacketDecoder decoder_;
  SteadyTime last_bytes_{};
  int synced_ = 0;
  std::deque<NativeInput> inputs_;
};

}  // namespace flockbridge::bridge::pioneer
