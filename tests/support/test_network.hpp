// Two test hosts joined by a cable the test can cut: the robot's computer
// and a student's laptop, each in a network namespace of the test's own,
// joined by a veth pair. Cutting takes the laptop's end of the link down, as
// a laptop lid closing or a phone leaving the Wi-Fi does: the bridge gets no
// FIN and no RST, only silence. Nothing else of the machine's network is
// touched; both namespaces, and the link with them, go when the object does.
//
// Needs root (the test command runs as root): namespaces are made with
// iproute2's `ip`, and a client joins the laptop's namespace with setns(2)
// in a thread of its own, so that the socket it makes belongs there.
#pragma once

#include <exception>
#include <functional>
#include <future>
#include <string>
#include <thread>
#include <utility>

#include "support/tcp_client.hpp"

namespace flockbridge::testing {

class TestNetwork {
 public:
  /// Why test networks cannot be made here (not root, no `ip`), or empty.
  [[nodiscard]] static std::string unavailable();

  TestNetwork();
  TestNetwork(const TestNetwork&) = delete;
  TestNetwork& operator=(const TestNetwork&) = delete;
  ~TestNetwork();

  /// The namespaces' names, for `ip netns exec`.
  [[nodiscard]] const std::string& robot() const noexcept { return robot_; }
  [[nodiscard]] const std::string& laptop() const noexcept { return laptop_; }
  /// Where the laptop reaches the robot's computer.
  [[nodiscard]] static std::string robot_address() { return "10.249.0.1"; }

  /// The laptop's link goes down: what either side sends is lost without a word.
  void cut();
  /// The link comes back.
  void mend();

  /// Runs `work` in a thread inside the laptop's (or the robot's) namespace
  /// and returns what it returns: a socket made there stays there.
  /// On the laptop, a client of the support library connects to the
  /// robot's computer (robot_address()); on the robot's, to 127.0.0.1.
  template <typename Work>
  auto on_laptop(Work&& work) {
    return in_namespace(laptop_, robot_address(), std::forward<Work>(work));
  }
  template <typename Work>
  auto on_robot(Work&& work) {
    return in_namespace(robot_, "127.0.0.1", std::forward<Work>(work));
  }

 private:
  template <typename Work>
  auto in_namespace(const std::string& name, const std::string& connect_to, Work&& work) {
    std::packaged_task<decltype(work())()> task(std::forward<Work>(work));
    auto result = task.get_future();
    std::exception_ptr failed;
    std::thread([&] {
      try {
        enter(name);
        TcpClient::connect_thread_to(connect_to);
      } catch (...) {
        failed = std::current_exception();
        return;
      }
      task();
    }).join();
    if (failed) std::rethrow_exception(failed);
    return result.get();
  }
  /// Moves the calling thread into the namespace `name`; throws when it cannot.
  static void enter(const std::string& name);

  std::string robot_;
  std::string laptop_;
};

}  // namespace flockbridge::testing
