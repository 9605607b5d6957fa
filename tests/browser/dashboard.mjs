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
  /**
   * Waits until the counter `testid` has moved on by `count`. A counter that
   * shows no number yet ("–": no reading has come since the page opened) is
   * waited for first: NaN would never move on.
   */
  const counterLater = async (testid, count) => {
    await page.waitForFunction(
      (id) => Number.isFinite(Number(document.querySelector(`[data-testid="${id}"]`).textContent)), testid);
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

/**
 * The words of the page that a line break cuts in two, as a person would
 * read them ("Sto" and "p"): every visible word of two letters or more,
 * split where a line may rightly break (spaces, hyphens, slashes). Words
 * longer than 30 letters (a path, a session number) may break to fit a
 * phone, and so may what is shown to break anywhere (raw JSON). Returns the
 * broken words.
 */
export async function brokenWords(page) {
  return page.evaluate(() => {
    const broken = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const element = node.parentElement;
      if (!element || !element.checkVisibility()) continue;
      // Raw data shown as sent (a reading's JSON) breaks anywhere on purpose.
      if (getComputedStyle(element).overflowWrap === "anywhere") continue;
      const words = /(?<![^\s\-/])[^\s\-/]{2,30}(?![^\s\-/])/g;
      for (let m = words.exec(node.textContent); m; m = words.exec(node.textContent)) {
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const lines = new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.bottom)));
        if (lines.size > 1) broken.push(m[0]);
      }
    }
    return broken;
  });
}

/**
 * Checks the page as a person sees it: at the desktop's width no column of
 * the grid is left empty in the first row (a family without some panel
 * leaves no hole); at a phone's 390 px nothing is wider than the screen.
 * Saves a screenshot of each as `<name>.png` and `<name>-phone.png`, and
 * puts the desktop's size back.
 */
export async function checkLayout(page, name) {
  const holes = await page.evaluate(() => {
    const panels = [...document.querySelectorAll("main > .panel")].filter((p) => p.offsetParent !== null);
    const columns = new Set(panels.map((p) => Math.round(p.getBoundingClientRect().left))).size;
    const top = Math.min(...panels.map((p) => p.getBoundingClientRect().top));
    const first = panels.filter((p) => Math.round(p.getBoundingClientRect().top) === Math.round(top)).length;
    return columns - first;
  });
  assert.equal(holes, 0, "a column of the first row is empty");
  assert.deepEqual(await brokenWords(page), [], "words cut in two by a line's end at the desktop's width");
  await page.screenshot({ path: `${artifacts}/${name}.png`, fullPage: true });
  const size = page.viewportSize();
  await page.setViewportSize({ width: 390, height: 844 });
  const wide = await page.evaluate(() => {
    const limit = window.innerWidth;
    const over = [...document.querySelectorAll("body *")].filter((e) => {
      const box = e.getBoundingClientRect();
      return e.offsetParent !== null && box.width > 0 && box.right > limit + 1;
    });
    return { page: document.documentElement.scrollWidth - limit, first: over[0]?.outerHTML.slice(0, 80) ?? "" };
  });
  assert.equal(wide.first, "", "an element reaches past a phone's screen");
  assert.ok(wide.page <= 0, `the page is ${wide.page} px wider than a phone's screen`);
  assert.deepEqual(await brokenWords(page), [], "words cut in two by a line's end on a phone");
  await page.screenshot({ path: `${artifacts}/${name}-phone.png`, fullPage: true });
  await page.setViewportSize(size);
}

/**
 * Presses the drive button `testid` with the mouse and holds it, as a
 * person holds it to drive; returns the release.
 */
export async function holdButton(page, testid) {
  const box = await page.getByTestId(testid).boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.mouse.down();
  return () => page.mouse.up();
}

/** Holds the key `key` down, as a person holds an arrow key to drive; returns the release. */
export async function holdKey(page, key) {
  await page.locator("body").focus();
  await page.keyboard.down(key);
  return () => page.keyboard.up(key);
}
