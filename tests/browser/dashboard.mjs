// What the dashboard's browser tests share: the real bridge started with a
// family's options, its page open in headless Chromium once the robot link
// is up, and reading the page by its test ids. Every wait is for an event.
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { after, before } from "node:test";
import { startBridge } from "./bridge.mjs";
import { launchChromium } from "./browser.mjs";

/** The bridge under test, and where screenshots go. */
export const binary = process.env.FLOCKBRIDGE_BIN ?? "build/bin/flockbridge";
export const artifacts = process.env.FLOCKBRIDGE_ARTIFACTS ?? "build/test-artifacts";
mkdirSync(artifacts, { recursive: true });

/** The bridge (`binary` with `args`) and its dashboard in Chromium: { bridge, browser, page }. */
export async function openDashboard(binary, args) {
  const bridge = await startBridge(binary, args);
  await bridge.waitFor("robot link up");
  const browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on("pageerror", (error) => { throw error; });
  await page.goto(`http://127.0.0.1:${bridge.httpPort}/`);
  return { bridge, browser, page };
}

/** Closes the browser, then stops the bridge, which must exit 0 on SIGTERM. */
export async function closeDashboard(opened) {
  await opened?.browser?.close();
  if (opened?.bridge) assert.equal(await opened.bridge.stop(), 0, "the bridge must exit 0 on SIGTERM");
}

/** Reads `page` by test id: text, number, and waiting for a counter to move on. */
export function pageReader(page) {
  const text = (testid) => page.getByTestId(testid).textContent();
  const number = async (testid) => Number(await text(testid));
  /** Waits until the counter `testid` has moved on by `count`. */
  const counterLater = async (testid, count) => {
    const from = await number(testid);
    await page.waitForFunction(
      ([id, start, n]) => Number(document.querySelector(`[data-testid="${id}"]`).textContent) >= start + n,
      [testid, from, count]);
  };
  return { text, number, counterLater };
}

/**
 * The dashboard of a bridge started with `args`, opened before a test file's
 * tests and closed after them. `expose` is given { bridge, page, text,
 * number, counterLater } once it is open. Returns the suite: its `opened` is
 * what is closed at the end (a test that starts another bridge puts it there).
 */
export function dashboardSuite(args, expose) {
  const suite = { opened: null };
  before(async () => {
    suite.opened = await openDashboard(binary, args);
    expose({ bridge: suite.opened.bridge, page: suite.opened.page, ...pageReader(suite.opened.page) });
  });
  after(() => closeDashboard(suite.opened));
  return suite;
}
