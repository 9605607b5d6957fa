// Plug and play on the dashboard, in a real browser: the real bridge with
// --robot auto --device auto, searching a folder of the test's own, the page
// open before any robot is there. It must say that it looks for a robot;
// then, once a simulated robot is plugged in (its pseudo-terminal linked
// where the bridge searches, as udev links a USB serial adapter), name the
// robot and say where it was found, at which speed and how soon. Every
// wait is for an event.
//
//   FLOCKBRIDGE_BIN=build/bin/flockbridge node --test tests/browser/plug.test.mjs
import { after, test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { robotFamilies, startBridge } from "./bridge.mjs";
import { launchChromium } from "./browser.mjs";
import { binary, checkLayout } from "./dashboard.mjs";

const devices = mkdtempSync(path.join(os.tmpdir(), "flockbridge-plug-"));
const family = robotFamilies(binary)[0];
let bridge, browser, robot;

after(async () => {
  await browser?.close();
  if (robot && robot.exitCode === null) {
    robot.kill("SIGTERM");
    await once(robot, "exit");
  }
  if (bridge) assert.equal(await bridge.stop(), 0, "the bridge must exit 0 on SIGTERM");
  rmSync(devices, { recursive: true, force: true });
});

test("the page says it looks for a robot, then names the robot plugged in and where it was found", async () => {
  bridge = await startBridge(binary, ["--robot", "auto", "--device", "auto", "--search", path.join(devices, "tty*")]);
  browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on("pageerror", (error) => { throw error; });
  await page.goto(`http://127.0.0.1:${bridge.httpPort}/`);
  await page.getByTestId("robot-title").filter({ hasText: "Looking for a robot" }).waitFor();
  await page.getByTestId("link-help").filter({ hasText: "no robot found" }).waitFor();
  assert.equal(await page.getByTestId("found").isVisible(), false, "nothing found yet");
  await checkLayout(page, "plug-searching");

  // Plugged in: the simulated robot's device appears where the bridge looks.
  const device = path.join(devices, "ttyUSB0");
  robot = spawn(path.join(path.dirname(binary), "flockbridge-sim"), ["--robot", family, "--link", device],
                { stdio: ["ignore", "ignore", "ignore"] });
  const found = page.getByTestId("found");
  await found.filter({ hasText: `Found on ${device} at ` }).waitFor({ timeout: 30000 });
  assert.match(await found.textContent(), /^Found on .* at \d+ baud in \d+\.\d\d s$/);
  await page.getByTestId("link").filter({ hasText: "Robot connected" }).waitFor({ timeout: 30000 });
  assert.notEqual(await page.getByTestId("robot-title").textContent(), "Looking for a robot");
  await checkLayout(page, "plug-found");

  // Unplugged: the page says so, and looks again.
  robot.kill("SIGTERM");
  await once(robot, "exit");
  await page.getByTestId("robot-title").filter({ hasText: "Looking for a robot" }).waitFor({ timeout: 30000 });
  assert.equal(await found.isVisible(), false, "the robot that was found has gone");
});
