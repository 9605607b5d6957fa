// Debian's Chromium, headless, driven by playwright-core: no browser is
// downloaded (CHROMIUM_BIN overrides /usr/bin/chromium).
import { chromium } from "playwright-core";

/** Launches Chromium; `extraArgs` are added to the flags every run needs. */
export function launchChromium(extraArgs = []) {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_BIN ?? "/usr/bin/chromium",
    headless: true,
    // As root in a container: no sandbox. And no background traffic: the
    // machine has no network beyond loopback.
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
           "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic", ...extraArgs],
  });
}
