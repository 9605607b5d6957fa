// The dashboard of a DTU Small Mobile Robot in a real browser: the real
// bridge with --robot smr against the simulated SMR bus, the page in
// Debian's headless Chromium. It must show an SMR as an SMR (the line
// sensor bar, the IR, the pose and its path, the battery and power inputs),
// ask for fewer than the robot's 100 periods a second, and drive it with
// the same controls as every robot. Every wait is for an event.
//
//   FLOCKBRIDGE_BIN=build/bin/flockbridge node --test tests/browser/smr/smr.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { artifacts, checkLayout, dashboardSuite, holdButton, holdKey } from "../dashboard.mjs";

let bridge, page, text, number, counterLater;
dashboardSuite(["--robot", "smr", "--simulate"], (ui) => ({ bridge, page, text, number, counterLater } = ui));
/** Waits until the page's period counter has moved on by `count` periods. */
const periodsLater = (count) => counterLater("smr-tick", count);

test("the page shows an SMR as an SMR, at a pace a browser wants", async () => {
  await page.getByTestId("link").filter({ hasText: "Robot connected" }).waitFor();
  await page.getByTestId("robot-title").filter({ hasText: "SMR" }).waitFor();
  await page.getByTestId("smr").waitFor({ state: "visible" });
  assert.equal(await page.getByTestId("sensors").isVisible(), false, "no Flockbot sensors");
  assert.equal(await page.getByTestId("pioneer").isVisible(), false, "no Pioneer panel");
  await periodsLater(20);
  assert.equal(await text("robot-battery"), "12.40 V");  // the robot model's panel
  assert.equal(await text("smr-missing"), "all answering");
  assert.equal(await text("smr-power-switch"), "power switch on");
  // The simulated robot starts on the line: the bar's middle two sensors are dark.
  const dark = await page.locator('[data-testid="smr-line"] span.dark').count();
  assert.equal(dark, 2, "two line sensors over the line");
  // It asked for a period every 50 ms: about 20 a second of the robot's 100.
  // The rate shown counts the last second, which at first still holds the
  // periods that came before the page's subscribe was read: wait until it
  // settles (a throttle that does not work never does, and the wait fails).
  const settled = await page.waitForFunction(() => {
    const rate = Number(document.getElementById("smr-rate").textContent);
    return rate >= 10 && rate <= 30;
  }, null, { timeout: 5000 }).then(() => true, () => false);
  const rate = Number(await page.locator("#smr-rate").textContent());
  assert.ok(settled, `the page draws ${rate} periods a second`);
});

test("every reading is labelled: each IR sensor's place, what the colours mean, the simulated room", async () => {
  const names = await page.getByTestId("smr-ir-names").locator("span").allTextContents();
  assert.deepEqual(names, ["left", "front left", "front", "front right", "right", "rear"]);
  await page.getByTestId("smr").getByText("green: on, grey: off").waitFor();
  // No bumpers on an SMR: no Bumpers row. Its IR distances, in mm, in the robot's panel.
  assert.equal(await page.locator('#robot-panel dt[data-has="bumpers"]').isVisible(), false, "no bumpers to show");
  const ranges = await page.getByTestId("robot-ranges").locator(".range").allTextContents();
  assert.equal(ranges.length, 6, ranges.join());
  assert.match(ranges[0], /^left (\d+|–)$/);
  assert.match(ranges[2], /^front (\d+|–)$/);
  // The simulated robot drives in a room, which the view draws; the path is named once there is one.
  await page.locator('#robot-panel [data-key="walls"]').waitFor({ state: "visible" });
  assert.equal(await page.locator('#robot-panel [data-key="trace"]').isHidden(), true, "no path drawn yet");
  await checkLayout(page, "dashboard-smr-still");
});

test("forward drives it at the slider's speed; stop holds the pose; the path is drawn", async () => {
  const start = await number("pose-x");
  const release = await holdButton(page, "forward");
  await bridge.waitFor("simulated SMR: rx left speed 29");  // 30 cm/s in encoder positions a period
  await bridge.waitFor("simulated SMR: rx right speed -29");  // mirrored on the bus
  await page.waitForFunction(
    (from) => Number(document.querySelector('[data-testid="pose-x"]').textContent) > from + 100, start);
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="view"]').dataset.points) > 10);
  await page.locator('#robot-panel [data-key="trace"]').waitFor({ state: "visible" });

  await release();
  await bridge.waitFor("simulated SMR: rx left speed 0");
  await periodsLater(10);  // what was on its way before the stop has arrived
  const stopped = await number("pose-x");
  await periodsLater(20);
  assert.equal(await number("pose-x"), stopped, "the pose holds after stop");
});

test("arrow keys turn it, and the emergency stop reaches it", async () => {
  const release = await holdKey(page, "ArrowLeft");
  await bridge.waitFor("simulated SMR: rx left speed -");
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="pose-th"]').textContent) > 5);
  await page.getByTestId("emergency").click();  // while the key is held
  await bridge.waitFor("simulated SMR: rx left speed 0");
  await release();
  await page.screenshot({ path: path.join(artifacts, "dashboard-smr.png"), fullPage: true });
});
