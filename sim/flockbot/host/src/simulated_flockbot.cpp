// The Flockbot's Uno in the simulator program: `--robot flockbot`.
#include <memory>

#include "flockbridge/bridge/cli_support.hpp"
#include "flockbridge/sim/flockbot/pty_uno.hpp"
#include "flockbridge/sim/host/simulated_family.hpp"

namespace flockbridge::sim::flockbot {

SimulatedFamily simulated_family() {
  return {
      .name = "flockbot",
      .plays =
          "  --robot flockbot: the Flockbot's Uno: the boot ACK when the port is opened, CFG, sensor packets,\n"
          "                    a model of the robot's motion, DMC when a bounded move completes; on reboot it\n"
          "                    sends ACK and waits for CFG",
      .commands =
          "Flockbot only:\n"
          "  nak-next [N]  answer the next N frames received (default 1) with NAK\n"
          "  corrupt-next  send the next packet with a bad checksum\n"
          "  emergency     send EMG\n"
          "  burst [N]     send N sensor packets (default 5) at once, in one write\n"
          "  bump L H      set the bumper bytes",
      .serves_tcp = false,
      .add_options = [](CLI::App& app, LineOptions& line) -> RobotMaker {
        // The options live as long as the maker that reads them.
        struct Options {
          PtyUnoSettings uno;
          bridge::MillisecondOptions millis;
        };
        auto options = std::make_shared<Options>();
        UnoModelSettings& model = options->uno.model;
        app.add_option("--rate-hz", model.rate_hz, "Flockbot: sensor packets per second")
            ->capture_default_str()
            ->check(CLI::Range(0.1, 2000.0));
        options->millis.add(app, "--boot-ms", model.boot_delay, "Flockbot: from the port's opening to the boot ACK", 0);
        app.add_flag("--ack-commands", model.ack_commands,
                     "Flockbot: acknowledge every command with ACK, as some firmware does");
        app.add_option("--nak-rate", model.nak_rate, "Flockbot: share of good frames the Uno answers with NAK anyway")
            ->capture_default_str()
            ->check(CLI::Range(0.0, 1.0));
        app.add_option("--ber-to-uno", line.ber_to_robot, "Flockbot: --ber-to-robot's older name")
            ->check(CLI::Range(0.0, 1.0));
        app.add_flag("--report-frames", options->uno.report_frames,
                     "Flockbot: print every sensor packet sent, and every frame whose damage a checksum cannot see");
        return [options](uv_loop_t* loop, const SimulatedLine& on_line, SimRobot::Log log) {
          options->millis.apply();
          PtyUnoSettings settings = options->uno;
          settings.model.seed = on_line.seed;
          return std::make_unique<PtyUno>(loop, settings, on_line, std::move(log));
        };
      }};
}

}  // namespace flockbridge::sim::flockbot
