#include "e2e/driving.hpp"

#include <string>

#include "flockbridge/bridge/families.hpp"
#include "support/pioneer/aria_client.hpp"
#include "support/foxglove_client.hpp"
#include "support/flockbot/legacy_client.hpp"
#include "support/smr/smr_client.hpp"

namespace flockbridge::testing {
namespace {

template <typename Client>
Driver keep(Client client) {
  return std::make_shared<Client>(std::move(client));
}

Driver native_driver(Rig& rig, TestNetwork& network, const std::string& family) {
  const std::uint16_t port = rig.port();
  if (family == "flockbot") {
    // The 2014 student program: hello, its sensors, then a move.
    auto student = network.on_laptop([port] { return LegacyClient(port); });
    REQUIRE_MESSAGE(student.test_connection(), "hello was not answered: " << student.death());
    student.register_sensors(0);
    student.move_speed(20);
    return keep(std::move(student));
  }
  if (family == "pioneer") {
    auto program = network.on_laptop([port] { return AriaClient(port); });
    REQUIRE(program.connect());
    program.set_velocity(150, 0);
    program.run_for(std::chrono::milliseconds(300));
    return keep(std::move(program));
  }
  if (family == "smr") {
    auto program = network.on_laptop([port] { return SmrClient(port); });
    REQUIRE(program.read());
    program.write(20, 20);
    for (int i = 0; i < 10; ++i) REQUIRE(program.read());
    return keep(std::move(program));
  }
  FAIL("no program of the family '" << family << "' to drive through its own port: add one to tests/e2e/driving.cpp");
  return nullptr;
}

Driver json_driver(Rig& rig, TestNetwork& network, const std::string&) {
  const std::uint16_t port = rig.json_port();
  auto client = network.on_laptop([port] { return TcpClient(port); });
  REQUIRE(client.read_json_type("hello"));
  client.send(common_drive().dump() + "\n");
  REQUIRE(client.read_json_type("ok"));
  return keep(std::move(client));
}

Driver websocket_driver(Rig& rig, TestNetwork& network, const std::string&) {
  const std::uint16_t port = rig.http_port();
  auto page = network.on_laptop([port] { return WebSocketClient(port); });
  REQUIRE_MESSAGE(page.accepted(), page.handshake_response());
  REQUIRE(page.read_json_type("hello"));
  page.send_json(common_drive());
  REQUIRE(page.read_json_type("ok"));
  return keep(std::move(page));
}

Driver foxglove_driver(Rig& rig, TestNetwork& network, const std::string&) {
  const std::uint16_t port = rig.foxglove_port();
  auto viewer = network.on_laptop([port] { return FoxgloveClient(port); });
  REQUIRE(viewer.open());
  viewer.subscribe(1, "/sensor");
  viewer.advertise(5, "/command");
  viewer.publish(5, common_drive());
  return keep(std::move(viewer));
}

}  // namespace

const nlohmann::json& common_drive() {
  static const nlohmann::json drive = {{"cmd", "drive"}, {"v_mm_s", 150}, {"w_deg_s", 0}};
  return drive;
}

const std::vector<DrivingPath>& driving_paths() {
  static const std::vector<DrivingPath> all{
      {"own port", {}, native_driver, true},
      {"JSON", {}, json_driver},
      {"WebSocket", {}, websocket_driver},
      {"Foxglove", {"--foxglove"}, foxglove_driver},
  };
  return all;
}

bool DrivingPath::serves(const std::string& family) const {
  if (!own_port) return true;
  const bridge::RobotFamily* described = bridge::find_robot_family(family);
  REQUIRE_MESSAGE(described != nullptr, "no family '" << family << "' in the daemon's table");
  return described->native_port != 0;
}

std::vector<std::string> robot_families() {
  const std::vector<std::string_view> names = bridge::robot_family_names();
  return {names.begin(), names.end()};
}

RigOptions rig_on(TestNetwork& network, const std::string& family, const std::vector<std::string>& bridge_args) {
  RigOptions options;
  options.robot = family;
  options.network = &network;
  options.bridge_args = bridge_args;
  return options;
}

}  // namespace flockbridge::testing
