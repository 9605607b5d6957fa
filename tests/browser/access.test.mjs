// Who may drive, in a real browser: the bridge with a driver PIN and a
// teacher's secret, a student's page and the teacher's page in Debian's
// headless Chromium. The student watches until the PIN is given, drives,
// is held by an emergency stop from the teacher's page until the teacher
// clears it, and sees the teacher take control; a program on port 2005
// drives once the page approves it. Every wait is for an event.
//
//   FLOCKBRIDGE_BIN=build/bin/flockbridge node --test tests/browser/access.test.mjs
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { artifacts, dashboardSuite } from "./dashboard.mjs";

const dir = mkdtempSync(path.join(tmpdir(), "flockbridge-access-"));
const config = path.join(dir, "flockbridge.toml");
writeFileSync(config, '[access]\ndriver_pin = "4711"\nteacher_secret = "chalk-and-cheese"\n', { mode: 0o600 });

let bridge, page;
const suite = dashboardSuite(["--simulate", "--sim-rate-hz", "20", "--config", config],
                             (ui) => ({ bridge, page } = ui));
let teacher = null;
after(() => teacher?.close());

/** Waits for a line in the page's message list. */
const message = (on, text) => on.getByTestId("messages").filter({ hasText: text }).first().waitFor();

test("a student's page watches until the PIN is given, then drives", async () => {
  await page.getByTestId("link").filter({ hasText: "Robot connected" }).waitFor();
  await page.getByTestId("role").filter({ hasText: "watching" }).waitFor();
  // A viewer may not take control: no such button. A drive key tells how to drive, in words, and asks for the PIN.
  assert.equal(await page.getByTestId("take").isHidden(), true);
  await page.keyboard.press("ArrowUp");
  await message(page, "To drive it, press “Drive…” and give the robot's PIN.");
  await page.getByTestId("secret-form").waitFor({ state: "visible" });
  await page.getByTestId("forward").click();
  assert.equal(bridge.seen("simulated Uno: rx 44 4D 53"), false, "a viewer's drive command goes nowhere");
  assert.equal(await page.getByTestId("messages").filter({ hasText: '{"cmd"' }).count(), 0, "no JSON for people");

  // A mistyped PIN, then the right one at once: the quick retry is taken.
  await page.getByTestId("secret").fill("4712");
  await page.getByTestId("secret-ok").click();
  await message(page, "wrong driver PIN");
  await page.getByTestId("sign-in").click();
  await page.getByTestId("secret").fill("4711");
  await page.getByTestId("secret-ok").click();
  await page.getByTestId("role").filter({ hasText: "driver" }).waitFor();
  assert.equal(await page.getByTestId("sign-in").isHidden(), true);
  await page.getByTestId("forward").click();
  await bridge.waitFor("simulated Uno: rx 44 4D 53 1E");
  await page.getByTestId("driver").filter({ hasText: "You drive." }).waitFor();
  // The PIN stays in the page's memory: nothing stored, nothing in the address.
  const kept = await page.evaluate(() => [localStorage.length, sessionStorage.length, document.cookie, location.href]);
  assert.deepEqual(kept.slice(0, 3), [0, 0, ""]);
  assert.equal(kept[3].includes("4711"), false);
});

test("an emergency stop from another page latches until the teacher clears it; the teacher takes control", async () => {
  teacher = await suite.opened.browser.newPage({ viewport: { width: 1280, height: 900 } });
  await teacher.goto(`http://127.0.0.1:${bridge.httpPort}/`);
  await teacher.getByTestId("driver").filter({ hasText: "drives, since" }).waitFor();

  await teacher.getByTestId("emergency").click();  // anyone may stop the robot
  await bridge.waitFor("simulated Uno: rx 45 4D 47");
  await page.getByTestId("latch").waitFor({ state: "visible" });
  await page.getByTestId("forward").click();
  await message(page, "emergency stop is latched");
  // Who stopped it and who may clear it, in words; a driver is not offered a Clear that only the teacher may press.
  await page.getByTestId("latch-by").filter({ hasText: "by client #" }).waitFor();
  await page.getByTestId("latch-who").filter({ hasText: "The teacher may clear it." }).waitFor();
  assert.equal(await page.getByTestId("clear-emergency").isHidden(), true);
  await page.screenshot({ path: path.join(artifacts, "dashboard-latched.png"), fullPage: true });

  await teacher.getByTestId("teacher-sign-in").click();
  await teacher.getByTestId("secret").fill("chalk-and-cheese");
  await teacher.getByTestId("secret-ok").click();
  await teacher.getByTestId("role").filter({ hasText: "teacher" }).waitFor();
  await teacher.getByTestId("clear-emergency").click();
  await page.getByTestId("latch").waitFor({ state: "hidden" });
  await page.getByTestId("speed").fill("40");
  await page.getByTestId("forward").click();
  await bridge.waitFor("simulated Uno: rx 44 4D 53 28");

  await teacher.getByTestId("take").click();
  await bridge.waitFor("simulated Uno: rx 44 53 54");  // the student's drive is stopped first
  await teacher.getByTestId("driver").filter({ hasText: "You drive." }).waitFor();
  await page.getByTestId("driver").filter({ hasText: "drives, since" }).waitFor();
  assert.equal(bridge.seen("chalk-and-cheese") || bridge.seen("4711"), false, "no secret is logged");
});

test("a program on port 2005 waits until a page with the PIN approves it, then drives", async () => {
  const program = net.connect(bridge.nativePort, "127.0.0.1");
  await new Promise((resolve, reject) => { program.once("connect", resolve); program.once("error", reject); });
  const peer = `127.0.0.1:${program.localPort}`;
  const dms = (speed) => Buffer.from([7, 0x52, 0x54, 4, 0x44, 0x4d, 0x53, speed]);  // the 2014 client's moveSpeed
  const waiting = page.getByTestId("pairing").locator("li", { hasText: peer });
  await waiting.waitFor();
  program.write(dms(23));
  await bridge.waitFor("waits to be approved on the robot's dashboard");
  await page.screenshot({ path: path.join(artifacts, "dashboard-pairing.png"), fullPage: true });
  await waiting.getByRole("button", { name: "Approve" }).click();
  await bridge.waitFor("was approved by client");
  await page.getByTestId("pairing").waitFor({ state: "hidden" });
  // The teacher drives (the test before): the teacher releases the robot first.
  await teacher.getByTestId("take").filter({ hasText: "Release" }).click();
  await teacher.getByTestId("driver").filter({ hasText: "Nobody drives." }).waitFor();
  program.write(dms(24));
  await bridge.waitFor("simulated Uno: rx 44 4D 53 18");
  assert.equal(bridge.seen("simulated Uno: rx 44 4D 53 17"), false, "nothing went before the approval");
  // Who is connected, from where, is the teacher's to see.
  await page.getByTestId("clients").filter({ hasText: "the teacher sees who they are" }).waitFor();
  await teacher.getByTestId("clients").locator("tr", { hasText: peer }).waitFor();
  program.destroy();
});
