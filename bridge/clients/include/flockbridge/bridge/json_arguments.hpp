// Reading a JSON command's arguments, as every family's driver does: the
// same checks and the same error texts whatever the robot.
#pragma once

#include <initializer_list>
#include <string_view>

#include <nlohmann/json.hpp>

#include "flockbridge/protocol/bytes.hpp"

namespace flockbridge::bridge::json_arguments {

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
/// Rounded to 0.1, as the robots measure no finer, so that the feed stays short.
[[nodiscard]] double tenths(double value);

}  // namespace flockbridge::bridge::json_arguments
