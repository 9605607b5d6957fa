#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "flockbridge/protocol/foxglove/foxglove.hpp"

using namespace flockbridge::protocol;
namespace fox = flockbridge::protocol::foxglove;
using Json = nlohmann::json;

TEST_CASE("foxglove: the server's messages are the spec's") {
  const std::vector<std::string> capabilities{"clientPublish"};
  const std::vector<std::string> encodings{"json"};
  const std::vector<std::pair<std::string, std::string>> metadata{{"robot", "flockbot-07"}};
  CHECK(Json::parse(fox::server_info("flockbridge", capabilities, encodings, metadata, "9f2c")) ==
        Json::parse(R"({"op":"serverInfo","name":"flockbridge","capabilities":["clientPublish"],
                       "supportedEncodings":["json"],"metadata":{"robot":"flockbot-07"},"sessionId":"9f2c"})"));
  const std::vector<fox::Channel> channels{{1, "/sensor", "json", "flockbridge.smr.sensor", R"({"type":"object"})"}};
  CHECK(Json::parse(fox::advertise(channels)) ==
        Json::parse(R"({"op":"advertise","channels":[{"id":1,"topic":"/sensor","encoding":"json",
                       "schemaName":"flockbridge.smr.sensor","schema":"{\"type\":\"object\"}",
                       "schemaEncoding":"jsonschema"}]})"));
  CHECK(Json::parse(fox::status(fox::StatusLevel::Warning, "only stops")) ==
        Json::parse(R"({"op":"status","level":1,"message":"only stops"})"));
  // Opcode 1, the subscription and the time little-endian, then the payload.
  CHECK(fox::message_data(0x01020304, 0x1122334455667788ULL, as_bytes("{}")) ==
        Bytes{0x01, 0x04, 0x03, 0x02, 0x01, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11, '{', '}'});
}

TEST_CASE("foxglove: a client's subscribe, unsubscribe, advertise, unadvertise and message are read") {
  auto op =
      fox::parse_client_text(R"({"op":"subscribe","subscriptions":[{"id":0,"channelId":3},{"id":7,"channelId":1}]})");
  REQUIRE(op);
  const auto& subscribe = std::get<fox::Subscribe>(op.value());
  REQUIRE(subscribe.subscriptions.size() == 2);
  CHECK(subscribe.subscriptions[1].id == 7);
  CHECK(subscribe.subscriptions[1].channel == 1);
  op = fox::parse_client_text(R"({"op":"unsubscribe","subscriptionIds":[0,7]})");
  REQUIRE(op);
  CHECK(std::get<fox::Unsubscribe>(op.value()).subscriptions == std::vector<std::uint32_t>{0, 7});
  op = fox::parse_client_text(
      R"({"op":"advertise","channels":[{"id":2,"topic":"/command","encoding":"json","schemaName":"cmd"}]})");
  REQUIRE(op);
  const auto& advertised = std::get<fox::Advertise>(op.value());
  REQUIRE(advertised.channels.size() == 1);
  CHECK(advertised.channels[0].topic == "/command");
  CHECK(advertised.channels[0].schema_name == "cmd");
  op = fox::parse_client_text(R"({"op":"unadvertise","channelIds":[2]})");
  REQUIRE(op);
  CHECK(std::get<fox::Unadvertise>(op.value()).channels == std::vector<std::uint32_t>{2});
  op = fox::parse_client_binary(Bytes{0x01, 0x02, 0x00, 0x00, 0x00, '{', '}'});
  REQUIRE(op);
  CHECK(std::get<fox::ClientMessage>(op.value()).channel == 2);
  CHECK(std::get<fox::ClientMessage>(op.value()).payload == Bytes{'{', '}'});
}

TEST_CASE("foxglove: what is not the protocol is refused with the reason") {
  CHECK(fox::parse_client_text("nonsense").error().message == "not a JSON object");
  CHECK(fox::parse_client_text(R"({"subscriptions":[]})").error().message == "no \"op\"");
  CHECK(fox::parse_client_text(R"({"op":"getParameters"})").error().message.find("not one this server takes") !=
        std::string::npos);
  CHECK_FALSE(fox::parse_client_text(R"({"op":"subscribe","subscriptions":{}})"));
  CHECK_FALSE(fox::parse_client_text(R"({"op":"subscribe","subscriptions":[{"id":-1,"channelId":1}]})"));
  CHECK_FALSE(fox::parse_client_text(R"({"op":"subscribe","subscriptions":[{"id":4294967296,"channelId":1}]})"));
  CHECK_FALSE(fox::parse_client_text(R"({"op":"unsubscribe","subscriptionIds":["a"]})"));
  CHECK_FALSE(fox::parse_client_text(R"({"op":"advertise","channels":[{"id":1,"encoding":"json"}]})"));
  CHECK_FALSE(fox::parse_client_binary(Bytes{}));
  CHECK_FALSE(fox::parse_client_binary(Bytes{0x02, 0, 0, 0, 0}));
  CHECK_FALSE(fox::parse_client_binary(Bytes{0x01, 0, 0}));
}
