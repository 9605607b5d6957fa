// The dashboard of a Pioneer in a real browser: the real bridge with
// --robot pioneer against the simulated Pioneer 3-DX, the page in Debian's
// headless Chromium. It must show a Pioneer as a Pioneer (pose, speeds,
// battery in volts, its path and sonar, who holds control) and drive it with
// the same controls as a Flockbot. Every wait is for an event.
//
//   FLOCKBRIDGE_BIN=build/bin/flockbridge node --test tests/browser/pioneer/pioneer.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import { startBridge } from "../bridge.mjs";
import { artifacts, binary, checkLayout, dashboardSuite, holdButton, holdKey } from "../dashboard.mjs";

let bridge, page, text, number, counterLater;
dashboardSuite(["--robot", "pioneer", "--model", "p3dx-sh", "--simulate"],
               (ui) => ({ bridge, page, text, number, counterLater } = ui));
/** Waits until the page's counter of the robot's packets has moved on by `count`. */
const sipsLater = (count) => counterLater("pioneer-seq", count);

test("the page shows a Pioneer as a Pioneer", async () => {
  await page.getByTestId("link").filter({ hasText: "Robot connected" }).waitFor();
  await page.getByTestId("robot-title").filter({ hasText: "Pioneer p3dx-sh" }).waitFor();
  await page.getByTestId("pioneer").waitFor({ state: "visible" });
  assert.equal(await page.getByTestId("sensors").isVisible(), false, "no Flockbot sensors");
  assert.equal(await page.getByTestId("claw_open").isVisible(), false, "no claw");
  await sipsLater(3);
  // The robot model's panel, the same for every family: volts, bumpers, the view from above.
  assert.equal(await text("robot-battery"), "12.60 V");
  assert.equal(await text("robot-bumped"), "none pressed");
  assert.equal(await text("pioneer-motors"), "on");
  assert.equal(await text("stall"), "turning freely");  // words, not alarms that read "stalled"
  // What the sonar sees is placed around the robot as SIPs bring its discs.
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="view"]').dataset.echoes) >= 4);
  // Who drives, from the bridge's counters (asked every 2 s).
  await page.getByTestId("control").filter({ hasText: "Nobody holds control" }).waitFor();
});

test("every reading is labelled: each sonar disc by where it looks, what the colours mean", async () => {
  // A p3dx-sh has 16 discs, 8 ahead and 8 behind; the SIPs bring a few at a time.
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="sonar"] .sonar-disc').length === 16);
  const names = await page.getByTestId("sonar").locator(".ir-name").allTextContents();
  assert.equal(names[0], "left 90°");
  assert.equal(names[1], "front left 50°");
  assert.equal(names[3], "front 10°");
  assert.equal(names[4], "front -10°");
  assert.equal(names[7], "right -90°");
  assert.ok(names.slice(8).every((n) => n.startsWith("rear") || n === "right -90°" || n === "left 90°"), names.join());
  await page.getByTestId("pioneer").getByText("the fuller its bar, the nearer the echo").waitFor();
  // Every disc's distance as a number where a person looks: the robot's panel.
  await page.waitForFunction(() => document.querySelectorAll('[data-testid="robot-ranges"] .range').length === 16);
  assert.match(await page.getByTestId("robot-ranges").locator(".range").first().textContent(), /^\S+ (\d+|–)$/);
  // No disc's name runs into its neighbour's.
  const overlaps = await page.evaluate(() => {
    const boxes = [...document.querySelectorAll('[data-testid="sonar"] .ir-name')].map((e) => e.getBoundingClientRect());
    return boxes.filter((a, i) => boxes.some((b, j) => j !== i && a.left < b.right - 1 && b.left < a.right - 1 &&
                                                   a.top < b.bottom - 1 && b.top < a.bottom - 1)).length;
  });
  assert.equal(overlaps, 0, "sonar names overlap");
  await page.locator('#robot-panel [data-key="ranges"]').waitFor({ state: "visible" });
  await page.locator('#robot-panel [data-key="walls"]').waitFor({ state: "visible" });
  assert.equal(await page.locator('#robot-panel [data-key="unknown"]').isHidden(), true, "its pose is known");
  await checkLayout(page, "dashboard-pioneer-still");
});

test("forward, held, drives it at the slider's speed; stop holds the pose", async () => {
  const start = await number("pose-x");
  const release = await holdButton(page, "forward");
  await bridge.waitFor("simulated Pioneer: rx VEL 300");  // 30 cm/s
  await page.waitForFunction(
    (from) => Number(document.querySelector('[data-testid="pose-x"]').textContent) > from + 100, start);
  await page.getByTestId("robot-v").filter({ hasText: "300" }).waitFor();

  await page.getByTestId("stop").click();  // stops while still held
  await bridge.waitFor("simulated Pioneer: rx STOP");
  await release();
  await sipsLater(3);  // what was on its way before the stop has arrived
  const stopped = await number("pose-x");
  await sipsLater(5);
  assert.equal(await number("pose-x"), stopped, "the pose holds after stop");
});

test("arrow keys turn it, and its own commands and the emergency stop reach it", async () => {
  const release = await holdKey(page, "ArrowLeft");
  await bridge.waitFor("simulated Pioneer: rx RVEL 30");
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="pose-th"]').textContent) > 5);
  await release();
  await bridge.waitFor("simulated Pioneer: rx STOP");
  await page.getByTestId("sonar-off").click();
  await bridge.waitFor("simulated Pioneer: rx SONAR 0");
  await page.getByTestId("sonar-on").click();
  await bridge.waitFor("simulated Pioneer: rx SONAR 1");
  await page.getByTestId("emergency").click();
  await bridge.waitFor("simulated Pioneer: rx E_STOP");
  await page.getByTestId("reset_pose").click();
  await bridge.waitFor("simulated Pioneer: rx SETO");
  await page.screenshot({ path: path.join(artifacts, "dashboard-pioneer.png"), fullPage: true });
});

test("with the robot's device missing, the page offers no drive and says why", async () => {
  const missing = await startBridge(binary, ["--robot", "pioneer", "--device", "/dev/flockbridge-test-missing"]);
  const other = await page.context().browser().newPage({ viewport: { width: 1280, height: 900 } });
  try {
    other.on("pageerror", (error) => { throw error; });
    await other.goto(`http://127.0.0.1:${missing.httpPort}/`);
    await other.getByTestId("link").filter({ hasText: "Robot not connected" }).waitFor();
    await other.getByTestId("link-help").filter({ hasText: "/dev/flockbridge-test-missing" }).waitFor();
    for (const testid of ["forward", "back", "left", "right", "sonar-on", "motors-on"]) {
      assert.equal(await other.getByTestId(testid).isDisabled(), true, `${testid} is offered without a robot`);
    }
    assert.equal(await other.getByTestId("emergency").isDisabled(), false, "the emergency stop is always offered");
    assert.equal(await other.getByTestId("stop").isDisabled(), false, "so is Stop");
    assert.equal(await other.getByTestId("sonar-none").isVisible(), false, "no guess that the sonar is off");
  } finally {
    await other.close();
    assert.equal(await missing.stop(), 0);
  }
});

test("a family the page has no panel for: its readings as they come, each field on a line", async () => {
  // The same bridge, its hello rewritten on the way to a second page to name
  // a family the page has no row for, as a newer bridge's would.
  const other = await page.context().browser().newPage({ viewport: { width: 1280, height: 900 } });
  other.on("pageerror", (error) => { throw error; });
  await other.routeWebSocket(/\/ws$/, (ws) => {
    const server = ws.connectToServer();
    server.onMessage((message) => {
      const parsed = typeof message === "string" ? JSON.parse(message) : null;
      if (parsed?.type !== "hello") return ws.send(message);
      ws.send(JSON.stringify({ ...parsed, robot: "rover", model: "r1" }));
    });
  });
  await other.goto(`http://127.0.0.1:${bridge.httpPort}/`);
  await other.getByTestId("robot-title").filter({ hasText: "rover r1" }).waitFor();
  await other.getByTestId("readings").waitFor({ state: "visible" });
  for (const panel of ["sensors", "pioneer", "smr"]) {
    assert.equal(await other.getByTestId(panel).isVisible(), false, `no ${panel} panel`);
  }
  // Each field of the robot's readings, by its name, as the bridge sends it.
  const list = other.getByTestId("readings-list");
  await list.locator("dt", { hasText: /^pose$/ }).waitFor();
  assert.match(await list.locator("dt:has-text('pose') + dd").textContent(), /"x_mm":/);
  assert.ok(await list.locator("dt", { hasText: /^battery_v$/ }).count() === 1, "the battery's field");
  await other.waitForFunction(() => Number(document.getElementById("readings-rate").textContent) > 0);
  await checkLayout(other, "dashboard-any-family");
  await other.close();
});
