#include "flockbridge/bridge/none/driver.hpp"

namespace flockbridge::bridge::none {
namespace {

protocol::Error no_robot() {
  return protocol::Error{"this bridge has no robot (it is the class hub): connect to a robot's own bridge to drive it",
                         protocol::ErrorCode::LinkDown};
}

}  // namespace

NoRobotDriver::NoRobotDriver(uv_loop_t* /*loop*/, const Config& /*config*/, RobotDriver::Host& /*host*/) {}

std::unique_ptr<NativeClient> NoRobotDriver::make_native_client() {
  return nullptr;  // never asked: native_client_limit() is 0, so the core opens no such port
}

protocol::Result<protocol::Bytes> NoRobotDriver::command_from_json(std::string_view /*cmd*/,
                                                                   const nlohmann::json& /*object*/) const {
  return no_robot();
}

protocol::Result<protocol::Done> NoRobotDriver::submit(protocol::CommandToken /*token*/,
                                                       protocol::ByteView /*command*/) {
  return no_robot();
}

protocol::Result<protocol::Done> NoRobotDriver::reset_pose(protocol::CommandToken /*token*/) {
  return no_robot();
}

const protocol::RobotGeometry& NoRobotDriver::geometry() const {
  static const protocol::RobotGeometry nothing;
  return nothing;
}

protocol::Result<protocol::Done> NoRobotDriver::stop_robot(protocol::CommandToken /*token*/) {
  return no_robot();
}

void NoRobotDriver::add_stats(protocol::StatsSnapshot& snapshot) const {
  snapshot.link_state = protocol::LinkState::Down;
}

}  // namespace flockbridge::bridge::none
