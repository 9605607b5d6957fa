// The dashboard over TLS: the bridge with http.tls_cert and http.tls_key (a
// certificate made for the test with openssl), read by Node's https client,
// which checks the certificate against it, and by Debian's headless
// Chromium, whose page then speaks to the bridge over wss://, as does a
// Foxglove client to the live view's port. Plain HTTP on that port gets
// nothing. Every wait is for an event.
//
//   FLOCKBRIDGE_BIN=build/bin/flockbridge node --test tests/browser/tls.test.mjs
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import { tmpdir } from "node:os";
import path from "node:path";
import { startBridge } from "./bridge.mjs";
import { launchChromium } from "./browser.mjs";
import { artifacts, binary, closeDashboard } from "./dashboard.mjs";

const dir = mkdtempSync(path.join(tmpdir(), "flockbridge-tls-"));
const cert = path.join(dir, "cert.pem");
const key = path.join(dir, "key.pem");
execFileSync("openssl", ["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                         "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=localhost",
                         "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"], { stdio: "ignore" });

const opened = {};
before(async () => {
  opened.bridge = await startBridge(binary, ["--simulate", "--sim-rate-hz", "20", "--http-tls-cert", cert,
                                             "--http-tls-key", key, "--foxglove"]);
  await opened.bridge.waitFor("robot link up");
});
after(() => closeDashboard(opened));

/** GET / with `client` (http or https); resolves with { status, body } or rejects. */
function get(client, options) {
  return new Promise((resolve, reject) => {
    const request = client.get({ host: "127.0.0.1", port: opened.bridge.httpPort, path: "/", timeout: 5000, ...options },
                               (response) => {
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk) => { body += chunk; });
      response.on("end", () => resolve({ status: response.statusCode, body }));
    });
    request.on("timeout", () => request.destroy(new Error("no answer")));
    request.on("error", reject);
  });
}

test("the bridge says https and serves the page over TLS with its certificate", async () => {
  assert.ok(opened.bridge.seen("dashboard on https://"), "the start-up line says https");
  const page = await get(https, { ca: readFileSync(cert), servername: "localhost" });
  assert.equal(page.status, 200);
  assert.match(page.body, /flockbridge dashboard/);
  // A client that does not trust the certificate is refused by its own TLS check.
  await assert.rejects(get(https, {}), /self[- ]signed|unable to verify/i);
});

/** A WebSocket upgrade of /ws over TLS from a page of `origin`: resolves with whether the bridge switched protocols. */
function upgrade(origin) {
  return new Promise((resolve, reject) => {
    const request = https.request({
      host: "127.0.0.1", port: opened.bridge.httpPort, path: "/ws", ca: readFileSync(cert), servername: "localhost",
      timeout: 5000,
      headers: { Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13",
                 "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", Origin: origin },
    });
    request.on("upgrade", (response, socket) => { socket.destroy(); resolve(true); });
    request.on("response", (response) => { response.resume(); resolve(false); });
    request.on("timeout", () => request.destroy(new Error("no answer")));
    request.on("error", (error) => (error.code === "ECONNRESET" ? resolve(false) : reject(error)));
    request.end();
  });
}

test("over TLS too, a page from elsewhere may not open the WebSocket, the robot's own may", async () => {
  assert.equal(await upgrade("https://evil.example"), false);
  await opened.bridge.waitFor("its page comes from https://evil.example, not from this robot");
  assert.equal(await upgrade(`https://127.0.0.1:${opened.bridge.httpPort}`), true);
});

test("plain HTTP on the TLS port gets no page", async () => {
  const answer = await get(http, {}).catch((error) => ({ error }));
  assert.ok(answer.error || answer.status !== 200, "no page over plain HTTP");
});

test("Chromium opens the page over https and it speaks to the bridge over wss", async () => {
  opened.browser = await launchChromium();
  const page = await opened.browser.newPage({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 900 } });
  page.on("pageerror", (error) => { throw error; });
  await page.goto(`https://127.0.0.1:${opened.bridge.httpPort}/`);
  await page.getByTestId("connection").filter({ hasText: "Bridge connected" }).waitFor();
  await page.getByTestId("link").filter({ hasText: "Robot connected" }).waitFor();
  // Its first WebSocket opened: over TLS a browser must not be led into
  // HTTP/2, where the bridge does not take /ws.
  assert.equal(await page.locator('[data-testid="messages"] li', { hasText: "Lost the bridge" }).count(), 0);
  assert.equal(await page.evaluate(() => window.flockbridge.stats.connects), 1);
  await page.waitForFunction(() => Number(document.querySelector('[data-testid="seq"]').textContent) > 5);
  await page.getByTestId("forward").click();
  await opened.bridge.waitFor("simulated Uno: rx 44 4D 53 1E");
  await page.screenshot({ path: path.join(artifacts, "dashboard-tls.png") });
});

test("the Foxglove live view is served over wss with the same certificate", async () => {
  assert.ok(opened.bridge.foxglovePort, "the start-up line names the live view");
  assert.ok(opened.bridge.seen("Foxglove live view on wss://"), "the start-up line says wss");
  const page = await opened.browser.newPage({ ignoreHTTPSErrors: true });
  await page.goto(`https://127.0.0.1:${opened.bridge.httpPort}/`);
  const first = await page.evaluate((url) => new Promise((resolve, reject) => {
    const socket = new WebSocket(url, ["foxglove.websocket.v1"]);
    socket.onmessage = (event) => { resolve({ protocol: socket.protocol, message: JSON.parse(event.data) }); socket.close(); };
    socket.onerror = () => reject(new Error("the live view's WebSocket failed"));
  }), `wss://127.0.0.1:${opened.bridge.foxglovePort}/`);
  assert.equal(first.protocol, "foxglove.websocket.v1");
  assert.equal(first.message.op, "serverInfo");
});
