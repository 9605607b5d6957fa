// The Foxglove live view (--foxglove) read by Foxglove's own client library,
// @foxglove/ws-protocol from npm, running in Chromium as Foxglove's web app
// runs it (the browser's WebSocket, the subprotocol foxglove.websocket.v1):
// for each family's simulated robot, the client must take the server's
// serverInfo and channels, get on /sensor the very sensor messages a JSON
// client of port 2006 gets, the robot's hello at once on subscribing, and
// publish JSON commands on a channel of its own: a stop answered on
// /answer, and an emergency stop that latches for every client.
//
//   FLOCKBRIDGE_BIN=build/bin/flockbridge node --test tests/browser/foxglove.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { once } from "node:events";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { JsonClient, jsonPort, robotFamilies, startBridge } from "./bridge.mjs";
import { launchChromium } from "./browser.mjs";

const binary = process.env.FLOCKBRIDGE_BIN ?? "build/bin/flockbridge";
const here = path.dirname(fileURLToPath(import.meta.url));

// The page: Foxglove's client from node_modules (its ES modules, with
// eventemitter3's), connected to the bridge; it subscribes to every channel
// it is offered, advertises /command (JSON), and keeps what it gets.
const page = `<!doctype html>
<meta charset="utf-8">
<title>Foxglove WebSocket client</title>
<script type="importmap">
{ "imports": { "eventemitter3": "/node_modules/eventemitter3/dist/eventemitter3.esm.js" } }
</script>
<script type="module">
import FoxgloveClient from "/node_modules/@foxglove/ws-protocol/dist/esm/src/FoxgloveClient.js";
const view = { serverInfo: null, channels: [], messages: [], statuses: [], errors: [], commandChannel: null };
window.view = view;
window.connect = (url) => {
  const client = new FoxgloveClient({ ws: new WebSocket(url, [FoxgloveClient.SUPPORTED_SUBPROTOCOL]) });
  window.client = client;
  const topics = new Map();
  const decoder = new TextDecoder();
  client.on("serverInfo", (info) => { view.serverInfo = info; });
  client.on("status", (status) => { view.statuses.push(status); });
  client.on("error", (error) => { view.errors.push(String(error)); });
  client.on("advertise", (channels) => {
    for (const channel of channels) {
      view.channels.push(channel);
      topics.set(client.subscribe(channel.id), channel.topic);
    }
    view.commandChannel = client.advertise({ topic: "/command", encoding: "json", schemaName: "flockbridge.command" });
  });
  client.on("message", ({ subscriptionId, timestamp, data }) => {
    const text = decoder.decode(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    view.messages.push({ topic: topics.get(subscriptionId), ns: String(timestamp), json: JSON.parse(text) });
  });
};
window.publish = (command) => {
  window.client.sendMessage(view.commandChannel, new TextEncoder().encode(JSON.stringify(command)));
};
</script>`;

/** Serves the page, and node_modules' files (an import without its .js finds the .js, as a bundler would). */
async function servePage() {
  const server = http.createServer(async (request, response) => {
    const url = new URL(request.url, "http://127.0.0.1");
    if (url.pathname === "/") {
      response.writeHead(200, { "content-type": "text/html" }).end(page);
      return;
    }
    const file = path.join(here, path.normalize(url.pathname));
    if (!file.startsWith(path.join(here, "node_modules"))) {
      response.writeHead(404).end();
      return;
    }
    for (const candidate of [file, file + ".js"]) {
      try {
        const body = await readFile(candidate);
        response.writeHead(200, { "content-type": "text/javascript" }).end(body);
        return;
      } catch {
        // the next candidate
      }
    }
    response.writeHead(404).end();
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return server;
}

for (const robot of robotFamilies(binary)) {
  test(`${robot}: Foxglove's client gets the JSON clients' sensor messages, and its commands are the JSON port's`,
       { timeout: 120000 }, async () => {
    const bridge = await startBridge(binary, ["--robot", robot, "--simulate", "--foxglove"]);
    const server = await servePage();
    const browser = await launchChromium();
    const json = new JsonClient(jsonPort(bridge));
    try {
      assert.ok(bridge.foxglovePort, "the start-up line names the live view's port");
      await json.next((m) => m.type === "sensor");
      const tab = await browser.newPage();
      await tab.goto(`http://127.0.0.1:${server.address().port}/`);
      await tab.evaluate((url) => window.connect(url), `ws://127.0.0.1:${bridge.foxglovePort}`);
      const wanted = robot === "pioneer" ? 10 : 30;
      await tab.waitForFunction((n) => window.view.messages.filter((m) => m.topic === "/sensor").length >= n,
                                wanted, { timeout: 30000 });

      const view = await tab.evaluate(() => window.view);
      assert.deepEqual(view.errors, []);
      assert.match(view.serverInfo.name, /^flockbridge /);
      assert.equal(view.serverInfo.metadata.family, robot);
      assert.deepEqual(view.serverInfo.supportedEncodings, ["json"]);
      assert.ok(view.serverInfo.capabilities.includes("clientPublish"));
      for (const channel of view.channels) {
        assert.equal(channel.encoding, "json", channel.topic);
        assert.equal(channel.schemaEncoding, "jsonschema", channel.topic);
        assert.equal(JSON.parse(channel.schema).type, "object", channel.topic);
      }
      const sensorChannel = view.channels.find((c) => c.topic === "/sensor");
      assert.equal(sensorChannel.schemaName, `flockbridge.${robot}.sensor`);

      // The hello came at once on subscribing, though it was sent before.
      const hello = view.messages.find((m) => m.topic === "/hello");
      assert.ok(hello, "the robot's hello on /hello");
      assert.equal(hello.json.robot, robot);

      // /sensor: the very messages the JSON client got, in order, stamped in time order.
      const sensors = view.messages.filter((m) => m.topic === "/sensor");
      const last = sensors[sensors.length - 1].json.seq;
      if (!json.messages.some((m) => m.json.type === "sensor" && m.json.seq >= last)) {
        await json.next((m) => m.type === "sensor" && m.seq >= last);
      }
      const bySeq = new Map(json.messages.filter((m) => m.json.type === "sensor").map((m) => [m.json.seq, m.json]));
      let compared = 0;
      for (let i = 0; i < sensors.length; i++) {
        if (i > 0 && sensors[i].json.seq !== sensors[i - 1].json.seq + 1) {
          // A viewer that fell behind gets the latest (a loaded machine, the
          // sanitizers' build), and is told on /bridge before the next one.
          assert.ok(sensors[i].json.seq > sensors[i - 1].json.seq, "in order");
          const between = view.messages.slice(view.messages.indexOf(sensors[i - 1]), view.messages.indexOf(sensors[i]));
          assert.ok(
            between.some((m) => m.topic === "/bridge" && m.json.type === "dropped"),
            `none lost without a dropped notice: ${sensors[i - 1].json.seq} then ${sensors[i].json.seq}; what came around: ` +
              JSON.stringify(view.messages.slice(Math.max(0, view.messages.indexOf(sensors[i - 1]) - 3),
                                                 view.messages.indexOf(sensors[i]) + 4)
                .map((m) => `${m.topic} ${m.json.type ?? ""} ${m.json.seq ?? m.json.count ?? ""}`)),
          );
        }
        if (i > 0) {
          assert.ok(BigInt(sensors[i].ns) >= BigInt(sensors[i - 1].ns), "stamped in time order");
        }
        const got = bySeq.get(sensors[i].json.seq);
        if (got === undefined) continue;
        assert.deepEqual(sensors[i].json, got);
        compared++;
      }
      assert.ok(compared >= wanted / 2, `compared ${compared} messages`);

      // The pose for Foxglove's 3D panel, in its own schema, and the ranges alone.
      assert.equal(view.channels.find((c) => c.topic === "/pose").schemaName, "foxglove.PoseInFrame");
      const pose = view.messages.find((m) => m.topic === "/pose");
      assert.ok(pose, "a pose on /pose");
      assert.equal(pose.json.frame_id, "odom");
      assert.equal(typeof pose.json.pose.orientation.w, "number");
      // Each range by its name, as the sensor messages have them; the channel's schema names the robot's sensors.
      const ranges = view.messages.find((m) => m.topic === "/ranges");
      assert.ok(ranges, "readings on /ranges");
      assert.deepEqual(Object.keys(ranges.json.ranges), Object.keys(sensors[0].json.ranges));
      assert.ok(Object.keys(ranges.json.ranges).length > 0, "the robot has range sensors");
      const rangesSchema = JSON.parse(view.channels.find((c) => c.topic === "/ranges").schema);
      assert.deepEqual(Object.keys(rangesSchema.properties.ranges.properties), Object.keys(ranges.json.ranges));

      // A command published on the client's own channel: answered on /answer.
      await tab.evaluate(() => window.publish({ cmd: "stop", id: "fox-1" }));
      await tab.waitForFunction(() => window.view.messages.some((m) => m.topic === "/answer" && m.json.id === "fox-1"));
      const answer = await tab.evaluate(() => window.view.messages.find((m) => m.json.id === "fox-1").json);
      assert.equal(answer.type, "ok");

      // The emergency stop from Foxglove latches for every client, the JSON port's too.
      const latched = json.next((m) => m.type === "emergency_latch" && m.latched === true);
      await tab.evaluate(() => window.publish({ cmd: "emergency", id: "fox-2" }));
      await latched;
      await tab.waitForFunction(() =>
        window.view.messages.some((m) => m.topic === "/emergency" && m.json.latched === true));
      assert.deepEqual(await tab.evaluate(() => window.view.errors), []);
    } finally {
      await json.close();
      await browser.close();
      server.close();
      assert.equal(await bridge.stop(), 0);
    }
  });
}
