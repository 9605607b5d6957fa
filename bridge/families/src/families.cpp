#include "flockbridge/bridge/families.hpp"

#include <algorithm>
#include <array>
#include <memory>

#include "flockbridge/bridge/flockbot/driver.hpp"

namespace flockbridge::bridge {
namespace {

template <typename Driver>
std::unique_ptr<RobotDriver> make(uv_loop_t* loop, const Config& config, RobotDriver::Host& host) {
  return std::make_unique<Driver>(loop, config, host);
}

constexpr std::array kFamilies{
    RobotFamily{"flockbot", "Flockbot (an Arduino Uno on USB serial)", 2005, 115200, &make<flockbot::FlockbotDriver>},
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

}  // namespace flockbridge::bridge
