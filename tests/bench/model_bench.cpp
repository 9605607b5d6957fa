// model_bench: what the robot model's fields cost each sensor message, for
// each family: the bytes the family's own fields take and the bytes the
// model adds, and the time to write each part, from the encoders the bridge
// uses (the Flockbot's as the simulated Uno reads, a p3dx-sh with 16 sonar
// discs, an SMR with 6 IR sensors). It prints figures and asserts nothing.
//
//   model_bench [--messages N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "flockbridge/protocol/flockbot/json.hpp"
#include "flockbridge/protocol/flockbot/robot_model.hpp"
#include "flockbridge/protocol/json_codec.hpp"
#include "flockbridge/protocol/pioneer/json.hpp"
#include "flockbridge/protocol/pioneer/models.hpp"
#include "flockbridge/protocol/smr/json.hpp"
#include "flockbridge/protocol/smr/robot_model.hpp"

namespace {

namespace protocol = flockbridge::protocol;
using Clock = std::chrono::steady_clock;

/// The median of `rounds` timings of `messages` calls, in nanoseconds a call.
double ns_per_call(const std::function<std::size_t()>& call, int messages) {
  std::vector<double> rounds;
  std::size_t sink = 0;
  for (int round = 0; round < 7; ++round) {
    const auto start = Clock::now();
    for (int i = 0; i < messages; ++i) sink += call();
    rounds.push_back(std::chrono::duration<double, std::nano>(Clock::now() - start).count() / messages);
  }
  if (sink == 0) std::puts("");  // keeps the calls from being optimised away
  std::sort(rounds.begin(), rounds.end());
  return rounds[rounds.size() / 2];
}

/// A state with every field known and every range seeing something.
protocol::RobotState full_state(const protocol::RobotGeometry& geometry) {
  protocol::RobotState state;
  state.pose = protocol::Pose{1234.5, -678.9, 45.6};
  state.v_mm_s = 199.8;
  state.w_deg_s = -12.3;
  state.battery_v = 12.41;
  for (std::size_t i = 0; i < geometry.ranges.size(); ++i)
    state.ranges_mm.emplace_back(300.0 + 37.0 * static_cast<double>(i));
  return state;
}

void report(std::string_view family, const std::string& own, const protocol::json::RobotStateEncoder& model,
            const std::function<std::size_t()>& encode_own, int messages) {
  const protocol::RobotState state = full_state(model.robot_geometry());
  std::string fields;
  model.append(fields, state);
  const double own_ns = ns_per_call(encode_own, messages);
  const double model_ns = ns_per_call(
      [&] {
        std::string out;
        out.reserve(fields.size());
        model.append(out, state);
        return out.size();
      },
      messages);
  std::printf("| %-9s | %5zu B | +%5zu B (%4.0f%%) | %6.0f ns | +%5.0f ns (%4.0f%%) |\n", std::string(family).c_str(),
              own.size(), fields.size() + 1,
              100.0 * static_cast<double>(fields.size() + 1) / static_cast<double>(own.size()), own_ns, model_ns,
              100.0 * model_ns / own_ns);
}

}  // namespace

int main(int argc, char** argv) {
  int messages = 200'000;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::string_view(argv[i]) == "--messages") messages = std::max(1, std::atoi(argv[i + 1]));
  }
  std::printf("# the robot model's fields in a sensor message: bytes, and time to write (p50 of 7 rounds of %d)\n",
              messages);
  std::printf("| family    | its own |  the model adds  | its own  | the model adds    |\n");
  std::printf("|---|---|---|---|---|\n");

  {  // Flockbot
    protocol::flockbot::SensorReading r;
    r.battery = 790;
    r.ir = {412, 388, 902, 120, 77};
    r.odometer_left = 1234;
    r.odometer_right = 1240;
    r.odometer_avg = 1237;
    const protocol::json::RobotStateEncoder model(protocol::flockbot::robot_geometry(
        protocol::flockbot::SimulatedUno::units(), protocol::flockbot::SimulatedUno::body()));
    const std::string own = protocol::flockbot::sensor_json(r, 123456, 1.7e9);
    report(
        "flockbot", own, model, [&] { return protocol::flockbot::sensor_json(r, 123456, 1.7e9).size(); }, messages);
  }
  {  // Pioneer p3dx-sh
    const protocol::pioneer::RobotModel* p3dx = protocol::pioneer::find_robot_model("p3dx-sh");
    protocol::pioneer::SipSnapshot snapshot;
    snapshot.sip.x = 1234;
    snapshot.sip.battery_tenths = 126;
    snapshot.reading = protocol::pioneer::SipReading{};
    for (int disc = 0; disc < 4; ++disc) snapshot.reading->sonar.push_back({disc, 1000.0 + disc});
    const protocol::json::RobotStateEncoder model(protocol::pioneer::robot_geometry(p3dx));
    const std::string own = protocol::pioneer::sip_json(snapshot, 123456, 1.7e9);
    report(
        "pioneer", own, model, [&] { return protocol::pioneer::sip_json(snapshot, 123456, 1.7e9).size(); }, messages);
  }
  {  // SMR
    protocol::smr::PeriodSnapshot snapshot;
    snapshot.period.reading.parts = 0x1F;
    snapshot.period.reading.ir = {12, 40, 90, 30, 5, 0};
    const protocol::json::RobotStateEncoder model(
        protocol::smr::robot_geometry(protocol::smr::Geometry{}, protocol::smr::kSimulatedIrRange));
    const std::string own = protocol::smr::period_json(snapshot, 123456, 1.7e9);
    report(
        "smr", own, model, [&] { return protocol::smr::period_json(snapshot, 123456, 1.7e9).size(); }, messages);
  }
  return 0;
}
