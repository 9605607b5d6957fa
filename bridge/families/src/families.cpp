#include "flockbridge/bridge/families.hpp"

#include <algorithm>
#include <array>
#include <memory>
#include <string_view>
#include <vector>

#include "flockbridge/bridge/flockbot/driver.hpp"
#include "flockbridge/bridge/none/driver.hpp"
#include "flockbridge/bridge/pioneer/driver.hpp"
#include "flockbridge/bridge/smr/driver.hpp"
#include "flockbridge/bridge/suggest.hpp"

namespace flockbridge::bridge {
namespace {

template <typename Driver>
std::unique_ptr<RobotDriver> make(uv_loop_t* loop, const Config& config, RobotDriver::Host& host) {
  return std::make_unique<Driver>(loop, config, host);
}

constexpr std::array kFamilies{
    RobotFamily{"flockbot", "Flockbot (an Arduino Uno on USB serial)", 2005, 115200, "/dev/flockbot",
                &make<flockbot::FlockbotDriver>},
    RobotFamily{"pioneer", "Pioneer 2/3 and AmigoBot (AROS, on the robot's HOST serial port)", 8101, 9600,
                "/dev/ttyUSB0", &make<pioneer::PioneerDriver>},
    RobotFamily{"smr", "DTU Small Mobile Robot (SMRD's RS485 bus, on a serial adapter)", 24901, 115200, "/dev/ttyS0",
                &make<smr::SmrDriver>},
    RobotFamily{"none", "no robot: a bridge that only serves the fleet (the class hub, --hub)", 0, 115200, "",
                &make<none::NoRobotDriver>},
};

}  // namespace

std::span<const RobotFamily> robot_families() noexcept {
  return kFamilies;
}

const RobotFamily* find_robot_family(std::string_view name) noexcept {
  const auto found =
      std::find_if(kFamilies.begin(), kFamilies.end(), [&](const RobotFamily& family) { return family.name == name; });
  return found == kFamilies.end() ? nullptr : &*found;
}

protocol::Result<Config> family_defaults(const std::string& name) {
  const RobotFamily* family = find_robot_family(name);
  if (family == nullptr) {
    std::string known;
    std::vector<std::string_view> names;
    for (const RobotFamily& row : kFamilies) {
      known += (known.empty() ? "" : ", ") + std::string(row.name);
      names.push_back(row.name);
    }
    return protocol::Error{"robot.family: there is no robot family '" + name + "'" + did_you_mean(name, names) +
                           "; the families are " + known};
  }
  Config config;
  config.family = family->name;
  config.device = family->default_device;
  config.baud = family->default_baud;
  config.port = family->native_port;
  return config;
}

}  // namespace flockbridge::bridge
