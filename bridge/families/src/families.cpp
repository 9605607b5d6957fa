#include "flockbridge/bridge/families.hpp"

#include <algorithm>
#include <iterator>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "flockbridge/bridge/autodetect/driver.hpp"
#include "flockbridge/bridge/replay/driver.hpp"
#include "flockbridge/bridge/suggest.hpp"

namespace flockbridge::bridge {
namespace {

/// The core's rows' words about the families.
FamiliesHelp families_help() {
  FamiliesHelp help;
  help.family = "The robot family behind the bridge: ";
  help.model = "The family's model (";
  help.device =
      "Serial device of the robot, or tcp:HOST:PORT for one reached over the network (a Wi-Fi serial bridge, "
      "MobileSim). Each family's default: ";
  // The lists' separators, before every item but the first.
  std::string_view family_separator;
  std::string_view model_separator;
  std::string_view device_separator;
  std::string_view note_separator;
  std::string notes;  // where each family's device is found
  for (const RobotFamily* family : robot_families()) {
    help.family += std::string(std::exchange(family_separator, "; ")) + std::string(family->name) + ": " +
                   std::string(family->robots);
    if (family->models != nullptr) {
      help.model +=
          std::string(std::exchange(model_separator, "; ")) + std::string(family->name) + ": " + family->models();
    }
    if (!family->default_device.empty()) {
      help.device += std::string(std::exchange(device_separator, ", ")) + std::string(family->name) + " " +
                     std::string(family->default_device);
    }
    if (!family->device_note.empty()) {
      notes += std::string(std::exchange(note_separator, "; ")) + std::string(family->device_note);
    }
  }
  help.family +=
      "; auto: whichever robot answers on a serial device (plug and play: serial.device auto, serial.search). It "
      "sets the defaults of serial.device, serial.baud and native.port.";
  help.model += "); \"\": the model the robot names when it connects.";
  help.device += notes.empty() ? "." : ". Where each is found: " + notes + ".";
  help.device += " auto: the first device of serial.search on which robot.family's robot answers (any family's "
                 "under robot.family auto), and the next one plugged in.";
  return help;
}

/// The default family: the first of the list.
const RobotFamily& first_family() noexcept {
  return *robot_families().front();
}

/// A replay of a recording of the configured family (the command line made it the recording's).
std::unique_ptr<RobotDriver> make_replay(uv_loop_t* loop, const Config& config, RobotDriver::Host& host) {
  const RobotFamily* family = find_robot_family(config.family);
  return std::make_unique<replay::ReplayDriver>(
      loop, config, host,
      family != nullptr && family->native_replay != nullptr ? family->native_replay(config) : nullptr);
}

/// Plug and play: whichever family's robot answers (robot.family auto), or
/// the named family's robot on whichever device it answers (serial.device auto).
std::unique_ptr<RobotDriver> make_auto(uv_loop_t* loop, const Config& config, RobotDriver::Host& host) {
  std::vector<const RobotFamily*> families;
  for (const RobotFamily* family : robot_families()) {
    if (family->has_robot && (config.family == kAnyFamily || family->name == config.family)) families.push_back(family);
  }
  return std::make_unique<autodetect::AutoDriver>(loop, config, host, std::move(families));
}

}  // namespace

DriverFactory driver_factory(const Config& config) noexcept {
  if (!config.replay.file.empty()) return &make_replay;
  if (config.family == kAnyFamily || config.device == kAnyDevice) return &make_auto;
  const RobotFamily* family = find_robot_family(config.family);
  return family != nullptr ? family->make_driver : first_family().make_driver;
}

std::vector<std::string_view> robot_family_names() {
  std::vector<std::string_view> names;
  for (const RobotFamily* family : robot_families()) {
    if (family->has_robot) names.push_back(family->name);
  }
  return names;
}

std::string robot_family_list() {
  std::string list;
  for (const std::string_view name : robot_family_names()) list.append(name).push_back('\n');
  return list;
}

const RobotFamily* find_robot_family(std::string_view name) noexcept {
  const std::span<const RobotFamily* const> families = robot_families();
  const auto found =
      std::find_if(families.begin(), families.end(), [&](const RobotFamily* family) { return family->name == name; });
  return found == families.end() ? nullptr : *found;
}

protocol::Result<Config> family_defaults(const std::string& name) {
  if (name == kAnyFamily) {
    Config config;
    config.family = kAnyFamily;
    config.device = kAnyDevice;
    config.native_port_follows_family = true;
    return config;
  }
  const RobotFamily* family = find_robot_family(name);
  if (family == nullptr) {
    std::string known;
    std::vector<std::string_view> names;
    for (const RobotFamily* row : robot_families()) {
      known += (known.empty() ? "" : ", ") + std::string(row->name);
      names.push_back(row->name);
    }
    known += std::string(", ") + std::string(kAnyFamily);
    names.push_back(kAnyFamily);
    return protocol::Error{"robot.family: there is no robot family '" + name + "'" + did_you_mean(name, names) +
                           "; the families are " + known};
  }
  Config config;
  config.family = family->name;
  config.device = family->default_device;
  config.baud = family->default_baud;
  config.native_port = family->native_port;
  return config;
}

const SettingsTable& settings_table() {
  static const FamiliesHelp help = families_help();
  static const SettingsTable table = [] {
    CoreRows core = core_settings(help);
    std::vector<Setting> rows = std::move(core.before);
    std::vector<Renamed> renamed = std::move(core.renamed);
    for (const RobotFamily* family : robot_families()) {
      if (family->settings == nullptr) continue;
      FamilyRows own = family->settings();
      std::move(own.rows.begin(), own.rows.end(), std::back_inserter(rows));
      renamed.insert(renamed.end(), own.renamed.begin(), own.renamed.end());
    }
    std::move(core.after.begin(), core.after.end(), std::back_inserter(rows));
    return SettingsTable(std::move(rows), std::move(renamed), &family_defaults, std::string(first_family().name));
  }();
  return table;
}

}  // namespace flockbridge::bridge
