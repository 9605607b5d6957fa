#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "flockbridge/protocol/pioneer/commands.hpp"
#include "flockbridge/protocol/pioneer/models.hpp"
#include "flockbridge/protocol/pioneer/packet.hpp"
#include "flockbridge/protocol/pioneer/sip.hpp"
#include "flockbridge/sim/pioneer/pioneer_model.hpp"

using namespace flockbridge;
using namespace flockbridge::protocol::pioneer;
using namespace std::chrono_literals;
using flockbridge::sim::pioneer::PioneerModel;
using flockbridge::sim::pioneer::PioneerModelSettings;

namespace {

/// Plays the client and the clock; collects what the robot sends.
struct Robot {
  explicit Robot(PioneerModelSettings settings = {})
      : model(
            std::move(settings), [this](protocol::ByteView bytes) { received.feed(bytes); }, [](std::string_view) {}) {}

  void send(const protocol::Bytes& packet) { model.bytes_received(packet, now); }
  void command(protocol::Byte number, Argument argument = NoArgument{}) {
    send(encode_command({number, std::move(argument)}));
  }
  void advance(std::chrono::milliseconds by) {
    const protocol::SteadyTime end = now + by;
    while (true) {
      const auto deadline = model.next_deadline();
      if (!deadline || *deadline > end) break;
      now = std::max(now, *deadline);
      model.tick(now);
    }
    now = end;
    model.tick(now);
  }
  /// Every packet the robot sent since the last call: type and payload.
  std::vector<std::pair<protocol::Byte, protocol::Bytes>> packets() {
    std::vector<std::pair<protocol::Byte, protocol::Bytes>> out;
    while (auto event = received.next()) {
      REQUIRE(event->kind == PacketDecoder::EventKind::Packet);
      out.emplace_back(event->type, protocol::Bytes(event->payload.begin(), event->payload.end()));
    }
    return out;
  }
  std::vector<StandardSip> sips() {
    std::vector<StandardSip> out;
    for (const auto& [type, payload] : packets()) {
      if (!is_standard_sip(type)) continue;
      auto sip = decode_standard_sip(type, payload);
      REQUIRE(sip);
      out.push_back(sip.value());
    }
    return out;
  }
  void connect() {
    for (protocol::Byte sync : {command::kSync0, command::kSync1, command::kSync2}) send(encode_packet(sync));
    command(command::kOpen);
    (void)packets();
  }

  protocol::SteadyTime now{};
  PacketDecoder received;
  PioneerModel model;
};

}  // namespace

TEST_CASE("the simulated Pioneer answers SYNC0, SYNC1 and SYNC2 in turn, naming itself, then opens") {
  Robot robot({.model = "p3dx-sh", .name = "Trilby"});
  robot.send(encode_packet(command::kSync1));  // out of turn: ignored
  CHECK(robot.packets().empty());
  robot.send(encode_packet(command::kSync0));
  robot.send(encode_packet(command::kSync1));
  robot.send(encode_packet(command::kSync2));
  const auto answers = robot.packets();
  REQUIRE(answers.size() == 3);
  CHECK(answers[0].first == 0);
  CHECK(answers[0].second.empty());
  CHECK(answers[1].first == 1);
  CHECK(answers[2].first == 2);
  const auto identity = decode_identity(answers[2].second);
  REQUIRE(identity);
  CHECK(identity.value() == RobotIdentity{"Trilby", "Pioneer", "p3dx-sh"});
  CHECK(robot.model.phase() == PioneerModel::Phase::AwaitOpen);
  robot.advance(1s);
  CHECK(robot.sips().empty());  // no SIP before OPEN
  robot.command(command::kOpen);
  robot.advance(1s);
  const auto sips = robot.sips();
  CHECK(sips.size() == 11);  // one at once, then every 100 ms
  CHECK_FALSE(sips.back().moving);
  CHECK(sips.back().battery_tenths == 126);
  CHECK(sips.back().battery_x10 == std::uint16_t{126});  // an -sh model sends the later fields
}

TEST_CASE("the motors move only once enabled, VEL and RVEL drive, and the SIP says so in the robot's units") {
  Robot robot({.model = "p3dx"});  // 0.485 mm a position unit
  robot.connect();
  robot.command(command::kVel, 200);
  robot.advance(500ms);
  CHECK(robot.model.velocity_mm_s() == 0);
  robot.command(command::kEnable, 1);
  robot.command(command::kVel, 200);
  robot.advance(1s);
  const auto sips = robot.sips();
  REQUIRE_FALSE(sips.empty());
  const StandardSip& last = sips.back();
  CHECK(last.moving);
  CHECK(last.motors_enabled());
  CHECK(last.left_velocity == 200);
  CHECK(last.right_velocity == 200);
  CHECK(last.x * 0.485 == doctest::Approx(200.0).epsilon(0.05));
  CHECK_FALSE(last.battery_x10);  // an older model does not
  robot.command(command::kRVel, -30);
  robot.command(command::kVel, 0);
  robot.advance(1s);
  CHECK(robot.model.heading_deg() == doctest::Approx(-30.0).epsilon(0.05));
  const StandardSip turning = robot.sips().back();
  CHECK(turning.left_velocity == -turning.right_velocity);
  const SipReading reading = convert_sip(turning, *find_robot_model("p3dx"));
  CHECK(reading.rotational_velocity_deg_s == doctest::Approx(-30.0).epsilon(0.02));
  robot.command(command::kStop);
  robot.advance(200ms);
  CHECK_FALSE(robot.sips().back().moving);
}

TEST_CASE("MOVE and DHEAD end by themselves, and HEAD turns to a heading from the origin") {
  Robot robot({.watchdog = 10s});  // the longest turn takes 2.25 s
  robot.connect();
  robot.command(command::kEnable, 1);
  const double x0 = robot.model.x_mm();
  robot.command(command::kMove, 500);
  robot.advance(3s);
  CHECK(robot.model.x_mm() - x0 == doctest::Approx(500.0).epsilon(0.01));
  CHECK(robot.model.velocity_mm_s() == 0);
  robot.command(command::kDHead, 90);
  robot.advance(3s);
  CHECK(robot.model.heading_deg() == doctest::Approx(90.0).epsilon(0.01));
  CHECK(robot.model.rot_velocity_deg_s() == 0);
  robot.command(command::kHead, -45);
  robot.advance(4s);
  CHECK(robot.model.heading_deg() == doctest::Approx(-45.0).epsilon(0.01));
}

TEST_CASE("the robot's watchdog stops it when the client goes quiet, and a new command moves it again") {
  Robot robot({.watchdog = 2000ms});
  robot.connect();
  robot.command(command::kEnable, 1);
  robot.command(command::kVel, 300);
  robot.advance(1900ms);
  CHECK(robot.model.velocity_mm_s() == 300);
  robot.advance(200ms);
  CHECK(robot.model.velocity_mm_s() == 0);
  CHECK(robot.model.watchdog_stops() == 1);
  CHECK(robot.model.phase() == PioneerModel::Phase::Open);  // SIPs go on
  (void)robot.packets();
  robot.advance(300ms);
  CHECK_FALSE(robot.sips().empty());
  robot.command(command::kVel, 100);
  robot.advance(100ms);
  CHECK(robot.model.velocity_mm_s() == 100);
  // PULSEs keep it alive.
  for (int i = 0; i < 10; ++i) {
    robot.advance(500ms);
    robot.command(command::kPulse);
  }
  CHECK(robot.model.velocity_mm_s() == 100);
  CHECK(robot.model.watchdog_stops() == 1);
}

TEST_CASE("sonar readings measure the room, and CONFIG brings the configuration packet") {
  Robot robot({.model = "p3dx-sh", .sonar_per_sip = 16});
  robot.connect();
  robot.advance(100ms);
  const auto sips = robot.sips();
  REQUIRE_FALSE(sips.empty());
  const auto& sonar = sips.back().sonar;
  REQUIRE(sonar.size() == 16);
  // The shared room: walls at x = 2000 and y = 1500 from the start. Disc 3
  // looks 10 degrees left of ahead from (166, 27): 1834 mm to the wall, slanted.
  const auto disc3 = std::find_if(sonar.begin(), sonar.end(), [](const SonarReading& r) { return r.number == 3; });
  REQUIRE(disc3 != sonar.end());
  CHECK(disc3->range == doctest::Approx(1834 / std::cos(10 * 3.14159265 / 180)).epsilon(0.03));  // with noise
  // Disc 0 looks left (+y) from 136 mm left of the centre: 1500 - 136.
  const auto disc0 = std::find_if(sonar.begin(), sonar.end(), [](const SonarReading& r) { return r.number == 0; });
  REQUIRE(disc0 != sonar.end());
  CHECK(disc0->range == doctest::Approx(1364).epsilon(0.03));
  robot.command(command::kConfig, 1);
  const auto packets = robot.packets();
  const auto config = std::find_if(packets.begin(), packets.end(), [](const auto& p) { return p.first == 0x20; });
  REQUIRE(config != packets.end());
  const auto read = decode_config(config->second);
  REQUIRE(read);
  CHECK(read.value().subtype == "p3dx-sh");
  CHECK(read.value().watchdog_ms == 2000);
  CHECK(read.value().sip_cycle_ms == 100);
}

TEST_CASE("CLOSE stops the robot and the SIPs, and the robot then waits for a new SYNC0") {
  Robot robot;
  robot.connect();
  robot.command(command::kEnable, 1);
  robot.command(command::kVel, 200);
  robot.advance(300ms);
  robot.command(command::kClose);
  CHECK(robot.model.phase() == PioneerModel::Phase::AwaitSync0);
  CHECK(robot.model.velocity_mm_s() == 0);
  (void)robot.packets();
  robot.advance(1s);
  CHECK(robot.packets().empty());
  robot.connect();
  CHECK(robot.model.phase() == PioneerModel::Phase::Open);
}

TEST_CASE("an unknown model is refused") {
  CHECK_THROWS_AS(PioneerModel(
                      {.model = "roomba"}, [](protocol::ByteView) {}, [](std::string_view) {}),
                  std::invalid_argument);
}

TEST_CASE("in the shared room: the robot stops against the wall ahead, its front bumper pressed") {
  Robot robot({.model = "p3dx-sh"});
  robot.connect();
  robot.command(command::kEnable, 1);
  robot.command(command::kVel, 500);
  for (int i = 0; i < 10; ++i) {  // 5 s, kept alive
    robot.advance(500ms);
    robot.command(command::kPulse);
  }
  // Against the wall 2 m ahead, its 250 mm radius short of it.
  CHECK(robot.model.x_mm() == doctest::Approx(1750).epsilon(0.001));
  CHECK(robot.model.velocity_mm_s() == 0);
  (void)robot.packets();
  robot.advance(200ms);
  const auto sips = robot.sips();
  REQUIRE_FALSE(sips.empty());
  // The middle one of the front ring's five (bit 3: the ring starts at bit 1).
  CHECK(sips.back().stall_and_bumpers == (1U << 3));
}
