// Port 8101's reader (bridge/pioneer/aria_client): what an ARIA program's
// packets become, against a robot link that has met the simulated robot.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <variant>

#include "flockbridge/bridge/pioneer/aria_client.hpp"
#include "flockbridge/protocol/pioneer/link.hpp"
#include "flockbridge/sim/pioneer/pioneer_model.hpp"

using namespace flockbridge;
using namespace std::chrono_literals;
namespace codec = protocol::pioneer;
using bridge::MessageOrigin;
using bridge::NativeInput;
using bridge::pioneer::AriaClient;

namespace {

/// The bridge's link and the simulated robot, connected by the test.
struct Robot final : codec::LinkEvents {
  Robot()
      : model(
            {.model = "amigo-sh", .name = "Ami"},
            [this](protocol::ByteView b) { to_link.insert(to_link.end(), b.begin(), b.end()); },
            [](std::string_view) {}),
        link(codec::LinkSettings{}, *this) {}
  void transmit(protocol::ByteView packet) override { to_robot.insert(to_robot.end(), packet.begin(), packet.end()); }
  void link_changed(protocol::LinkState, std::string_view) override {}
  void sip_received(const codec::StandardSip&, protocol::Byte, protocol::ByteView) override {}
  void packet_received(protocol::Byte, protocol::ByteView) override {}
  void command_finished(protocol::CommandToken, const protocol::Error*) override {}
  void connect() {
    link.port_opened(now);
    for (int i = 0; i < 200 && link.state() != protocol::LinkState::Up; ++i) {
      now += 10ms;
      model.tick(now);
      link.tick(now);
      protocol::Bytes a;
      protocol::Bytes b;
      std::swap(a, to_robot);
      std::swap(b, to_link);
      if (!a.empty()) model.bytes_received(a, now);
      if (!b.empty()) link.bytes_received(b, now);
    }
    REQUIRE(link.state() == protocol::LinkState::Up);
  }
  protocol::SteadyTime now{};
  protocol::Bytes to_robot;
  protocol::Bytes to_link;
  sim::pioneer::PioneerModel model;
  codec::Link link;
};

std::vector<NativeInput> feed(AriaClient& client, const protocol::Bytes& bytes, protocol::SteadyTime now = {}) {
  client.feed(bytes, now);
  std::vector<NativeInput> inputs;
  while (auto input = client.next()) inputs.push_back(std::move(*input));
  return inputs;
}

protocol::Bytes packet(protocol::Byte type) {
  return codec::encode_packet(type);
}

protocol::Bytes command(protocol::Byte number, int value) {
  return codec::encode_command({number, value});
}

std::string reply_of(const NativeInput& input) {
  const auto* reply = std::get_if<bridge::native_input::Reply>(&input);
  REQUIRE(reply != nullptr);
  return *reply->message;
}

}  // namespace

TEST_CASE("aria client: no SYNC2 answer before the bridge has met the robot, then its real name and model") {
  Robot robot;
  AriaClient client(robot.link);
  CHECK(reply_of(feed(client, packet(0)).at(0)) == std::string("\xFA\xFB\x03\x00\x00\x00", 6));
  CHECK(feed(client, packet(1)).size() == 1);
  CHECK(feed(client, packet(2)).empty());  // the program times out and starts again
  CHECK(client.handshake() == 0);

  robot.connect();
  feed(client, packet(0));
  feed(client, packet(1));
  const auto sync2 = feed(client, packet(2));
  REQUIRE(sync2.size() == 1);
  const auto identity = codec::decode_identity(protocol::as_bytes(reply_of(sync2[0])).subspan(4));
  REQUIRE(identity);
  CHECK(identity.value() == codec::RobotIdentity{"Ami", "Pioneer", "amigo-sh"});
  CHECK(client.handshake() == 3);
}

TEST_CASE("aria client: OPEN subscribes, CONFIG is answered from the cache, PULSE, HOSTBAUD and ENABLE 0 stay here") {
  Robot robot;
  robot.connect();
  AriaClient client(robot.link);
  for (protocol::Byte sync = 0; sync < 3; ++sync) feed(client, packet(sync));

  const auto open = feed(client, command(codec::command::kOpen, 1));
  REQUIRE(open.size() == 1);
  CHECK(std::holds_alternative<protocol::Subscribe>(std::get<protocol::ClientRequest>(open[0])));
  const auto config = feed(client, command(codec::command::kConfig, 1));
  REQUIRE(config.size() == 1);
  REQUIRE_FALSE(robot.link.config_packet().empty());
  CHECK(reply_of(config[0]) == std::string(robot.link.config_packet().begin(), robot.link.config_packet().end()));
  CHECK(feed(client, packet(codec::command::kPulse)).empty());
  CHECK(feed(client, command(codec::command::kHostBaud, 38400)).empty());
  CHECK(feed(client, command(codec::command::kEnable, 0)).empty());

  // Everything else is a command for the robot, as the program sent it.
  const protocol::Bytes vel = command(codec::command::kVel, -250);
  const auto forwarded = feed(client, vel);
  REQUIRE(forwarded.size() == 1);
  const auto& send = std::get<protocol::SendCommand>(std::get<protocol::ClientRequest>(forwarded[0]));
  CHECK(send.payload == vel);
  CHECK(feed(client, command(codec::command::kEnable, 1)).size() == 1);

  // CLOSE: no more SIPs, control given up, and types 0-2 are SYNC again.
  const auto close = feed(client, packet(codec::command::kClose));
  REQUIRE(close.size() == 2);
  CHECK(std::holds_alternative<protocol::Unsubscribe>(std::get<protocol::ClientRequest>(close[0])));
  CHECK(std::holds_alternative<bridge::native_input::Release>(close[1]));
  CHECK(client.handshake() == 0);
}

TEST_CASE("aria client: noise is skipped, a bad checksum is reported, a packet cut short expires") {
  Robot robot;
  robot.connect();
  AriaClient client(robot.link);
  // ARIA's "WMS2\r" before SYNC0 on a serial line: skipped.
  protocol::Bytes bytes{'W', 'M', 'S', '2', '\r'};
  const protocol::Bytes sync0 = packet(0);
  bytes.insert(bytes.end(), sync0.begin(), sync0.end());
  CHECK(feed(client, bytes).size() == 1);
  protocol::Bytes damaged = command(codec::command::kVel, 100);
  damaged.back() ^= 0x01;
  const auto bad = feed(client, damaged);
  REQUIRE(bad.size() == 1);
  CHECK(std::holds_alternative<protocol::Error>(bad[0]));
  const protocol::Bytes cut{0xFA, 0xFB, 0x06, 0x0B, 0x3B};
  CHECK(feed(client, cut, protocol::SteadyTime{} + 1s).empty());
  CHECK(client.expire(protocol::SteadyTime{} + 2s, 2s) == 0);  // not yet
  CHECK(client.expire(protocol::SteadyTime{} + 3s, 2s) >= 1);
  CHECK(client.admit(std::string("\xFA\xFB", 2), MessageOrigin::Robot));
  CHECK_FALSE(client.admit("\x04ERR", MessageOrigin::Bridge));
}
