#include <doctest/doctest.h>

#include "flockbridge/bridge/output_queue.hpp"

using namespace flockbridge::bridge;

namespace {

std::vector<std::string> texts(const std::vector<SharedBuffer>& messages) {
  std::vector<std::string> out;
  out.reserve(messages.size());
  for (const auto& m : messages) out.push_back(*m);
  return out;
}

}  // namespace

TEST_CASE("sensor messages: the latest wins, and the losers are counted") {
  OutputQueue queue(8);
  CHECK_FALSE(queue.push_sensor(make_buffer("s1")));
  CHECK(queue.push(make_buffer("link")));
  CHECK(queue.push_sensor(make_buffer("s2")));
  CHECK(queue.push_sensor(make_buffer("s3")));
  CHECK(queue.size() == 2);
  CHECK(texts(queue.take(10)) == std::vector<std::string>{"link", "s3"});
  CHECK(queue.dropped_total() == 2);
}

TEST_CASE("sensor messages of a burst are appended, not replaced - the latest wins again once a client is behind") {
  OutputQueue queue(8);
  CHECK_FALSE(queue.push_sensor(make_buffer("s1"), false));
  CHECK_FALSE(queue.push_sensor(make_buffer("s2"), false));
  CHECK_FALSE(queue.push_sensor(make_buffer("s3"), false));
  CHECK(queue.size() == 3);
  CHECK(queue.push_sensor(make_buffer("s4")));  // replaces s3 only
  CHECK(texts(queue.take(10)) == std::vector<std::string>{"s1", "s2", "s4"});
  CHECK(queue.dropped_total() == 1);
}

TEST_CASE("the notice of dropped sensor messages comes just before the one that replaced them") {
  OutputQueue queue(8);
  const auto notice = [](std::uint64_t count) { return make_buffer("dropped " + std::to_string(count)); };
  CHECK(queue.push(make_buffer("hello")));
  queue.push_sensor(make_buffer("s1"));
  queue.push_sensor(make_buffer("s2"));
  CHECK(queue.push(make_buffer("ok")));
  queue.push_sensor(make_buffer("s3"));
  // The hello stays first however many sensor messages were lost before the client read.
  CHECK(texts(queue.take(1, notice)) == std::vector<std::string>{"hello"});
  CHECK(texts(queue.take(1, notice)) == std::vector<std::string>{"ok"});
  CHECK(texts(queue.take(1, notice)) == std::vector<std::string>{"dropped 2"});
  CHECK(texts(queue.take(10, notice)) == std::vector<std::string>{"s3"});
  queue.push_sensor(make_buffer("s4"));
  CHECK(texts(queue.take(10, notice)) == std::vector<std::string>{"s4"});  // nothing lost, no notice
}

TEST_CASE("after a burst, the notice of a gap goes where the gap is, not before the burst's first message") {
  OutputQueue queue(8);
  const auto notice = [](std::uint64_t count) { return make_buffer("dropped " + std::to_string(count)); };
  queue.push_sensor(make_buffer("s1"), false);
  queue.push_sensor(make_buffer("s2"), false);
  queue.push_sensor(make_buffer("s3"));  // replaces s2
  queue.push_sensor(make_buffer("s4"));  // replaces s3
  CHECK(texts(queue.take(1, notice)) == std::vector<std::string>{"s1"});
  CHECK(texts(queue.take(1, notice)) == std::vector<std::string>{"dropped 2"});
  CHECK(texts(queue.take(10, notice)) == std::vector<std::string>{"s4"});
  CHECK(queue.dropped_total() == 2);
  // Without a notice (a client of the original dialect), nothing of it is left over.
  queue.push_sensor(make_buffer("s5"), false);
  queue.push_sensor(make_buffer("s6"));
  CHECK(texts(queue.take(10)) == std::vector<std::string>{"s6"});
  queue.push_sensor(make_buffer("s7"));
  CHECK(texts(queue.take(10, notice)) == std::vector<std::string>{"s7"});
}

TEST_CASE("other messages are all kept, up to the limit") {
  OutputQueue queue(3);
  CHECK(queue.push(make_buffer("a")));
  CHECK(queue.push(make_buffer("b")));
  queue.push_sensor(make_buffer("s"));
  CHECK_FALSE(queue.push(make_buffer("c")));
  CHECK(texts(queue.take(2)) == std::vector<std::string>{"a", "b"});
  CHECK(queue.push(make_buffer("c")));
  CHECK(texts(queue.take(10)) == std::vector<std::string>{"s", "c"});
  CHECK(queue.empty());
}

TEST_CASE("one encoded buffer is shared, not copied, between queues") {
  OutputQueue first(4);
  OutputQueue second(4);
  const SharedBuffer sensor = make_buffer("encoded once");
  first.push_sensor(sensor);
  second.push_sensor(sensor);
  CHECK(sensor.use_count() == 3);
  CHECK(first.take(1)[0].get() == second.take(1)[0].get());
}
