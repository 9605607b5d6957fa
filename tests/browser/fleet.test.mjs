// The class hub's page (/fleet) in a real browser: a real mosquitto with the
// project's ACL, a Flockbot and an SMR bridge (each with its simulated
// robot) on it, and a hub with no robot (flockbridge --hub) whose page
// shows them live in Debian's headless Chromium. The teacher signs in and
// stops the class; a robot whose bridge dies stays, greyed, as offline.
// Every wait is for an event.
//
//   FLOCKBRIDGE_BIN=build/bin/flockbridge node --test tests/browser/fleet.test.mjs
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { startBridge } from "./bridge.mjs";
import { launchChromium } from "./browser.mjs";
import { artifacts, binary, brokenWords } from "./dashboard.mjs";
import { startBroker } from "./mosquitto.mjs";

let broker, flockbot, smr, hub, browser, page;

before(async () => {
  broker = await startBroker(["fb-5", "smr-5"]);
  const join = (name) => ["--mqtt", "--mqtt-host", "127.0.0.1", "--mqtt-port", String(broker.port),
                          "--robot-name", name, "--mqtt-password-file", broker.passwordFile(name),
                          "--mqtt-telemetry-hz", "2"];
  flockbot = await startBridge(binary, ["--no-config", "--simulate", ...join("fb-5")]);
  smr = await startBridge(binary, ["--no-config", "--robot", "smr", "--simulate", ...join("smr-5")]);
  // The teacher's secret comes from the hub's file, as on a real hub.
  const config = path.join(broker.dir, "hub.toml");
  fs.writeFileSync(config, '[access]\nteacher_secret = "sesame"\n', { mode: 0o600 });
  hub = await startBridge(binary, ["--hub", "--config", config, ...join("hub")]);
  await hub.waitFor("mqtt: connected");
  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on("pageerror", (error) => { throw error; });
  // The hub with no robot has no robot's dashboard: its home page is the class's.
  await page.goto(`http://127.0.0.1:${hub.httpPort}/`);
});

after(async () => {
  await browser?.close();
  for (const bridge of [hub, smr]) {
    if (bridge) assert.equal(await bridge.stop(), 0, "the bridge must exit 0 on SIGTERM");
  }
  await flockbot?.stop();
  await broker?.stop();
});

const row = (robot) => page.getByTestId("robot-" + robot);
const cellOf = (robot, testid) => row(robot).getByTestId(testid);

test("the hub's page lists every robot of the class, live", async () => {
  await page.getByTestId("connection").filter({ hasText: "Hub connected" }).waitFor();
  assert.equal(await page.title(), "flockbridge: the class's robots");
  await cellOf("smr-5", "state").filter({ hasText: /^online$/ }).waitFor();
  await cellOf("fb-5", "state").filter({ hasText: /^online$/ }).waitFor();
  await cellOf("smr-5", "battery").filter({ hasText: "12.4 V" }).waitFor();
  await cellOf("smr-5", "moving").filter({ hasText: /^still$/ }).waitFor();
  assert.equal(await cellOf("smr-5", "driver").textContent(), "nobody");
  assert.equal(await page.getByTestId("count").textContent(), "2 of 2 online");
  assert.equal(await row("hub").count(), 0, "a hub with no robot is not one of the class");
  // Each robot's name leads to its own dashboard.
  const link = await row("smr-5").locator("a").getAttribute("href");
  assert.match(link, /^http:\/\/127\.0\.0\.1:\d+\/$/);
  // Only the teacher may stop the class.
  assert.equal(await page.getByTestId("stop-all").isDisabled(), true);
});

test("the teacher signs in and stops every robot; each one latches", async () => {
  await page.getByTestId("teacher-sign-in").click();
  await page.getByTestId("secret").fill("sesame");
  await page.getByTestId("secret-submit").click();
  await page.getByTestId("role").filter({ hasText: "the teacher" }).waitFor();
  await page.getByTestId("stop-all").click();
  await smr.waitFor("mqtt: emergency stop from the fleet (the teacher at 127.0.0.1:");
  await flockbot.waitFor("mqtt: emergency stop from the fleet (the teacher at 127.0.0.1:");
  await flockbot.waitFor("simulated Uno: rx 45 4D 47");
  // Who stopped each robot, and who may clear it.
  // At a glance, each is stopped; why, and who may clear it, on demand.
  await cellOf("smr-5", "state").filter({ hasText: /^STOPPED$/ }).waitFor();
  await cellOf("fb-5", "state").filter({ hasText: /^STOPPED$/ }).waitFor();
  for (const robot of ["smr-5", "fb-5"]) await row(robot).getByTestId("details").locator("summary").click();
  await cellOf("smr-5", "state-full").filter({ hasText: "online, stopped by the fleet (the teacher at" }).waitFor();
  await cellOf("fb-5", "state-full").filter({ hasText: "Clear here or its teacher clears it" }).waitFor();
  await cellOf("fb-5", "event").filter({ hasText: "emergency stop by the fleet (the teacher at" }).waitFor();
  assert.deepEqual(await brokenWords(page), [], "words cut in two by a line's end, with the details open");
  // A student's dashboard on the robot says so too, and offers no Clear: only the class hub or a teacher may.
  const student = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await student.goto(await row("smr-5").locator("a").getAttribute("href"));
  await student.getByTestId("latch-by").filter({ hasText: "by the fleet (the teacher at" }).waitFor();
  await student.getByTestId("latch-who").filter({ hasText: "class hub" }).waitFor();
  assert.equal(await student.getByTestId("clear-emergency").isHidden(), true);

  // The teacher clears the class's stop on the hub: every robot may drive again.
  await page.getByTestId("clear-all").click();
  await smr.waitFor("cleared the class's emergency stop: the robot may drive again");
  await cellOf("smr-5", "state").filter({ hasText: /^online$/ }).waitFor();
  await cellOf("fb-5", "state").filter({ hasText: /^online$/ }).waitFor();
  await student.getByTestId("latch").waitFor({ state: "hidden" });
  await student.close();
});

test("a robot whose bridge dies stays on the page, greyed, offline since then", async () => {
  flockbot.process.kill("SIGKILL");
  await cellOf("fb-5", "state").filter({ hasText: /^offline \d+ s ago$/ }).waitFor();
  assert.equal(await row("fb-5").getAttribute("class"), "offline");
  assert.equal(await row("fb-5").locator("td").nth(1).textContent(), "flockbot", "what it was");
  assert.equal(await row("fb-5").locator("a").count(), 0, "no link to a dashboard that is gone");
  assert.equal(await page.getByTestId("count").textContent(), "1 of 2 online");
  assert.deepEqual(await brokenWords(page), [], "words cut in two by a line's end at the desktop's width");
  await page.screenshot({ path: path.join(artifacts, "fleet.png"), fullPage: true });
});

test("a stop for a robot that is offline waits at the hub, and the page says so", async () => {
  await row("fb-5").getByTestId("stop-fb-5").click();
  await page.getByTestId("notice").filter({ hasText: "fb-5 is offline and did not hear it" }).waitFor();
  await page.getByTestId("pending-fb-5").filter({ hasText: "A stop waits here for it" }).waitFor();
  await row("fb-5").getByTestId("clear-fb-5").click();
  await page.getByTestId("pending-fb-5").filter({ hasText: "A clear waits here for it" }).waitFor();
});

test("on a phone the page stacks: no sideways scrolling, every cell named", async () => {
  await page.setViewportSize({ width: 390, height: 844 });
  await row("smr-5").getByTestId("battery").filter({ hasText: "12.4 V" }).waitFor();
  const widths = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  assert.equal(widths[0], widths[1], "the page is as wide as the phone");
  const label = await cellOf("smr-5", "battery").evaluate((td) => getComputedStyle(td, "::before").content);
  assert.equal(label, '"Battery: "');
  assert.deepEqual(await brokenWords(page), [], "words cut in two by a line's end on a phone");
  await page.screenshot({ path: path.join(artifacts, "fleet-phone.png"), fullPage: true });
});
