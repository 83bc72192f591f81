// Opens the page in headless Chromium (puppeteer-core driving the installed browser, nothing
// downloaded), types each sentence and presses Enter, clicks Classify for the repeated calls, and
// prints what the page showed as JSON: load times, and per sentence the unrounded scores, label
// names and each call's latency.
//
//   node web/run_page.mjs --url http://127.0.0.1:8000/ --sentences sentences.json [--calls 20]
//        [--screenshot page.png] [--chromium /usr/bin/chromium]
import {mkdtempSync, readFileSync, rmSync} from "node:fs";
import {tmpdir} from "node:os";
import {join} from "node:path";
import {parseArgs} from "node:util";
import puppeteer from "puppeteer-core";

// As root in a container (--no-sandbox), without a GPU, and on a network that refuses Chromium's
// own background connections (updates, sync, field trials).
const CHROMIUM_FLAGS = [
  "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
  "--disable-component-update", "--disable-sync",
];
const LOAD_TIMEOUT_MS = 120000;
const TYPED_CHARACTERS = 1000;  // a longer text is pasted: typed key by key it would take minutes

const {values: options} = parseArgs({options: {
  url: {type: "string"},
  sentences: {type: "string"},
  calls: {type: "string", default: "1"},
  screenshot: {type: "string"},
  chromium: {type: "string", default: "/usr/bin/chromium"},
}});
if (!options.url || !options.sentences) {
  console.error("run_page.mjs: --url and --sentences (a JSON list of strings) are required");
  process.exit(2);
}
const sentences = JSON.parse(readFileSync(options.sentences, "utf8"));
const calls = Number(options.calls);

const rowCount = (page) => page.$$eval("#history tr", (rows) => rows.length);

async function classifyRepeatedly(page, text) {
  await page.$eval("#text", (box) => { box.value = ""; });
  if (text.length > TYPED_CHARACTERS) await page.$eval("#text", (box, value) => { box.value = value; }, text);
  else await page.type("#text", text);
  const latencies = [];
  let row = null;
  for (let call = 0; call < calls; call++) {
    const before = await rowCount(page);
    if (call === 0) await page.keyboard.press("Enter");
    else await page.click("#classify");
    await page.waitForFunction(
      (n) => document.querySelectorAll("#history tr").length > n || document.body.dataset.state === "error", {}, before);
    const state = await page.$eval("body", (body) => body.dataset.state);
    if (state === "error") {
      throw new Error(`the page refused to classify: ${await page.$eval("#status", (status) => status.textContent)}`);
    }
    row = await page.$eval("#history tr", (tr) => ({...tr.dataset, shown: tr.cells[1].textContent}));
    latencies.push(Number(row.latencyMs));
  }
  return {text, shown: row.shown, scores: JSON.parse(row.scores), labels: JSON.parse(row.labels), latencies_ms: latencies};
}

const profile = mkdtempSync(join(tmpdir(), "albert-chromium-"));
const browser = await puppeteer.launch({
  executablePath: options.chromium, headless: true, userDataDir: profile, args: CHROMIUM_FLAGS,
  defaultViewport: {width: 1000, height: 800},
});
let exitCode = 0;
try {
  const page = await browser.newPage();
  page.on("pageerror", (error) => console.error(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") console.error(`page console: ${message.text()}`);
  });
  await page.goto(options.url, {waitUntil: "load"});
  await page.waitForSelector("body[data-state=ready], body[data-state=error]", {timeout: LOAD_TIMEOUT_MS});
  const loaded = await page.$eval("body", (body) => ({...body.dataset, status: document.getElementById("status").textContent}));
  if (loaded.state !== "ready") throw new Error(`the page did not load: ${loaded.status}`);
  const results = [];
  for (const text of sentences) results.push(await classifyRepeatedly(page, text));
  if (options.screenshot) await page.screenshot({path: options.screenshot, fullPage: true});
  console.log(JSON.stringify({
    chromium: await browser.version(),
    user_agent: await browser.userAgent(),
    document_ms: Number(loaded.documentMs),
    ready_ms: Number(loaded.readyMs),
    status: loaded.status,
    results,
  }));
} catch (error) {
  console.error(`run_page.mjs: ${error.message}`);
  exitCode = 1;
} finally {
  await browser.close();
  rmSync(profile, {recursive: true, force: true});
}
process.exit(exitCode);
