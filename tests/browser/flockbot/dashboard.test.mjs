// The dashboard in a real browser: the real bridge against its simulated Uno,
// the page opened in Debian's headless Chromium driven by playwright-core.
// Every wait is for an event (a value on the page, a line in the bridge's
// log), never a sleep. Screenshots go to $FLOCKBRIDGE_ARTIFACTS.
//
//   FLOCKBRIDGE_BIN=build/bin/flockbridge node --test tests/browser/flockbot/dashboard.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { startBridge } from "../bridge.mjs";
import { artifacts, binary, checkLayout, dashboardSuite, holdButton, holdKey } from "../dashboard.mjs";

let bridge, page, text, number, counterLater;
// Recordings go to a folder of the test's own, and only when asked for.
const recordings = await mkdtemp(path.join(os.tmpdir(), "flockbridge-dashboard-"));
const suite = dashboardSuite(["--simulate", "--sim-rate-hz", "20", "--record", recordings, "--record-enabled=false"],
                             (ui) => ({ bridge, page, text, number, counterLater } = ui));
/** Waits until the page's counter of the robot's packets has moved on by `count`. */
const packetsLater = (count) => counterLater("seq", count);

test("the page connects and shows live values that change", async () => {
  await page.getByTestId("connection").filter({ hasText: "Bridge connected" }).waitFor();
  await page.getByTestId("link").filter({ hasText: "Robot connected" }).waitFor();
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="seq"]').textContent) > 0);
  const firstSeq = await number("seq");
  const firstIr = await page.locator("#ir0-value").textContent();
  await packetsLater(10);
  assert.ok((await number("seq")) >= firstSeq + 10, "the packet counter moves on");
  // The simulated Uno's volts per count are known (--simulate): volts, not a count.
  assert.match(await text("battery"), /^\d+\.\d\d V$/);
  // The robot model's panel, the same for every family: its pose and volts are known here too.
  assert.match(await text("robot-battery"), /^\d+\.\d\d V$/);
  assert.equal(await text("pose-x"), "0");
  assert.equal(await page.getByTestId("pose-unknown").isHidden(), true);
  // The simulated IR readings of the walls carry noise: they change.
  await page.waitForFunction((first) => document.querySelector("#ir0-value").textContent !== first, firstIr);
  // Shown as a count; while the browser starts, a packet or two may be
  // replaced by newer ones before the page reads them (the bridge's
  // latest-wins rule, tested on its own in e2e_tests).
  assert.match(await text("dropped"), /^\d+$/);
  assert.match(await text("session"), /^[0-9a-f]{16}$/);
});

test("holding forward makes the simulated odometer rise; letting go makes it hold", async () => {
  await packetsLater(1);
  const start = await number("odo-avg");
  const release = await holdButton(page, "forward");
  await bridge.waitFor("simulated Uno: rx 44 4D 53 1E");  // D M S 30
  await page.waitForFunction(
    (from) => Number(document.querySelector('[data-testid="odo-avg"]').textContent) > from + 50, start);

  await release();
  await bridge.waitFor("simulated Uno: rx 44 53 54");  // D S T
  await packetsLater(3);  // what was on its way before the stop has arrived
  const stopped = await number("odo-avg");
  await packetsLater(10);
  assert.equal(await number("odo-avg"), stopped, "the odometer holds after stop");
  assert.ok(stopped > start + 50);
});

test("arrow keys drive while held, the emergency stop and the tools reach the Uno", async () => {
  const release = await holdKey(page, "ArrowLeft");
  await bridge.waitFor("simulated Uno: rx 44 52 43 1E");  // D R C 30: rotate left
  await release();
  await bridge.waitFor("simulated Uno: rx 44 53 54");
  await holdKey(page, "ArrowRight");
  await bridge.waitFor("simulated Uno: rx 44 52 43 E2");  // rotate right
  await page.keyboard.press("Space");  // stops, whatever is held
  await bridge.waitFor("simulated Uno: rx 44 53 54");
  await page.keyboard.up("ArrowRight");
  await page.getByTestId("emergency").click();
  await bridge.waitFor("simulated Uno: rx 45 4D 47");  // E M G

  await page.getByTestId("claw_open").click();
  await bridge.waitFor("simulated Uno: rx 44 47 4F");
  await page.getByTestId("camera_up").click();
  await bridge.waitFor("simulated Uno: rx 44 43 55");
  await page.getByTestId("lcd-text").fill("Hi class");
  await page.getByTestId("lcd-write").click();
  await bridge.waitFor("simulated Uno: rx 44 4C 53 48 69 20 63 6C 61 73 73 00");  // D L S "Hi class" NUL
});

test("an error from the bridge is shown to the user", async () => {
  await page.locator("#claw-pos").fill("99");
  await page.getByTestId("claw_set").click();
  await page.getByTestId("messages").filter({ hasText: "claw_set: pos must be from 0 to 30, got 99" }).waitFor();
});

test("every reading is labelled, and the page fits a desktop and a phone; screenshots are saved", async () => {
  const names = await page.getByTestId("ir-names").locator("span").allTextContents();
  assert.deepEqual(names, ["IR 0", "IR 1", "IR 2", "IR 3", "IR 4"]);
  await page.getByTestId("sensors").getByText("grey: not pressed, red: pressed").waitFor();
  // Where each IR sensor looks, as the robot's geometry (hello) says.
  assert.match(await text("ir-places"), /IR 0 left \(90°\), IR 1 front left \(45°\), IR 2 front \(0°\)/);
  // The page has an icon of its own.
  const icon = await page.evaluate(async () => {
    const response = await fetch(document.querySelector("link[rel=icon]").href);
    return [response.status, response.headers.get("content-type")];
  });
  assert.deepEqual(icon, [200, "image/svg+xml"]);
  await page.getByTestId("plot-legend").waitFor({ state: "visible" });  // the lines are drawn
  // Volts: the simulated Uno's conversion is known.
  await page.getByTestId("battery").filter({ hasText: /^\d+\.\d\d V$/ }).waitFor();
  await checkLayout(page, "dashboard");
  await page.setViewportSize({ width: 390, height: 844 });
  const emergency = await page.getByTestId("emergency").boundingBox();
  assert.ok(emergency.width >= 300 && emergency.height >= 56, "the emergency stop is large on a phone");
  await page.setViewportSize({ width: 1280, height: 900 });
});

test("the Record button records the run, with a red dot while it does", async () => {
  await page.getByTestId("link").filter({ hasText: "Robot connected" }).waitFor();
  assert.equal(await page.getByTestId("recording").isVisible(), false, "no dot before recording");
  await page.getByTestId("record").filter({ hasText: "Record" }).click();
  await page.getByTestId("recording").waitFor({ state: "visible" });
  await bridge.waitFor("recording into " + recordings);
  assert.match(await text("recording-by"), /started by client \d+ /);
  await page.getByTestId("record").filter({ hasText: "Stop recording" }).waitFor();
  await checkLayout(page, "dashboard-recording");
  await page.getByTestId("record").click();
  await page.getByTestId("recording").waitFor({ state: "hidden" });
  await bridge.waitFor("is complete");
  const files = (await readdir(recordings)).filter((name) => name.endsWith(".mcap"));
  assert.equal(files.length, 1);
  await rm(recordings, { recursive: true, force: true });
});

test("sensor-to-browser latency (a figure, not a check)", async () => {
  await page.evaluate(() => { window.flockbridge.stats.latencies.length = 0; });
  // The page's own count, not the bridge's: on a busy machine the browser may lag behind.
  await page.waitForFunction(() => window.flockbridge.stats.latencies.length >= 100, null, { timeout: 60000 });
  const latencies = await page.evaluate(() => window.flockbridge.stats.latencies.slice());
  const sorted = latencies.map((s) => s * 1000).sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))].toFixed(2);
  console.log(`# sensor-to-browser latency over ${sorted.length} packets: p50 ${at(0.5)} ms, p99 ${at(0.99)} ms`);
  assert.ok(sorted.length >= 100);
});

test("the client list shows a port-2005 client in the original dialect and counts what it did wrong", async () => {
  const student = net.connect(bridge.nativePort, "127.0.0.1");
  await new Promise((resolve, reject) => { student.once("connect", resolve); student.once("error", reject); });
  const port = student.localPort;
  student.write(Buffer.from([3, 0x44, 0x58, 0x59]));  // D X Y: no such command
  await bridge.waitFor("original dialect, not told): unknown command 'DXY'");
  const row = page.getByTestId("clients").locator("tr", { hasText: `127.0.0.1:${port}` });
  await row.filter({ hasText: "binary (original)" }).waitFor();
  // commands 0, refused 1: the refusal the client itself was not told of.
  await page.waitForFunction((peer) => {
    for (const tr of document.querySelectorAll('[data-testid="clients"] tbody tr')) {
      const cells = [...tr.children].map((td) => td.textContent);
      if (cells[2] === peer) return cells[4] === "1";
    }
    return false;
  }, `127.0.0.1:${port}`);
  await page.screenshot({ path: path.join(artifacts, "dashboard-clients.png"), fullPage: true });
  student.destroy();
});

test("when the bridge goes away the page says so, and reconnects to a new one by itself", async () => {
  const port = bridge.httpPort;
  const oldSession = await text("session");
  assert.equal(await bridge.stop(), 0);
  await page.getByTestId("connection").filter({ hasText: "Bridge unreachable" }).waitFor();
  assert.equal(await page.getByTestId("forward").isDisabled(), true, "drive controls are off while unreachable");

  // The new bridge has no robot: the page must say that too.
  bridge = await startBridge(binary, ["--http-port", String(port), "--device", "/nonexistent/flockbot",
                                      "--reopen-max-ms", "1000"]);
  suite.opened.bridge = bridge;  // the one to stop at the end
  await page.getByTestId("connection").filter({ hasText: "Bridge connected" }).waitFor({ timeout: 15000 });
  await page.getByTestId("link").filter({ hasText: "Robot not connected" }).waitFor();
  // Which device was tried, why it failed, and what to do, in words.
  const help = page.getByTestId("link-help");
  await help.filter({ hasText: "No robot at /nonexistent/flockbot (no such device)" }).waitFor();
  await help.filter({ hasText: "give its device with --device, or try --simulate" }).waitFor();
  await help.filter({ hasText: "udev rule" }).waitFor();
  await page.waitForFunction(
    (old) => document.querySelector('[data-testid="session"]').textContent !== old, oldSession);
  // The last readings are shown as old, not as if they were live.
  await page.getByTestId("stale").filter({ hasText: "No new readings" }).waitFor();
  // No drive is offered without a robot; an arrow key is told so, and nothing stays lit.
  assert.equal(await page.getByTestId("forward").isDisabled(), true, "forward is offered without a robot");
  assert.equal(await page.getByTestId("emergency").isDisabled(), false, "the emergency stop is always offered");
  const release = await holdKey(page, "ArrowUp");
  await page.getByTestId("messages").filter({ hasText: "Not sent: the robot is not connected." }).first().waitFor();
  await release();
  assert.equal(await page.locator("[data-drive].active").count(), 0, "a drive button is lit");
  await page.screenshot({ path: path.join(artifacts, "dashboard-no-robot.png"), fullPage: true });
});
