#include "flockbridge/bridge/none/family.hpp"

#include "flockbridge/bridge/none/driver.hpp"

namespace flockbridge::bridge::none {

const RobotFamily& robot_family() noexcept {
  static const RobotFamily family{
      .name = kFamily,
      .robots = "no robot: a bridge that only serves the fleet (the class hub, --hub)",
      .has_robot = false,
      .make_driver = &make_driver<NoRobotDriver>,
  };
  return family;
}

}  // namespace flockbridge::bridge::none
