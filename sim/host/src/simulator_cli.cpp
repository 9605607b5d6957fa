#include "flockbridge/sim/host/simulator_cli.hpp"

#include <cstdio>
#include <string>
#include <vector>

#include "flockbridge/bridge/cli_support.hpp"

namespace flockbridge::sim {

using bridge::MillisecondOptions;
using bridge::parse_or_exit;
using bridge::version_text;

namespace {

std::string help_text(std::span<const SimulatedFamily> families) {
  std::string help =
      "flockbridge-sim: a simulated robot on a pseudo-terminal.\n"
      "It creates a pseudo-terminal, makes --link a symlink to it, and plays the robot's controller:\n";
  for (const SimulatedFamily& family : families) help += std::string(family.plays) + "\n";
  help +=
      "Faults can be injected on the line, in the robot, and in the device, by options or by commands.\n"
      "Events go to standard output, one line each. Commands on standard input, one per line:\n"
      "  reboot        reset the robot while the port stays open\n"
      "  unplug        close the pseudo-terminal and remove the link (the device vanishes)\n"
      "  replug        create a new pseudo-terminal at the same link\n"
      "  silent on|off stop or resume sending anything\n"
      "  counters      print what the line faults have done so far\n"
      "  quit          exit (the end of standard input does the same)";
  for (const SimulatedFamily& family : families) {
    if (!family.commands.empty()) help += "\n" + std::string(family.commands);
  }
  return help;
}

}  // namespace

std::variant<SimulatorSettings, int> parse_simulator_command_line(int argc, const char* const* argv,
                                                                  std::span<const SimulatedFamily> families) {
  SimulatorSettings options;
  CLI::App app{help_text(families), "flockbridge-sim"};
  app.set_version_flag("--version", version_text());
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);

  std::vector<std::string> names;
  std::string tcp_names;
  for (const SimulatedFamily& family : families) {
    names.emplace_back(family.name);
    if (family.serves_tcp) tcp_names += (tcp_names.empty() ? "--robot " : " or ") + std::string(family.name);
  }
  std::string listing;
  for (const std::string& name : names) listing += (listing.empty() ? "" : ", ") + name;
  options.robot = names.empty() ? std::string() : names.front();
  app.add_option("--robot", options.robot, "The robot to play: " + listing)
      ->capture_default_str()
      ->check(CLI::IsMember(names));
  auto* link = app.add_option("--link", options.line.link,
                              "Path of the symlink to the pseudo-terminal (give this path to flockbridge --device)");
  std::uint16_t listen = 0;
  auto* listen_option =
      app.add_option("--listen", listen,
                     "Serve the robot over TCP on 127.0.0.1 at this port instead (0: a free one), as MobileSim does (" +
                         tcp_names + "); the ready line says where (flockbridge --device tcp:127.0.0.1:PORT)");
  link->excludes(listen_option);
  app.add_option("--seed", options.line.seed, "Seed of the robot's noise and of every random fault")
      ->capture_default_str();

  LineOptions line;
  const auto rate = CLI::Range(0.0, 1.0);
  app.add_option("--ber", line.ber, "Bit-error rate on the line, both directions")->capture_default_str()->check(rate);
  app.add_option("--ber-to-host", line.ber_to_host, "Bit-error rate on what the robot sends (default: --ber)")
      ->check(rate);
  app.add_option("--ber-to-robot", line.ber_to_robot, "Bit-error rate on what the robot receives (default: --ber)")
      ->check(rate);
  app.add_option("--drop-rate", line.drop, "Share of bytes lost on the line, both directions")
      ->capture_default_str()
      ->check(rate);
  app.add_option("--dup-rate", line.duplicate, "Share of bytes that arrive twice, both directions")
      ->capture_default_str()
      ->check(rate);
  MillisecondOptions millis;
  const auto seconds = CLI::Range(0.0, 86400.0);
  app.add_option("--reboot-every-s", options.reboot_every_s, "Reboot at random, on average this often (0: never)")
      ->capture_default_str()
      ->check(seconds);
  app.add_option("--silence-every-s", options.silence_every_s, "Go silent at random, on average this often (0: never)")
      ->capture_default_str()
      ->check(seconds);
  millis.add(app, "--silence-ms", options.silence_for, "How long each random silence lasts");
  app.add_option("--unplug-every-s", options.unplug_every_s,
                 "Vanish as a device at random, on average this often (0: never)")
      ->capture_default_str()
      ->check(seconds);
  millis.add(app, "--unplug-ms", options.unplug_for, "How long the device stays away each time");
  app.add_flag("--timestamps", options.timestamps, "Prefix each event line with the monotonic clock, in seconds");

  std::vector<RobotMaker> makers;
  makers.reserve(families.size());
  for (const SimulatedFamily& family : families) makers.push_back(family.add_options(app, line));

  if (const auto exit_code = parse_or_exit(app, argc, argv)) return *exit_code;
  millis.apply();
  options.line.to_host = {line.ber_to_host >= 0 ? line.ber_to_host : line.ber, line.drop, line.duplicate};
  options.line.to_robot = {line.ber_to_robot >= 0 ? line.ber_to_robot : line.ber, line.drop, line.duplicate};
  const SimulatedFamily* chosen = nullptr;
  for (std::size_t i = 0; i < families.size(); ++i) {
    if (families[i].name == options.robot) {
      chosen = &families[i];
      options.make_robot = makers[i];
    }
  }
  if (chosen == nullptr) {
    std::fputs("flockbridge-sim: no simulated robot was built in\n", stderr);
    return 2;
  }
  if (listen_option->count() > 0) {
    if (!chosen->serves_tcp) {
      std::fprintf(stderr, "flockbridge-sim: --listen serves %s only\n", tcp_names.c_str());
      return 2;
    }
    options.line.listen_port = listen;
  } else if (options.line.link.empty()) {
    std::fprintf(stderr, "flockbridge-sim: --link PATH is required (or --listen PORT with %s)\n", tcp_names.c_str());
    return 2;
  }
  return options;
}

}  // namespace flockbridge::sim
