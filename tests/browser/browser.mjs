// Debian's Chromium, headless, driven by playwright-core: no browser is
// downloaded (CHROMIUM_BIN overrides /usr/bin/chromium).
import { chromium } from "playwright-core";

/** The browser's program (CHROMIUM_BIN, else Debian's). */
export const chromiumProgram = process.env.CHROMIUM_BIN ?? "/usr/bin/chromium";

/**
 * Launches Chromium; `extraArgs` are added to the flags every run needs.
 * `executablePath` runs it another way (on a test network's laptop).
 */
export function launchChromium(extraArgs = [], executablePath = chromiumProgram) {
  return chromium.launch({
    executablePath,
    headless: true,
    // As root in a container: no sandbox. And no background traffic: the
    // machine has no network beyond loopback.
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic", ...extraArgs],
  });
}
