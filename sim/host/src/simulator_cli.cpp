#include "flockbridge/sim/host/simulator_cli.hpp"

#include <cstdio>
#include <string>
#include <vector>

#include "flockbridge/bridge/cli_support.hpp"
#include "flockbridge/protocol/aros/models.hpp"

namespace flockbridge::sim {

using bridge::MillisecondOptions;
using bridge::parse_or_exit;
using bridge::version_text;

std::variant<SimulatorSettings, int> parse_simulator_command_line(int argc, const char* const* argv) {
  SimulatorSettings options;
  sim::UnoModelSettings& model = options.uno.model;
  CLI::App app{
      "flockbridge-sim (also called flockbot-sim): a simulated robot on a pseudo-terminal.\n"
      "It creates a pseudo-terminal, makes --link a symlink to it, and plays the robot's controller:\n"
      "  --robot flockbot: the Flockbot's Uno: the boot ACK when the port is opened, CFG, sensor packets,\n"
      "                    a model of the robot's motion, DMC when a bounded move completes;\n"
      "  --robot pioneer:  a Pioneer or AmigoBot (--model): the SYNC handshake, OPEN, CONFIG, SIPs every\n"
      "                    100 ms, motion in a 6 x 4 m room with sonar, and its 2 s watchdog;\n"
      "  --robot smr:      a DTU Small Mobile Robot's RS485 bus: the motor, line sensor, IR and power\n"
      "                    modules answer their polls; motion in a 4 x 3 m room with a line along x.\n"
      "Faults can be injected on the line, in the robot, and in the device, by options or by commands.\n"
      "Events go to standard output, one line each. Commands on standard input, one per line:\n"
      "  reboot        reset the robot while the port stays open (the Uno sends ACK and waits for CFG;\n"
      "                a Pioneer forgets its client and waits for SYNC0; an SMR's encoders and\n"
      "                speeds go back to 0)\n"
      "  unplug        close the pseudo-terminal and remove the link (the device vanishes)\n"
      "  replug        create a new pseudo-terminal at the same link\n"
      "  silent on|off stop or resume sending anything\n"
      "  counters      print what the line faults have done so far\n"
      "  quit          exit (the end of standard input does the same)\n"
      "Flockbot only:\n"
      "  nak-next [N]  answer the next N frames received (default 1) with NAK\n"
      "  corrupt-next  send the next packet with a bad checksum\n"
      "  emergency     send EMG\n"
      "  burst [N]     send N sensor packets (default 5) at once, in one write\n"
      "  bump L H      set the bumper bytes\n"
      "Pioneer only:\n"
      "  state         print the robot's true pose, speeds, motors and watchdog stops\n"
      "SMR only:\n"
      "  state         print the robot's true pose, the speeds on the bus and the encoders\n"
      "  module-silent left|right|line|ir|power on|off\n"
      "                stop or resume one module's answers\n"
      "  power-switch on|off\n"
      "                the power module's switch (SMRD powered the computer off when it stayed off)",
      "flockbridge-sim"};
  app.set_version_flag("--version", version_text());
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--robot", options.robot, "The robot to play: flockbot, pioneer or smr")
      ->capture_default_str()
      ->check(CLI::IsMember({"flockbot", "pioneer", "smr"}));
  std::vector<std::string> pioneer_models;
  for (const auto& row : protocol::aros::robot_models()) pioneer_models.emplace_back(row.subclass);
  app.add_option("--model", options.pioneer.model.model, "The Pioneer's model, as SYNC2 names it")
      ->capture_default_str()
      ->check(CLI::IsMember(pioneer_models));
  app.add_option("--name", options.pioneer.model.name, "The Pioneer's name, as SYNC2 gives it")->capture_default_str();
  auto* link = app.add_option("--link", options.link,
                              "Path of the symlink to the pseudo-terminal (give this path to flockbridge --device)");
  std::uint16_t listen = 0;
  auto* listen_option =
      app.add_option("--listen", listen,
                     "Pioneer: serve the robot over TCP on 127.0.0.1 at this port instead (0: a free one), as "
                     "MobileSim does; the ready line says where (flockbridge --device tcp:127.0.0.1:PORT)");
  link->excludes(listen_option);
  app.add_option("--rate-hz", model.rate_hz, "Sensor packets per second")
      ->capture_default_str()
      ->check(CLI::Range(0.1, 2000.0));
  MillisecondOptions millis;
  millis.add(app, "--boot-ms", model.boot_delay, "From the port's opening to the boot ACK", 0);
  app.add_flag("--ack-commands", model.ack_commands, "Acknowledge every command with ACK, as some firmware does");
  app.add_option("--seed", model.seed, "Seed of the IR readings' noise and of every random fault")
      ->capture_default_str();

  const auto rate = CLI::Range(0.0, 1.0);
  double ber = 0;
  double ber_to_host = -1;
  double ber_to_uno = -1;
  double drop = 0;
  double duplicate = 0;
  app.add_option("--ber", ber, "Bit-error rate on the line, both directions")->capture_default_str()->check(rate);
  app.add_option("--ber-to-host", ber_to_host, "Bit-error rate on what the Uno sends (default: --ber)")->check(rate);
  app.add_option("--ber-to-uno", ber_to_uno, "Bit-error rate on what the Uno receives (default: --ber)")->check(rate);
  app.add_option("--drop-rate", drop, "Share of bytes lost on the line, both directions")
      ->capture_default_str()
      ->check(rate);
  app.add_option("--dup-rate", duplicate, "Share of bytes that arrive twice, both directions")
      ->capture_default_str()
      ->check(rate);
  app.add_option("--nak-rate", model.nak_rate, "Share of good frames the Uno answers with NAK anyway")
      ->capture_default_str()
      ->check(rate);
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
  app.add_flag("--report-frames", options.uno.report_frames,
               "Print every sensor packet sent, and every frame whose damage a checksum cannot see");
  app.add_flag("--timestamps", options.timestamps, "Prefix each event line with the monotonic clock, in seconds");

  if (const auto exit_code = parse_or_exit(app, argc, argv)) return *exit_code;
  millis.apply();
  options.uno.to_host = {ber_to_host >= 0 ? ber_to_host : ber, drop, duplicate};
  options.uno.to_uno = {ber_to_uno >= 0 ? ber_to_uno : ber, drop, duplicate};
  options.pioneer.to_host = options.uno.to_host;
  options.pioneer.to_robot = options.uno.to_uno;
  options.pioneer.seed = model.seed;
  options.smr.to_host = options.uno.to_host;
  options.smr.to_robot = options.uno.to_uno;
  options.smr.seed = model.seed;
  if (listen_option->count() > 0) {
    if (options.robot != "pioneer") {
      std::fputs("flockbridge-sim: --listen serves a Pioneer (--robot pioneer) only\n", stderr);
      return 2;
    }
    options.pioneer.listen_port = listen;
  } else if (options.link.empty()) {
    std::fputs("flockbridge-sim: --link PATH is required (or --listen PORT with --robot pioneer)\n", stderr);
    return 2;
  }
  return options;
}

}  // namespace flockbridge::sim
