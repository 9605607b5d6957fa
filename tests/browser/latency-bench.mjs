// Sensor-to-browser latency in a real browser: the real bridge against its
// simulated Uno, the dashboard open in Debian's headless Chromium, and N more
// WebSocket clients of /ws in pages of ten, as that many dashboards would be.
// Every sensor message's latency is the browser's wall clock on arrival minus
// the bridge's receive timestamp `ts` (same machine, same clock). The
// browser's own work counts too: on a small machine, N pages parsing JSON
// are what limits it, and the `dropped` notices show when a page fell behind.
// Figures only.
//
//   node tests/browser/latency-bench.mjs [--clients N] [--rate-hz R] [--seconds S]
import { startBridge } from "./bridge.mjs";
import { launchChromium } from "./browser.mjs";

const option = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const clients = option("--clients", 100);
const rateHz = option("--rate-hz", 100);
const seconds = option("--seconds", 5);
const binary = process.env.FLOCKBRIDGE_BIN ?? "build/bin/flockbridge";

const bridge = await startBridge(binary, ["--simulate", "--sim-rate-hz", String(rateHz), "--log-level", "info",
                                          "--max-clients", String(clients + 8)]);
await bridge.waitFor("robot link up");
// Every page counts as in front: none is slowed down as a background tab.
const browser = await launchChromium(["--disable-background-timer-throttling", "--disable-renderer-backgrounding",
                                      "--disable-backgrounding-occluded-windows"]);
const url = `http://127.0.0.1:${bridge.httpPort}/`;
const dashboard = await browser.newPage();
await dashboard.goto(url);
await dashboard.getByTestId("connection").filter({ hasText: "Bridge connected" }).waitFor();

// N plain WebSocket clients, ten to a page.
const crowd = [];
for (let opened = 0; opened < clients; opened += 10) {
  const page = await browser.newPage();
  await page.goto(url + "no-such-page");  // same origin as the bridge; the 404 page is enough
  await page.evaluate(({ n }) => {
    window.latencies = [];
    window.dropped = 0;
    window.open = 0;
    window.sockets = [];
    for (let i = 0; i < n; i++) {
      const socket = new WebSocket(`ws://${location.host}/ws`);
      socket.onopen = () => { window.open += 1; };
      socket.onmessage = (event) => {
        const message = JSON.parse(event.data);
        if (!window.measuring) return;
        if (message.type === "sensor") {
          window.latencies.push((performance.timeOrigin + performance.now()) / 1000 - message.ts);
        } else if (message.type === "dropped") {
          window.dropped += message.count;
        }
      };
      window.sockets.push(socket);
    }
  }, { n: Math.min(10, clients - opened) });
  await page.waitForFunction((n) => window.open === n, Math.min(10, clients - opened), { timeout: 60000 });
  crowd.push(page);
}

await dashboard.evaluate(() => { window.flockbridge.stats.latencies.length = 0; });
for (const page of crowd) await page.evaluate(() => { window.measuring = true; });
const started = Date.now();
await dashboard.waitForFunction((ms) => Date.now() >= ms, started + seconds * 1000, { timeout: seconds * 1000 + 10000 });
const crowdMs = [];
let dropped = 0;
for (const page of crowd) {
  const seen = await page.evaluate(() => { window.measuring = false; return [window.latencies, window.dropped]; });
  crowdMs.push(...seen[0].map((s) => s * 1000));
  dropped += seen[1];
}
const pageMs = (await dashboard.evaluate(() => window.flockbridge.stats.latencies.slice())).map((s) => s * 1000);

const summary = (name, values) => {
  values.sort((a, b) => a - b);
  const at = (q) => values[Math.min(values.length - 1, Math.floor(q * values.length))].toFixed(2);
  console.log(`${name.padEnd(34)} messages ${String(values.length).padStart(7)}  latency p50 ${at(0.5).padStart(6)} ms` +
              `  p99 ${at(0.99).padStart(6)} ms  max ${values[values.length - 1].toFixed(2).padStart(7)} ms`);
};
console.log(`flockbridge browser latency: the dashboard and ${clients} more WebSockets in headless Chromium, ` +
            `${rateHz} sensor packets/s, ${seconds} s`);
summary("the dashboard page", pageMs);
summary(`the ${clients} other WebSockets`, crowdMs);
console.log(`${"".padEnd(34)} the bridge told them they lost ${dropped} sensor messages (pages that fell behind)`);
const status = await import("node:fs").then((fs) => fs.readFileSync(`/proc/${bridge.process.pid}/status`, "utf8"));
console.log(`${"".padEnd(34)} bridge ${/VmHWM:\s*(.*)/.exec(status)[1]} peak RSS`);
await browser.close();
await bridge.stop();
