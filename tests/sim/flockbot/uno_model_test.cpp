#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "flockbridge/protocol/flockbot/frame.hpp"
#include "flockbridge/protocol/flockbot/link.hpp"
#include "flockbridge/protocol/flockbot/uno_packets.hpp"
#include "flockbridge/sim/flockbot/uno_model.hpp"

using namespace flockbridge;
using namespace std::chrono_literals;
using protocol::Bytes;

namespace {

struct Harness {
  std::vector<Bytes> sent;  ///< payloads
  std::vector<std::string> log;
  sim::UnoModel uno;
  protocol::SteadyTime now{};

  explicit Harness(sim::UnoModelSettings settings = {})
      : uno(
            std::move(settings),
            [this](protocol::ByteView frame) {
              protocol::flockbot::FrameDecoder decoder(255);
              decoder.feed(frame);
              auto event = decoder.next();
              sent.emplace_back(event && event->kind == protocol::flockbot::FrameDecoder::EventKind::Frame
                                    ? Bytes(event->payload.begin(), event->payload.end())
                                    : Bytes{'?'});
            },
            [this](std::string_view line) { log.emplace_back(line); }) {}

  void host_sends(std::string_view payload) {
    uno.bytes_received(protocol::flockbot::encode_frame(protocol::as_bytes(payload)), now);
  }
  void host_sends(const Bytes& payload) { uno.bytes_received(protocol::flockbot::encode_frame(payload), now); }
  void run_for(std::chrono::milliseconds duration) {
    const auto end = now + duration;
    while (auto deadline = uno.next_deadline()) {
      if (*deadline > end) break;
      now = std::max(now, *deadline);
      uno.tick(now);
    }
    now = end;
  }
  std::size_t count(std::string_view tag) const {
    std::size_t n = 0;
    for (const Bytes& p : sent) n += p.size() >= 3 && std::string(p.begin(), p.begin() + 3) == tag;
    return n;
  }
  protocol::flockbot::SensorReading last_reading() const {
    for (auto it = sent.rbegin(); it != sent.rend(); ++it) {
      if (auto packet = protocol::flockbot::parse_uno_packet(*it);
          packet && packet.value().kind == protocol::flockbot::UnoPacketKind::Sensor) {
        return packet.value().sensor;
      }
    }
    FAIL("no sensor packet");
    return {};
  }
  void boot() {
    uno.power_on(now);
    run_for(200ms);
    REQUIRE(count("ACK") == 1);
    host_sends(protocol::flockbot::encode_config_payload({}));
    REQUIRE(uno.phase() == sim::UnoModel::Phase::Running);
  }
};

}  // namespace

TEST_CASE("boot: ACK, then nothing until CFG, then sensors at the rate asked") {
  Harness h;
  h.uno.power_on(h.now);
  h.run_for(1000ms);
  CHECK(h.sent == std::vector<Bytes>{Bytes{'A', 'C', 'K'}});
  h.host_sends(protocol::flockbot::encode_config_payload({}));
  CHECK(h.count("ACK") == 2);
  h.run_for(1000ms);
  CHECK(h.count("SEN") >= 32);
  CHECK(h.count("SEN") <= 35);
}

TEST_CASE("moving turns the odometers and wheel-watchers - stop holds them") {
  Harness h;
  h.boot();
  h.host_sends(Bytes{'D', 'M', 'S', 50});
  h.run_for(1000ms);
  const auto moving = h.last_reading();
  CHECK(moving.odometer_left == doctest::Approx(500).epsilon(0.1));
  CHECK(moving.odometer_avg == moving.odometer_left);
  CHECK(moving.wheel_watcher_left > 100);
  h.host_sends("DST");
  h.run_for(100ms);
  const auto stopped = h.last_reading();
  h.run_for(1000ms);
  CHECK(h.last_reading().odometer_left == stopped.odometer_left);
}

TEST_CASE("a move to a distance ends with DMC at that distance") {
  Harness h;
  h.boot();
  h.host_sends(Bytes{'D', 'M', 'D', 100, 20});  // 20 cm at 100 cm/s
  h.run_for(150ms);
  CHECK(h.count("DMC") == 0);
  h.run_for(200ms);
  CHECK(h.count("DMC") == 1);
  CHECK(h.last_reading().odometer_avg == 200);
}

TEST_CASE("a degree rotation ends with DMC and turns the wheels in opposite directions") {
  Harness h;
  h.boot();
  h.host_sends(Bytes{'D', 'R', 'D', 50, 90, 0});
  h.run_for(2000ms);
  CHECK(h.count("DMC") == 1);
  const auto r = h.last_reading();
  CHECK(r.odometer_left < 0);
  CHECK(r.odometer_right == -r.odometer_left);
  // A quarter turn on a 100 mm wheel base: each wheel travels 78.5 mm.
  CHECK(r.odometer_right == doctest::Approx(79).epsilon(0.02));
}

TEST_CASE("NAK both ways: a bad frame is NAKed, a NAK resends the last packet") {
  Harness h;
  h.boot();
  Bytes broken = protocol::flockbot::encode_frame(protocol::as_bytes("DGO"));
  broken.back() ^= 1;
  h.uno.bytes_received(broken, h.now);
  CHECK(h.sent.back() == Bytes{'N', 'A', 'K'});
  h.host_sends("DGC");
  h.run_for(40ms);
  const Bytes last = h.sent.back();
  const std::size_t before = h.sent.size();
  h.host_sends("NAK");
  CHECK(h.sent.size() == before + 1);
  CHECK(h.sent.back() == last);
}

TEST_CASE("injected faults: NAK the next frames, corrupt the next packet, reboot") {
  Harness h;
  h.boot();
  h.uno.nak_next(2);
  h.host_sends("DGO");
  h.host_sends("DGO");
  h.host_sends("DGO");
  CHECK(h.count("NAK") == 2);
  h.uno.corrupt_next();
  h.run_for(40ms);
  CHECK(std::count(h.sent.begin(), h.sent.end(), Bytes{'?'}) == 1);
  h.uno.reboot(h.now);
  h.run_for(200ms);
  CHECK(h.uno.phase() == sim::UnoModel::Phase::AwaitCfg);
  CHECK(h.sent.back() == Bytes{'A', 'C', 'K'});
}

TEST_CASE("in the shared room: the IR sensors see the walls, the wall stops the robot and presses its bumper") {
  using Sim = protocol::flockbot::SimulatedUno;
  Harness h;
  h.boot();
  h.run_for(100ms);
  // From the start, facing the wall 2 m ahead: the front sensor (ir2, 80 mm
  // forward) sees nothing within 800 mm; the left one the wall 1.5 m away: beyond too.
  auto reading = h.last_reading();
  CHECK_FALSE(Sim::kIrRange.mm(reading.ir[2]));
  // Drive on at 50 cm/s until the wall stops it: 2000 mm less the robot's radius.
  h.host_sends(Bytes{'D', 'M', 'S', 50});
  h.run_for(5000ms);
  CHECK(h.uno.x_mm() == doctest::Approx(2000 - Sim::kRadiusMm).epsilon(0.02));
  reading = h.last_reading();
  const auto front = Sim::kIrRange.mm(reading.ir[2]);
  REQUIRE(front);
  CHECK(*front == doctest::Approx(Sim::kRadiusMm - Sim::kIrMountMm).epsilon(0.2));  // with its noise
  CHECK((reading.l_bump & 0x03) != 0);                                              // a front bumper
  CHECK(reading.odometer_left < 1950);  // the wheels slip against the wall: no more counts
  const auto odometer = reading.odometer_left;
  h.run_for(500ms);
  CHECK(h.last_reading().odometer_left == odometer);
  // Backing off frees the bumper.
  h.host_sends(Bytes{'D', 'M', 'S', static_cast<std::uint8_t>(-20)});
  h.run_for(500ms);
  CHECK(h.last_reading().l_bump == 0);
}
