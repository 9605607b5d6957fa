// The bridge's recordings read by the real MCAP reader (@mcap/core from npm,
// with fzstd for zstd chunks, as Foxglove's own web app reads them): for each
// family, a run against the simulated robot with a JSON client reading,
// driving and making a mistake, recorded with --record, then stopped with
// record_stop. The file must open through its index and summary, hold every
// channel with its JSON Schema, the very sensor messages the client got, the
// client's command with who sent it and the bridge's answers, and counts and
// times that agree with its statistics. A bridge killed mid-recording leaves
// a file that a reader in order still reads up to its last whole chunk.
//
//   FLOCKBRIDGE_BIN=build/bin/flockbridge node --test tests/browser/recording.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { McapIndexedReader, McapStreamReader } from "@mcap/core";
import { decompress } from "fzstd";
import { JsonClient, jsonPort, robotFamilies, startBridge } from "./bridge.mjs";
import { launchChromium } from "./browser.mjs";
import { checkLayout, pageReader } from "./dashboard.mjs";

const binary = process.env.FLOCKBRIDGE_BIN ?? "build/bin/flockbridge";
const artifacts = process.env.FLOCKBRIDGE_ARTIFACTS ?? "build/test-artifacts";

/** A failed case's evidence: the recording as it was and the bridge's log, kept in the artifacts. */
async function keep(name, directory, bridge) {
  const into = path.join(artifacts, `recording-${name}`);
  await rm(into, { recursive: true, force: true });
  await mkdir(into, { recursive: true });
  await cp(directory, into, { recursive: true });
  await writeFile(path.join(into, "bridge.log"), bridge.lines.join("\n") + "\n");
  console.log(`# kept the recording and the bridge's log in ${into}`);
}
const decompressHandlers = { zstd: (data, size) => decompress(data, new Uint8Array(Number(size))) };
const topics = ["/sensor", "/robot", "/command", "/answer", "/lease", "/emergency", "/link", "/client", "/hello",
                "/recording", "/native"];

async function onlyFile(directory) {
  const files = (await readdir(directory)).filter((name) => name.endsWith(".mcap"));
  assert.equal(files.length, 1, `one recording in ${directory}: ${files}`);
  return path.join(directory, files[0]);
}

async function indexed(file) {
  const bytes = await readFile(file);
  const readable = {
    size: async () => BigInt(bytes.length),
    read: async (offset, size) => bytes.subarray(Number(offset), Number(offset + size)),
  };
  return McapIndexedReader.Initialize({ readable, decompressHandlers });
}

for (const robot of robotFamilies(binary)) {
  test(`${robot}: a recorded run opens in @mcap/core with every channel, the client's messages and its commands`,
       async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), "flockbridge-record-"));
    const started = Date.now() * 1e6;
    const bridge = await startBridge(binary, ["--robot", robot, "--simulate", "--record", directory]);
    try {
      await bridge.waitFor("recording into ");
      const client = new JsonClient(jsonPort(bridge));
      const hello = await client.next((m) => m.type === "hello");
      await client.next((m) => m.type === "link" || (m.type === "sensor"));
      // Thirty sensor messages, a command that goes and one that does not.
      for (let i = 0; i < 30; i++) await client.next((m) => m.type === "sensor");
      client.send({ cmd: "stop", id: 1 });
      await client.next((m) => m.id === 1);
      client.send({ cmd: "drive", v_mm_s: "fast", id: 2 });
      const refused = await client.next((m) => m.id === 2);
      assert.equal(refused.json.type, "error");
      for (let i = 0; i < 5; i++) await client.next((m) => m.type === "sensor");
      client.send({ cmd: "record_stop", id: 3 });
      const stopped = await client.next((m) => m.type === "recording");
      assert.equal(stopped.json.active, false);
      await bridge.waitFor("is complete");
      // What the client got while the recording ran: sensor messages keep coming after the stop.
      const gotSensors = client.messages.slice(0, client.messages.indexOf(stopped))
        .filter((m) => m.json.type === "sensor");
      assert.ok(gotSensors.length >= 35);
      await client.close();
      const ended = Date.now() * 1e6;

      const reader = await indexed(await onlyFile(directory));
      // Every channel, JSON with a JSON Schema that parses.
      const channels = [...reader.channelsById.values()];
      assert.deepEqual(channels.map((c) => c.topic), topics);
      for (const channel of channels) {
        assert.equal(channel.messageEncoding, "json");
        const schema = reader.schemasById.get(channel.schemaId);
        assert.equal(schema.encoding, "jsonschema");
        const parsed = JSON.parse(new TextDecoder().decode(schema.data));
        assert.equal(parsed.type, "object");
      }
      const sensorSchema = JSON.parse(new TextDecoder().decode(reader.schemasById.get(1).data));
      assert.ok(sensorSchema.properties.pose, "the robot model's pose");
      assert.match(sensorSchema.title, new RegExp(robot));

      const byTopic = Object.fromEntries(topics.map((t) => [t, []]));
      let last = 0n;
      let total = 0;
      for await (const message of reader.readMessages()) {
        const topic = reader.channelsById.get(message.channelId).topic;
        const text = new TextDecoder().decode(message.data);
        byTopic[topic].push({ text, json: JSON.parse(text), time: message.logTime, sequence: message.sequence });
        assert.ok(message.logTime >= last, "in time order");
        last = message.logTime;
        total++;
      }
      // The statistics agree with what is in the file, and the times with the run.
      assert.equal(reader.statistics.messageCount, BigInt(total));
      for (const channel of channels) {
        assert.equal(reader.statistics.channelMessageCounts.get(channel.id) ?? 0n, BigInt(byTopic[channel.topic].length),
                     channel.topic);
      }
      assert.ok(Number(reader.statistics.messageStartTime) >= started, "not before the run");
      assert.ok(Number(reader.statistics.messageEndTime) <= ended, "not after the run");

      // The hello first: which robot this is.
      assert.equal(byTopic["/hello"].length, 1);
      assert.equal(byTopic["/hello"][0].json.robot, hello.json.robot);
      assert.equal(byTopic["/hello"][0].json.session, hello.json.session);
      // The very sensor messages the client got, byte for byte, numbered without a gap.
      const recorded = new Map(byTopic["/sensor"].map((m) => [m.json.seq, m.text]));
      const range = byTopic["/sensor"].length === 0 ? "none"
                    : `${byTopic["/sensor"][0].json.seq}..${byTopic["/sensor"].at(-1).json.seq}`;
      for (const got of gotSensors) {
        assert.equal(recorded.get(got.json.seq), got.line, `sensor ${got.json.seq} (the recording holds ${range})`);
      }
      const seqs = byTopic["/sensor"].map((m) => m.json.seq);
      for (let i = 1; i < seqs.length; i++) assert.equal(seqs[i], seqs[i - 1] + 1, "every reading, none skipped");
      byTopic["/sensor"].forEach((m, i) => assert.equal(m.sequence, byTopic["/sensor"][0].sequence + i));
      // What the family's own programs got, beside its JSON form at the same time (a replay serves it to them);
      // nothing for a family without programs of its own (no port of theirs in the bridge's "listening" line).
      if (bridge.nativePort === undefined) {
        assert.equal((byTopic["/native"] ?? []).length, 0, "no native stream without a native port");
      } else {
        assert.ok(byTopic["/native"].length > 0, "the native stream");
      }
      const sensorTimes = new Set(byTopic["/sensor"].map((m) => m.time));
      for (const native of byTopic["/native"]) {
        assert.match(native.json.bytes, /^[0-9A-F]{2}( [0-9A-F]{2})*$/);
        if (native.json.json === "/sensor") assert.ok(sensorTimes.has(native.time), "at its sensor message's time");
      }
      // The client came, sent a stop and a mistake, and was answered.
      const me = hello.json.client;
      assert.ok(byTopic["/client"].some((m) => m.json.client === me && m.json.event === "connected"));
      const commands = byTopic["/command"].filter((m) => m.json.client === me);
      assert.equal(commands.length, 1, "the stop went to the robot; the mistake never became a command");
      assert.deepEqual(commands[0].json.request, { cmd: "stop", id: 1 });
      assert.equal(commands[0].json.kind, "json");
      assert.match(commands[0].json.bytes, /^[0-9A-F ]*$/);
      const answers = byTopic["/answer"].filter((m) => m.json.client === me);
      // The answer to record_stop is the recording's last.
      assert.deepEqual(answers.map((m) => [m.json.id, m.json.ok]), [[1, true], [2, false], [3, true]]);
      assert.equal(answers[1].json.error.code, "invalid");
      assert.deepEqual(byTopic["/recording"].map((m) => m.json.event), ["started", "stopped"]);
      assert.match(byTopic["/recording"][1].json.by, new RegExp(`client ${me} `));
      assert.ok(byTopic["/link"].some((m) => m.json.state === "up"));
    } catch (error) {
      await keep(robot, directory, bridge);
      throw error;
    } finally {
      await bridge.stop();
      await rm(directory, { recursive: true, force: true });
    }
  });
}

test("a bridge killed mid-recording leaves a file that reads in order up to its last whole chunk", async () => {
  const directory = await mkdtemp(path.join(os.tmpdir(), "flockbridge-record-"));
  const bridge = await startBridge(binary, ["--robot", "smr", "--simulate", "--record", directory]);
  try {
    await bridge.waitFor("recording into ");
    const client = new JsonClient(jsonPort(bridge));
    // Three seconds of the SMR's 100 periods a second: three chunks on disk at least.
    await client.next((m) => m.type === "sensor" && m.seq >= 300, 20000);
    bridge.process.kill("SIGKILL");
    await bridge.exited;
    await client.close();
    const bytes = await readFile(await onlyFile(directory));
    await assert.rejects(indexed(await onlyFile(directory)), "no footer: the index is not there");
    const stream = new McapStreamReader({ decompressHandlers });
    stream.append(bytes);
    let sensors = 0;
    let record;
    const seqs = [];
    while ((record = stream.nextRecord())) {
      if (record.type === "Message" && record.channelId === 1) {
        sensors++;
        seqs.push(JSON.parse(new TextDecoder().decode(record.data)).seq);
      }
    }
    // Chunks close each second: at most the last second and a half is lost.
    assert.ok(sensors >= 150, `${sensors} sensor messages read`);
    for (let i = 1; i < seqs.length; i++) assert.equal(seqs[i], seqs[i - 1] + 1);
  } catch (error) {
    await keep("killed", directory, bridge);
    throw error;
  } finally {
    await bridge.stop();
    await rm(directory, { recursive: true, force: true });
  }
});

test("a replay on the dashboard: the recorded robot, its readings, and a banner that says it is a replay", async () => {
  const directory = await mkdtemp(path.join(os.tmpdir(), "flockbridge-record-"));
  const recorder = await startBridge(binary, ["--robot", "smr", "--simulate", "--record", directory]);
  let replay = null;
  let browser = null;
  try {
    const client = new JsonClient(jsonPort(recorder));
    const recorded = await client.next((m) => m.type === "sensor" && m.seq >= 200, 20000);  // two seconds of periods
    await client.close();
    assert.equal(await recorder.stop(), 0);
    const file = await onlyFile(directory);
    replay = await startBridge(binary, ["--replay", file, "--replay-speed", "0.5"]);
    browser = await launchChromium();
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.on("pageerror", (error) => { throw error; });
    await page.goto(`http://127.0.0.1:${replay.httpPort}/`);  // the dashboard is the first client: the replay begins
    const banner = page.getByTestId("replay");
    await banner.waitFor({ state: "visible" });
    assert.match(await banner.textContent(), new RegExp(`Replay of ${path.basename(file)} \\(recorded .*0\\.5× speed\\)`));
    // A recording cannot be driven, handed over or recorded again: the page offers none of it.
    for (const testid of ["forward", "back", "left", "right", "take", "record", "speed"]) {
      assert.equal(await page.getByTestId(testid).isVisible(), false, `${testid} is offered in a replay`);
    }
    assert.equal(await page.getByTestId("emergency").isVisible(), true, "the emergency stop is");
    // The recorded periods, as the robot's: the page gets 20 periods past
    // the first the recording holds (the file has 200 or more; the page,
    // which asks for fewer periods than the robot's 100 a second, shows
    // some of them, and perhaps not the last; and waiting for "20 more"
    // than the page showed could begin after a slow page load had seen the
    // replay to its end).
    const first = client.messages.find((m) => m.json.type === "sensor").json.tick;
    assert.ok(recorded.json.tick >= first + 100, `${first} to ${recorded.json.tick}: not a recording long enough`);
    const tick = first + 20;
    try {
      await page.waitForFunction(
        (least) => Number(document.querySelector('[data-testid="smr-tick"]').textContent) >= least, tick);
    } catch (error) {
      const shown = await page.getByTestId("smr-tick").textContent();
      throw new Error(`the page shows period ${shown}, never ${tick}: ${error.message}\n${replay.tail()}`);
    }
    await checkLayout(page, "dashboard-replay");
    await replay.waitFor("the replay of " + path.basename(file) + " has ended", 20000);
  } finally {
    await browser?.close();
    if (replay) assert.equal(await replay.stop(), 0);
    await recorder.stop();
    await rm(directory, { recursive: true, force: true });
  }
});
