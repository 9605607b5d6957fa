// The terminal settings of the serial line, as libserialport leaves a real
// device after sp_open() and 8N1 without flow control.
//
// Conditions of the problem: libserialport sets VMIN = 0 and VTIME = 0, so a
// read() with nothing waiting returns 0 bytes ("nothing yet"), not EAGAIN,
// even on a descriptor in non-blocking mode. A pseudo-terminal (a simulated
// robot) is not opened through libserialport, which refuses it, so it is given
// the same settings by hand: the bridge then meets the same read semantics in
// its tests as on a robot.
#pragma once

#include <termios.h>

#include <string>

namespace flockbridge::bridge {

/// Applies what sp_open() and sp_set_{bits,parity,stopbits,flowcontrol}
/// (8N1, no flow control) change, and leaves every other flag as it was.
void apply_serial_mode(termios& settings) noexcept;

/// One line in the words of stty, for the log: "115200 baud, 8N1, -crtscts
/// -ixon -ixoff, clocal cread hupcl, -icanon -echo -isig -opost, min 0 time 0".
[[nodiscard]] std::string describe_terminal(const termios& settings);

}  // namespace flockbridge::bridge
