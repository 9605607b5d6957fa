// Work on a thread of its own, completed on the loop (WorkQueue): in order,
// the loop kept alive while work is under way and not after, and the work
// asked for done before the queue goes.
#include <doctest/doctest.h>

#include <sys/socket.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "flockbridge/bridge/host_lookup.hpp"
#include "flockbridge/bridge/work_queue.hpp"

using namespace flockbridge;

TEST_CASE("work runs on another thread and completes on the loop, in order, keeping the loop alive meanwhile") {
  uv_loop_t loop;
  REQUIRE(uv_loop_init(&loop) == 0);
  {
    bridge::WorkQueue queue;
    REQUIRE(queue.init(&loop) == 0);
    CHECK(uv_loop_alive(&loop) == 0);  // waiting for nothing keeps no loop alive
    const std::thread::id loop_thread = std::this_thread::get_id();
    std::vector<int> done;
    std::atomic<int> elsewhere{0};
    for (int i = 0; i < 5; ++i) {
      REQUIRE(queue.submit(
          [&elsewhere, loop_thread] {
            if (std::this_thread::get_id() != loop_thread) ++elsewhere;
          },
          [&done, i, loop_thread] {
            CHECK(std::this_thread::get_id() == loop_thread);
            done.push_back(i);
          }));
    }
    uv_run(&loop, UV_RUN_DEFAULT);  // returns once every completion has run
    CHECK(done == std::vector<int>{0, 1, 2, 3, 4});
    CHECK(elsewhere == 5);
    CHECK(uv_loop_alive(&loop) == 0);
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK(uv_loop_close(&loop) == 0);
}

TEST_CASE("the work asked for is done before the queue goes, without its completions") {
  uv_loop_t loop;
  REQUIRE(uv_loop_init(&loop) == 0);
  std::atomic<int> worked{0};
  int completed = 0;
  {
    bridge::WorkQueue queue;
    REQUIRE(queue.init(&loop) == 0);
    for (int i = 0; i < 3; ++i) {
      REQUIRE(queue.submit([&worked] { ++worked; }, [&completed] { ++completed; }));
    }
  }  // gone before the loop ran: the work is done, nobody is told
  CHECK(worked == 3);
  CHECK(completed == 0);
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK(uv_loop_close(&loop) == 0);
}

TEST_CASE("a host name looked up on a thread of its own is answered on the loop, and a cancelled one never") {
  uv_loop_t loop;
  REQUIRE(uv_loop_init(&loop) == 0);
  {
    bridge::HostLookup lookup;
    int answers = 0;
    int error = -1;
    bool loopback = false;
    std::string why;
    REQUIRE(lookup.start(
        &loop, "localhost", "2006",
        [&](int e, const addrinfo* addresses) {
          ++answers;
          error = e;
          for (const addrinfo* a = addresses; a != nullptr; a = a->ai_next) {
            loopback = loopback || a->ai_family == AF_INET || a->ai_family == AF_INET6;
          }
        },
        why));
    CHECK(lookup.running());
    uv_run(&loop, UV_RUN_DEFAULT);  // the lookup keeps the loop alive until it is answered
    CHECK(answers == 1);
    CHECK(error == 0);
    CHECK(loopback);
    CHECK_FALSE(lookup.running());

    int cancelled_answers = 0;
    REQUIRE(lookup.start(
        &loop, "127.0.0.1", "", [&](int, const addrinfo*) { ++cancelled_answers; }, why));
    lookup.cancel();
    uv_run(&loop, UV_RUN_DEFAULT);
    CHECK(cancelled_answers == 0);
  }
  uv_run(&loop, UV_RUN_DEFAULT);
  CHECK(uv_loop_close(&loop) == 0);
}
