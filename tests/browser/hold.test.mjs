// Hold to drive, in Chromium: the dashboard's drive button and arrow keys
// move the robot only while held. Letting go stops it, and so does a page
// that is hidden or loses the focus; a page whose network vanishes stops
// its robot too, though it cannot say so: the bridge does, within a second
// (the commands' dead-man time, then the driver watch). Every wait is for
// an event: the simulator's own "wheels turning" and "wheels stopped",
// which the bridge logs, and the page's messages.
//   FLOCKBRIDGE_BIN=build/bin/flockbridge node --test tests/browser/hold.test.mjs
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { startBridge } from "./bridge.mjs";
import { chromiumProgram, launchChromium } from "./browser.mjs";
import { binary, closeDashboard, holdButton, holdKey, openDashboard } from "./dashboard.mjs";
import { TestNetwork } from "./network.mjs";

const TURNING = "simulated Uno: wheels turning";
const STOPPED = "simulated Uno: wheels stopped";

/** The page's message log has a line with `text`. */
const said = (page, text) => page.getByTestId("messages").locator("li", { hasText: text }).first().waitFor();

test("letting go, a hidden page and a page that lost the focus stop the robot; held, it drives on", async () => {
  const opened = await openDashboard(binary, ["--simulate"]);
  const { bridge, page } = opened;
  try {
    await page.getByTestId("link").filter({ hasText: "Robot connected" }).waitFor();

    // The button, held for two seconds: the robot drives all along; let go, it stops.
    let release = await holdButton(page, "forward");
    await bridge.waitFor(TURNING);
    await assert.rejects(bridge.waitFor(STOPPED, 2000), "held, the robot drives on");
    await release();
    await bridge.waitFor(STOPPED);
    assert.equal(bridge.seen("safety stop"), false, "letting go is no accident");

    // An arrow key, held; the page is hidden (another tab, a phone's lock).
    release = await holdKey(page, "ArrowUp");
    await bridge.waitFor(TURNING);
    await page.evaluate(() => {
      Object.defineProperty(document, "hidden", { get: () => true, configurable: true });
      document.dispatchEvent(new Event("visibilitychange"));
    });
    await bridge.waitFor(STOPPED);
    await said(page, "The page was hidden: driving stopped.");
    await release();
    await page.evaluate(() => delete document.hidden);

    // Held again; the window loses the focus (another program comes forward).
    release = await holdKey(page, "ArrowUp");
    await bridge.waitFor(TURNING);
    await page.evaluate(() => window.dispatchEvent(new Event("blur")));
    await bridge.waitFor(STOPPED);
    await said(page, "The page lost the focus: driving stopped.");
    await release();

    // The page says how to drive.
    await page.getByTestId("drive-help").filter({ hasText: "letting go stops the robot" }).waitFor();
  } finally {
    await closeDashboard(opened);
  }
});

const VANISHED = "a page whose network vanishes while a key is held: the robot stops, and the bridge says why";

test(VANISHED, async (t) => {
  if (process.getuid() !== 0 && spawnSync("sudo", ["-n", "true"]).status === 0) {
    // A developer's test command, as a user with sudo: this test as root.
    const root = spawnSync("sudo", ["-n", "env", `FLOCKBRIDGE_BIN=${path.resolve(binary)}`, process.execPath, "--test",
                                    "--test-name-pattern", VANISHED, fileURLToPath(import.meta.url)],
                           { stdio: "inherit" });
    assert.equal(root.status, 0, "as root, the test failed (its output is above)");
    return;
  }
  const why = TestNetwork.unavailable();
  assert.equal(why, null, why);
  const network = new TestNetwork();
  let bridge = null;
  let browser = null;
  try {
    // The bridge on the robot's computer, the page on the laptop.
    bridge = await startBridge(binary, ["--simulate", "--bind", "0.0.0.0"], (argv) => network.onRobot(argv));
    await bridge.waitFor("robot link up");
    browser = await launchChromium([], network.onLaptop(chromiumProgram));
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    page.on("pageerror", (error) => { throw error; });
    await page.goto(`http://${network.robotAddress}:${bridge.httpPort}/`);
    await page.getByTestId("link").filter({ hasText: "Robot connected" }).waitFor();

    await holdKey(page, "ArrowUp");
    await bridge.waitFor(TURNING);
    network.cut();
    const cut = Date.now();
    await bridge.waitFor(STOPPED, 3000);
    t.diagnostic(`stopped ${Date.now() - cut} ms after the page's network went`);
    await bridge.waitFor("lost its network", 5000);  // the lease freed, everyone told
    await said(page, "Nothing heard from the bridge: driving stopped");
    await page.keyboard.up("ArrowUp");
  } finally {
    await browser?.close();
    if (bridge) assert.equal(await bridge.stop(), 0, "the bridge must exit 0 on SIGTERM");
    network.remove();
  }
});
