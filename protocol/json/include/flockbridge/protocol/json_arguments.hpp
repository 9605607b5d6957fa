// Reading a JSON command's arguments, as every family's driver does: the
// same checks and the same error texts whatever the robot.
#pragma once

#include <initializer_list>
#include <string_view>

#include <nlohmann/json.hpp>

#include "flockbridge/protocol/bytes.hpp"

namespace flockbridge::protocol::json_arguments {

/// "CMD: PROBLEM", the error every argument check gives.
[[nodiscard]] protocol::Error argument_error(std::string_view cmd, std::string_view problem);
/// A number argument, required, within [low, high].
[[nodiscard]] protocol::Result<double> number(std::string_view cmd, const nlohmann::json& object, const char* name,
                                              double low, double high);
/// The argument "on", true or false.
[[nodiscard]] protocol::Result<bool> on_off(std::string_view cmd, const nlohmann::json& object);
/// Refuses arguments the command does not take, so that a typo is not ignored.
[[nodiscard]] protocol::Result<protocol::Done> only(std::string_view cmd, const nlohmann::json& object,
                                                    std::initializer_list<std::string_view> allowed);
/// "drive"'s arguments: v_mm_s (required) and w_deg_s (0 when left out),
/// within +-max_v and +-max_w; no other.
struct Drive {
  double v_mm_s = 0;
  double w_deg_s = 0;
};
[[nodiscard]] protocol::Result<Drive> drive_arguments(std::string_view cmd, const nlohmann::json& object, double max_v,
                                                      double max_w);
/// "wheels"'s arguments: left_mm_s and right_mm_s, both required, within
/// +-limit; no other.
struct Wheels {
  double left_mm_s = 0;
  double right_mm_s = 0;
};
[[nodiscard]] protocol::Result<Wheels> wheel_arguments(std::string_view cmd, const nlohmann::json& object,
                                                       double limit);
/// Rounded to 0.1, as the robots measure no finer, so that the feed stays short.
[[nodiscard]] double tenths(double value);

}  // namespace flockbridge::protocol::json_arguments
